//! Model registry: names, schemas and construction from a table.
//!
//! Regression models (`logistic`, `linear`, `robust`, `poisson`) read the response column and
//! the feature columns through [`Design::from_table`] (intercept and standardisation as the
//! [`DesignSpec`] says). `gmm` reads one column: the response column if present, else `x`, else
//! the only column. `gaussian` reads every feature column (all columns except the response when
//! no feature list is given) as the coordinates of one observation; it ignores intercept and
//! standardisation. Settings a model reads are marked used; the caller checks the rest.

use crate::data::{Design, DesignSpec, Table};
use crate::error::Error;
use crate::model::gaussian::{self, GaussianMean};
use crate::model::glm::{self, GaussianNoise, Glm, Logistic, Poisson, StudentT};
use crate::model::gmm::{self, Gmm};
use crate::model::linear::{self, LinearUnknownNoise};
use crate::model::pmf;
use crate::model::prior::{Prior, P_PRIOR as PRIOR, P_PRIOR_SCALE as PRIOR_SCALE};
use crate::model::reparam::{ReparamMode, P_REPARAM as REPARAM};
use crate::model::series::{SeriesModel, SsmKind};
use crate::model::DataModel;
use crate::schema::{ModelInfo, ParamSpec};
use crate::settings::Settings;
use crate::ssm;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Every model, in display order. Each parameter is the declaration next to the code that reads
/// it (`model::prior`, `model::linear`, ..., `ssm`), so its default and range are written once.
pub static MODELS: &[ModelInfo] = &[
    ModelInfo {
        name: "logistic",
        description: "Logistic regression, response 0/1",
        regression: true,
        params: &[PRIOR, PRIOR_SCALE, REPARAM],
    },
    ModelInfo {
        name: "linear",
        description: "Linear regression, Gaussian noise (known sd, or Gamma-prior precision `log_tau`)",
        regression: true,
        params: &[
            linear::P_NOISE,
            linear::P_NOISE_SD,
            linear::P_NOISE_PRIOR_SHAPE,
            linear::P_NOISE_PRIOR_RATE,
            PRIOR,
            PRIOR_SCALE,
            REPARAM,
        ],
    },
    ModelInfo {
        name: "robust",
        description: "Robust linear regression, Student-t noise with known scale",
        regression: true,
        params: &[glm::P_NU, glm::P_T_SCALE, PRIOR, PRIOR_SCALE, REPARAM],
    },
    ModelInfo {
        name: "poisson",
        description: "Poisson regression with log link, response a count",
        regression: true,
        params: &[PRIOR, PRIOR_SCALE, REPARAM],
    },
    ModelInfo {
        name: "gmm",
        description: "Welling & Teh two-parameter Gaussian mixture (one column, bimodal posterior)",
        regression: false,
        params: &[
            gmm::P_PRIOR_VAR_1,
            gmm::P_PRIOR_VAR_2,
            gmm::P_NOISE_VAR,
            gmm::P_TEMPERATURE,
        ],
    },
    ModelInfo {
        name: "gaussian",
        description: "Mean of dense Gaussian observations with known correlated covariance",
        regression: false,
        // No `reparam`: the posterior of the mean is Gaussian already, and the builder never
        // read the key (it was declared here, shown in the help and the browser's checkbox,
        // and refused as unknown).
        params: &[gaussian::P_CORRELATION, gaussian::P_RHO, gaussian::P_SD, PRIOR, PRIOR_SCALE],
    },
    ModelInfo {
        name: "pmf",
        description: "Bayesian probabilistic matrix factorisation: columns user, item (0-based ids) and rating",
        regression: false,
        params: &[
            pmf::P_RANK,
            pmf::P_PRECISION,
            pmf::P_PRIOR_PRECISION,
            pmf::P_CENTER,
        ],
    },
    ModelInfo {
        name: "lgssm",
        description: "Time series: linear Gaussian state-space model x = φx₋₁ + σε, y = x + τη (one column)",
        regression: false,
        params: SERIES_PRIOR_PARAMS,
    },
    ModelInfo {
        name: "sv",
        description: "Time series: stochastic volatility x = φx₋₁ + σε, y ~ N(0, eˣτ²) (one column)",
        regression: false,
        params: SERIES_PRIOR_PARAMS,
    },
    ModelInfo {
        name: "garch",
        description: "Time series: GARCH(1,1) latent x ~ N(0, σₜ²) observed with noise τ (one column)",
        regression: false,
        params: &ssm::INITIAL_LAW_PARAMS,
    },
];

/// `lgssm` and `sv`: the initial law ([`ssm::INITIAL_LAW_PARAMS`]) and the prior
/// (default φ ~ U(−1, 1), σ ~ HalfNormal(1), τ ~ HalfNormal(2); or the thesis' with
/// `prior=thesis`: [`ssm::SCALE_PRIOR_PARAMS`]).
const SERIES_PRIOR_PARAMS: &[ParamSpec] = &[
    ssm::INITIAL_LAW_PARAMS[0],
    ssm::INITIAL_LAW_PARAMS[1],
    ssm::SCALE_PRIOR_PARAMS[0],
    ssm::SCALE_PRIOR_PARAMS[1],
    ssm::SCALE_PRIOR_PARAMS[2],
    ssm::SCALE_PRIOR_PARAMS[3],
    ssm::SCALE_PRIOR_PARAMS[4],
    ssm::SCALE_PRIOR_PARAMS[5],
];

/// Error if `key` was given: it has no effect in the chosen configuration.
fn reject(settings: &Settings, key: &str, why: &str) -> Result<(), Error> {
    if settings.contains(key) {
        Err(Error::setting(key, alloc::format!("has no effect {why}")))
    } else {
        Ok(())
    }
}

/// The columns a regression reads: the response, then the features.
fn regression_columns(table: &Table, spec: &DesignSpec) -> Vec<String> {
    let mut cols = alloc::vec![spec.response.clone()];
    match &spec.features {
        Some(f) => cols.extend(f.iter().cloned()),
        None => cols.extend(table.names.iter().filter(|c| **c != spec.response).cloned()),
    }
    cols
}

/// Every value of the named columns is finite (errors name the 1-based row and the column).
fn check_finite(table: &Table, cols: &[String]) -> Result<(), Error> {
    for (c, v) in cols.iter().zip(table.columns_named(cols)?) {
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(Error::InvalidData {
                row: Some(i + 1),
                column: Some(c.clone()),
                msg: String::from("value is not finite"),
            });
        }
    }
    Ok(())
}

/// A regression design with validated, finite data and at least one parameter.
pub fn regression_design(table: &Table, spec: &DesignSpec) -> Result<Design, Error> {
    regression_design_on(table, spec, None)
}

/// [`regression_design`], the design's rows written on `parallel`'s threads when given.
pub fn regression_design_on(
    table: &Table,
    spec: &DesignSpec,
    parallel: Option<&dyn crate::parallel::ParallelFor>,
) -> Result<Design, Error> {
    // Finiteness is checked while the design's rows are written; the table's own check runs
    // only when that finds a non-finite value or the design cannot be built, so that its
    // error (the first such row of the first such column) comes first, as before.
    let design = match Design::from_table_finite_on(table, spec, parallel) {
        Ok((design, true)) => design,
        Ok((design, false)) => {
            check_finite(table, &regression_columns(table, spec))?;
            design
        }
        Err(e) => {
            check_finite(table, &regression_columns(table, spec))?;
            return Err(e);
        }
    };
    if design.d == 0 {
        return Err(Error::data(
            "the model has no parameters: no feature columns and no intercept",
        ));
    }
    Ok(design)
}

/// Every response is 0 or 1.
fn check_binary(design: &Design, response: &str) -> Result<(), Error> {
    if let Some(i) = design.y.iter().position(|&y| y != 0.0 && y != 1.0) {
        return Err(Error::InvalidData {
            row: Some(i + 1),
            column: Some(response.into()),
            msg: alloc::format!(
                "logistic response must be 0 or 1, got {}",
                crate::settings::number(design.y.get(i).copied().unwrap_or(f64::NAN))
            ),
        });
    }
    Ok(())
}

/// Every response is a non-negative whole number.
fn check_counts(design: &Design, response: &str) -> Result<(), Error> {
    if let Some(i) = design
        .y
        .iter()
        .position(|&y| !(y >= 0.0 && y == crate::math::floor(y)))
    {
        return Err(Error::InvalidData {
            row: Some(i + 1),
            column: Some(response.into()),
            msg: alloc::format!(
                "poisson response must be a non-negative whole number, got {}",
                crate::settings::number(design.y.get(i).copied().unwrap_or(f64::NAN))
            ),
        });
    }
    Ok(())
}

/// The column `gmm` reads: the response column if present, else `x`, else the only column.
pub fn gmm_column<'a>(table: &'a Table, spec: &DesignSpec) -> Result<(&'a str, &'a [f64]), Error> {
    let j = table
        .column_index(&spec.response)
        .or_else(|| table.column_index("x"))
        .or(if table.names.len() == 1 {
            Some(0)
        } else {
            None
        });
    match j {
        Some(j) => match (table.names.get(j), table.columns.get(j)) {
            (Some(name), Some(col)) => Ok((name.as_str(), col.as_slice())),
            _ => Err(Error::data("the table has no columns")),
        },
        // No response named: say so, rather than "no column \"\"".
        None if spec.response.is_empty() => Err(Error::setting(
            "response",
            alloc::format!(
                "required for model `gmm` on this data: it reads one column, and the data has \
                 {} columns and none named `x`",
                table.names.len()
            ),
        )),
        None => Err(Error::InvalidData {
            row: None,
            column: Some(spec.response.clone()),
            msg: String::from("no such column in the data (gmm reads the response column or `x`)"),
        }),
    }
}

/// The `gaussian` model as its concrete type (for its closed-form
/// [`posterior`](GaussianMean::posterior)): the feature columns (all columns except the response
/// when no feature list is given) are the coordinates; settings `correlation`, `rho`, `sd`,
/// `prior`, `prior_scale`.
pub fn gaussian_from_table(
    table: &Table,
    design: &DesignSpec,
    settings: &Settings,
) -> Result<GaussianMean, Error> {
    let prior = Prior::from_settings(settings)?;
    let corr = gaussian::correlation_from_settings(settings)?;
    let rho = gaussian::P_RHO.real(settings)?;
    let sd = gaussian::P_SD.real(settings)?;
    let cols = design.feature_names(table);
    if cols.is_empty() {
        return Err(Error::data("the gaussian model needs at least one column"));
    }
    let mut seen = alloc::collections::BTreeSet::new();
    for c in &cols {
        if !seen.insert(c.as_str()) {
            return Err(Error::InvalidData {
                row: None,
                column: Some(c.clone()),
                msg: String::from("is listed twice"),
            });
        }
    }
    check_finite(table, &cols)?;
    let dim = cols.len();
    let cov = gaussian::covariance(dim, corr, rho, sd)?;
    let data = table.columns_named(&cols)?;
    let n = table.nrows();
    let mut y = Vec::with_capacity(n * dim);
    for i in 0..n {
        for c in &data {
            y.push(c.get(i).copied().unwrap_or(f64::NAN));
        }
    }
    GaussianMean::new(y, dim, cols, cov, prior)
}

/// The `pmf` model: columns `user`, `item` (0-based whole-number ids) and the rating column
/// (the response column when given, else `rating`); settings `rank`, `precision`,
/// `prior_precision`, `center`.
pub fn pmf_from_table(
    table: &Table,
    design: &DesignSpec,
    settings: &Settings,
) -> Result<crate::model::Pmf, Error> {
    let rank = pmf::P_RANK.int(settings)?;
    let precision = pmf::P_PRECISION.real(settings)?;
    let prior = pmf::P_PRIOR_PRECISION.real(settings)?;
    let center = pmf::P_CENTER.flag(settings)?;
    let rating_col =
        if !design.response.is_empty() && table.column_index(&design.response).is_some() {
            design.response.clone()
        } else {
            String::from("rating")
        };
    let cols = [String::from("user"), String::from("item"), rating_col];
    for c in &cols {
        if table.column_index(c).is_none() {
            return Err(Error::InvalidData {
                row: None,
                column: Some(c.clone()),
                msg: String::from("no such column in the data (pmf reads user, item, rating)"),
            });
        }
    }
    check_finite(table, &cols)?;
    crate::model::Pmf::from_columns(
        table.column(&cols[0])?,
        table.column(&cols[1])?,
        table.column(&cols[2])?,
        rank,
        precision,
        prior,
        center,
    )
}

/// Apply the `reparam` setting to a GLM ([`Glm::whiten`] under `auto`), its passes on
/// `parallel` when given.
fn reparametrise<F: crate::model::GlmFamily>(
    mut glm: Glm<F>,
    mode: ReparamMode,
    parallel: &Option<Arc<dyn crate::parallel::ParallelFor>>,
) -> Glm<F> {
    if let Some(p) = parallel {
        glm.set_parallel(p.clone());
    }
    match mode {
        ReparamMode::Auto => glm.whiten(),
        ReparamMode::None => glm.not_whitened("reparam=none"),
    }
}

/// Whether model `name` reads a regression design ([`build_from_design`] builds it from one).
pub fn takes_design(name: &str) -> bool {
    matches!(name, "logistic" | "poisson" | "linear" | "robust")
}

/// Model `name` (a regression model: [`takes_design`]) from a design already made from the
/// data, as [`build`] makes it from a table whose design this is: the same model, settings
/// read in the same order, the same errors but for the table's own (a reader that writes the
/// design itself, as the CLI's CSV reader, finds those from the column names with
/// [`DesignSpec::plan`]). Every value must be finite (errors name the first other one:
/// the response's, then each feature's in order, as [`build`] does); `response` names the
/// response in errors.
pub fn build_from_design(
    name: &str,
    design: Design,
    response: &str,
    settings: &Settings,
    parallel: Option<Arc<dyn crate::parallel::ParallelFor>>,
) -> Result<Arc<dyn DataModel>, Error> {
    if !takes_design(name) {
        return Err(Error::Unknown {
            what: "regression model",
            name: name.into(),
        });
    }
    regression(
        name,
        || {
            check_design(&design, response, parallel.as_deref())?;
            Ok(design)
        },
        response,
        settings,
        parallel.clone(),
    )
}

/// A design made outside [`Design::from_table`] is whole (`x` is n × d, `y` has n values),
/// has at least one row and one parameter, and every value is finite (the first other one
/// named: the response's, then each column of `x` in order, as a scan of the table would).
fn check_design(
    design: &Design,
    response: &str,
    parallel: Option<&dyn crate::parallel::ParallelFor>,
) -> Result<(), Error> {
    let (n, d) = (design.n, design.d);
    Error::check_dim("design rows (y)", n, design.y.len())?;
    Error::check_dim("design columns (names)", d, design.names.len())?;
    Error::check_dim("design values (x)", n.saturating_mul(d), design.x.len())?;
    if n == 0 {
        return Err(Error::data("the data set has no rows"));
    }
    if d == 0 {
        return Err(Error::data(
            "the model has no parameters: no feature columns and no intercept",
        ));
    }
    let not_finite = |row: usize, column: &str| Error::InvalidData {
        row: Some(row + 1),
        column: Some(column.into()),
        msg: String::from("value is not finite"),
    };
    if let Some(i) = design.y.iter().position(|v| !v.is_finite()) {
        return Err(not_finite(i, response));
    }
    // One pass over x in chunks of rows (on `parallel`'s threads when given); the ordered
    // search only when it finds a value that is not finite.
    let chunk = crate::parallel::PASS_CHUNK * d;
    let chunks = design.x.len().div_ceil(chunk);
    let finite = core::sync::atomic::AtomicBool::new(true);
    let job = |k: usize| {
        let part = &design.x[k * chunk..((k + 1) * chunk).min(design.x.len())];
        if !part.iter().fold(true, |ok, v| ok & v.is_finite()) {
            finite.store(false, core::sync::atomic::Ordering::Relaxed);
        }
    };
    match parallel {
        Some(p) if chunks > 1 => p.for_each(chunks, &job),
        _ => (0..chunks).for_each(job),
    }
    if finite.into_inner() {
        return Ok(());
    }
    for (j, name) in design.names.iter().enumerate() {
        if let Some(i) = (0..n).find(|&i| !design.x[i * d + j].is_finite()) {
            return Err(not_finite(i, name));
        }
    }
    Ok(())
}

/// The regression models of [`build`] and [`build_from_design`]: `make_design` is called where
/// [`build`] makes the design from the table (after the settings read before it, before the
/// ones read after), so both give the same errors in the same order.
fn regression(
    name: &str,
    make_design: impl FnOnce() -> Result<Design, Error>,
    response: &str,
    settings: &Settings,
    parallel: Option<Arc<dyn crate::parallel::ParallelFor>>,
) -> Result<Arc<dyn DataModel>, Error> {
    match name {
        "logistic" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let d = make_design()?;
            check_binary(&d, response)?;
            Ok(Arc::new(reparametrise(
                Glm::new(d, Logistic, prior),
                mode,
                &parallel,
            )))
        }
        "poisson" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let d = make_design()?;
            check_counts(&d, response)?;
            Ok(Arc::new(reparametrise(
                Glm::new(d, Poisson, prior),
                mode,
                &parallel,
            )))
        }
        "linear" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let noise = linear::P_NOISE.choice(settings)?;
            let d = make_design()?;
            if noise == "gamma" {
                reject(
                    settings,
                    linear::P_NOISE_SD.key,
                    "with noise=gamma (the noise is sampled)",
                )?;
                let a = linear::P_NOISE_PRIOR_SHAPE.real(settings)?;
                let b = linear::P_NOISE_PRIOR_RATE.real(settings)?;
                let m = LinearUnknownNoise::new(d, prior, a, b)?;
                Ok(Arc::new(match mode {
                    ReparamMode::Auto => m.whiten(),
                    ReparamMode::None => m.not_whitened("reparam=none"),
                }))
            } else {
                reject(
                    settings,
                    linear::P_NOISE_PRIOR_SHAPE.key,
                    "with noise=known",
                )?;
                reject(settings, linear::P_NOISE_PRIOR_RATE.key, "with noise=known")?;
                let sd = linear::P_NOISE_SD.real(settings)?;
                Ok(Arc::new(reparametrise(
                    Glm::new(d, GaussianNoise { sd }, prior),
                    mode,
                    &parallel,
                )))
            }
        }
        "robust" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let nu = glm::P_NU.real(settings)?;
            let scale = glm::P_T_SCALE.real(settings)?;
            let d = make_design()?;
            Ok(Arc::new(reparametrise(
                Glm::new(d, StudentT { nu, scale }, prior),
                mode,
                &parallel,
            )))
        }
        other => Err(Error::Unknown {
            what: "model",
            name: other.into(),
        }),
    }
}

/// Build model `name` from `table`; model options come from `settings` (keys read are marked
/// used). Time-series models (`lgssm`, `sv`, `garch`) read one column (see
/// [`SeriesModel::from_table`]). Unknown names give [`Error::Unknown`]. A GLM's whitening
/// (and later its full-data passes) run on `parallel` when given.
pub fn build(
    name: &str,
    table: &Table,
    design: &DesignSpec,
    settings: &Settings,
    parallel: Option<Arc<dyn crate::parallel::ParallelFor>>,
) -> Result<Arc<dyn DataModel>, Error> {
    match name {
        "logistic" | "poisson" | "linear" | "robust" => regression(
            name,
            || regression_design_on(table, design, parallel.as_deref()),
            &design.response,
            settings,
            parallel.clone(),
        ),
        "gmm" => {
            let v1 = gmm::P_PRIOR_VAR_1.real(settings)?;
            let v2 = gmm::P_PRIOR_VAR_2.real(settings)?;
            let nv = gmm::P_NOISE_VAR.real(settings)?;
            let k = gmm::P_TEMPERATURE.real(settings)?;
            let (col, x) = gmm_column(table, design)?;
            if let Some(i) = x.iter().position(|v| !v.is_finite()) {
                return Err(Error::InvalidData {
                    row: Some(i + 1),
                    column: Some(col.into()),
                    msg: String::from("value is not finite"),
                });
            }
            Ok(Arc::new(Gmm::new(x.to_vec(), [v1, v2], nv, k)?))
        }
        "gaussian" => Ok(Arc::new(gaussian_from_table(table, design, settings)?)),
        "pmf" => Ok(Arc::new(pmf_from_table(table, design, settings)?)),
        "lgssm" | "sv" | "garch" => {
            let kind = SsmKind::from_settings(name, settings)?;
            Ok(Arc::new(SeriesModel::from_table(
                kind,
                table,
                &design.response,
            )?))
        }
        other => Err(Error::Unknown {
            what: "model",
            name: other.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(features: Option<&[&str]>) -> DesignSpec {
        DesignSpec {
            response: "y".into(),
            features: features.map(|f| f.iter().map(|s| String::from(*s)).collect()),
            intercept: true,
            standardize: false,
        }
    }

    /// A table built without `Table::new` (its fields are public), so values are not checked.
    fn table(y: Vec<f64>, a: Vec<f64>, b: Vec<f64>) -> Table {
        Table {
            names: alloc::vec!["a".into(), "y".into(), "b".into()],
            columns: alloc::vec![a, y, b],
        }
    }

    fn located(r: Result<Design, Error>) -> (Option<usize>, Option<String>, String) {
        match r {
            Err(Error::InvalidData { row, column, msg }) => (row, column, msg),
            other => panic!("expected a data error, got {other:?}"),
        }
    }

    /// The design's rows check finiteness as they are written; the error is the table scan's:
    /// the response first, then the features in order, each at its first non-finite row, and
    /// before the design's own errors.
    #[test]
    fn non_finite_values_are_named_as_by_a_scan_of_the_table() {
        let ok = || alloc::vec![0.5, 1.5, -2.0, 3.0, 0.25];
        let d = regression_design(
            &table(alloc::vec![1.0, 0.0, 1.0, 1.0, 0.0], ok(), ok()),
            &spec(None),
        )
        .unwrap();
        assert_eq!((d.n, d.d), (5, 3));
        assert_eq!(d.row(2), &[1.0, -2.0, -2.0]);

        let mut b = ok();
        b[3] = f64::NAN;
        let mut a = ok();
        a[4] = f64::INFINITY;
        assert_eq!(
            located(regression_design(
                &table(alloc::vec![1.0; 5], a.clone(), b.clone()),
                &spec(None)
            )),
            (Some(5), Some("a".into()), "value is not finite".into())
        );
        // Features listed b first: b's row comes first.
        assert_eq!(
            located(regression_design(
                &table(alloc::vec![1.0; 5], a.clone(), b.clone()),
                &spec(Some(&["b", "a"]))
            )),
            (Some(4), Some("b".into()), "value is not finite".into())
        );
        // The response before any feature.
        let mut y = alloc::vec![1.0; 5];
        y[4] = f64::NEG_INFINITY;
        assert_eq!(
            located(regression_design(
                &table(y.clone(), a.clone(), b.clone()),
                &spec(None)
            )),
            (Some(5), Some("y".into()), "value is not finite".into())
        );
        // Only the response: the features are fine.
        assert_eq!(
            located(regression_design(&table(y, ok(), ok()), &spec(None))),
            (Some(5), Some("y".into()), "value is not finite".into())
        );
        // A non-finite value is named before a feature listed twice.
        assert_eq!(
            located(regression_design(
                &table(alloc::vec![1.0; 5], ok(), b),
                &spec(Some(&["b", "b"]))
            )),
            (Some(4), Some("b".into()), "value is not finite".into())
        );
        // Without one, the design's own error.
        assert_eq!(
            located(regression_design(
                &table(alloc::vec![1.0; 5], ok(), ok()),
                &spec(Some(&["b", "b"]))
            ))
            .2,
            "is listed twice as a feature"
        );
        // A column the spec does not read may hold anything.
        let d =
            regression_design(&table(alloc::vec![1.0; 5], a, ok()), &spec(Some(&["b"]))).unwrap();
        assert_eq!(d.d, 2);
    }

    /// `DesignSpec::plan` from the names alone gives `Design::from_table`'s errors, in its
    /// order, and its columns (the design's names, and the table columns its rows are read
    /// from).
    #[test]
    fn plans_from_names_are_the_designs_of_tables() {
        let ok = || alloc::vec![0.5, 1.5, -2.0, 3.0, 0.25];
        let mut t = table(alloc::vec![1.0, 0.0, 1.0, 1.0, 0.0], ok(), ok());
        t.names.push("intercept".into());
        t.columns.push(ok());
        let specs = [
            spec(None),
            spec(Some(&["b", "a"])),
            spec(Some(&["b"])),
            spec(Some(&["b", "y"])),
            spec(Some(&["b", "b"])),
            spec(Some(&["b", "nope"])),
            spec(Some(&["nope", "b", "b"])),
            spec(Some(&["intercept"])),
            DesignSpec {
                intercept: false,
                ..spec(Some(&["intercept", "a"]))
            },
            DesignSpec {
                intercept: false,
                ..spec(Some(&[]))
            },
            DesignSpec {
                response: "nope".into(),
                ..spec(Some(&["b", "b"]))
            },
        ];
        let mut designs = 0;
        for s in &specs {
            let plan = s.plan(&t.names);
            match Design::from_table(&t, s) {
                Ok(d) => {
                    designs += 1;
                    let plan = plan.unwrap();
                    assert_eq!(plan.names, d.names, "{s:?}");
                    assert_eq!(plan.intercept, s.intercept, "{s:?}");
                    assert_eq!(t.columns[plan.response], d.y, "{s:?}");
                    let off = usize::from(s.intercept);
                    for (k, &j) in plan.features.iter().enumerate() {
                        let col: Vec<f64> = (0..d.n).map(|i| d.x[i * d.d + off + k]).collect();
                        assert_eq!(t.columns[j], col, "{s:?}");
                    }
                }
                Err(e) => assert_eq!(plan.unwrap_err(), e, "{s:?}"),
            }
        }
        assert_eq!(designs, 4);
    }

    /// A model name, its table and its settings.
    type Case<'a> = (&'a str, &'a Table, &'a [(&'a str, &'a str)]);

    /// A regression model from a design is the model from the table that design was made
    /// from (the same density and gradient, bit for bit), with the same errors, in the same
    /// order: settings read before the data first, then the data's, then the rest.
    #[test]
    fn models_from_designs_are_the_models_from_tables() {
        let y = alloc::vec![1.0, 0.0, 1.0, 1.0, 0.0, 2.0];
        let a = alloc::vec![0.5, 1.5, -2.0, 3.0, 0.25, -1.0];
        let b = alloc::vec![-0.3, 0.7, 1.1, -2.4, 0.9, 0.1];
        let both = |name: &str, t: &Table, set: &[(&str, &str)]| {
            let mut settings = Settings::new();
            for (k, v) in set {
                settings.insert(k, v);
            }
            let from_table = build(name, t, &spec(None), &settings, None);
            let design = Design::from_table(t, &spec(None)).unwrap();
            let from_design = build_from_design(name, design, "y", &settings, None);
            (from_table, from_design)
        };
        let head = |v: &[f64]| v[..5].to_vec();
        let binary = table(head(&y), head(&a), head(&b));
        let counts = table(y.clone(), a.clone(), b.clone());
        let cases: [Case<'_>; 6] = [
            ("logistic", &binary, &[]),
            ("logistic", &binary, &[("reparam", "none")]),
            ("poisson", &counts, &[]),
            ("linear", &counts, &[]),
            ("linear", &counts, &[("noise", "gamma")]),
            ("robust", &counts, &[]),
        ];
        for (name, t, set) in cases {
            let (m1, m2) = both(name, t, set);
            let (m1, m2) = (m1.unwrap(), m2.unwrap());
            assert_eq!(m1.param_names(), m2.param_names(), "{name} {set:?}");
            assert_eq!((m1.n(), m1.dim()), (m2.n(), m2.dim()), "{name} {set:?}");
            for theta in [[0.1, -0.2, 0.3, 0.0], [-0.5, 0.25, 0.75, 0.5]] {
                let theta = &theta[..m1.dim()];
                let (mut g1, mut g2) = (alloc::vec![0.0; m1.dim()], alloc::vec![0.0; m1.dim()]);
                use crate::model::{FullData, LogDensity};
                let l1 = FullData::new(m1.clone()).log_density_grad(theta, &mut g1);
                let l2 = FullData::new(m2.clone()).log_density_grad(theta, &mut g2);
                assert_eq!(l1.to_bits(), l2.to_bits(), "{name} {set:?}");
                assert_eq!(g1, g2, "{name} {set:?}");
            }
        }
        // The same errors: a setting read before the data, the response's values, a setting
        // read after.
        let errors: [Case<'_>; 4] = [
            ("logistic", &counts, &[]),
            ("logistic", &counts, &[("prior", "nope")]),
            (
                "poisson",
                &table(alloc::vec![0.5; 6], a.clone(), b.clone()),
                &[],
            ),
            ("linear", &counts, &[("noise", "gamma"), ("noise_sd", "2")]),
        ];
        for (name, t, set) in errors {
            let (e1, e2) = both(name, t, set);
            let (e1, e2) = (e1.err().unwrap(), e2.err().unwrap());
            assert_eq!(e1, e2, "{name} {set:?}");
        }
    }

    /// A design made outside `Design::from_table` is checked: its shape, rows and parameters,
    /// and finiteness (the response first, then the columns of x in order); only regression
    /// models take one.
    #[test]
    fn designs_are_checked_before_they_make_a_model() {
        let design = |x: Vec<f64>, y: Vec<f64>| Design {
            n: y.len(),
            d: 2,
            x,
            y,
            names: alloc::vec!["intercept".into(), "a".into()],
        };
        let ok_x = || alloc::vec![1.0, 0.5, 1.0, -1.5, 1.0, 2.0];
        let ok_y = || alloc::vec![1.0, 0.0, 1.0];
        let build = |d: Design| build_from_design("logistic", d, "y", &Settings::new(), None);
        assert!(build(design(ok_x(), ok_y())).is_ok());
        let mut x = ok_x();
        x[5] = f64::NAN;
        x[2] = f64::INFINITY;
        let mut y = ok_y();
        let at = |d: Design| located(build(d).map(|_| design(ok_x(), ok_y())));
        let not_finite =
            |row, column: &str| (Some(row), Some(column.into()), "value is not finite".into());
        // Column `intercept` (row 2) comes before column `a` (row 3).
        assert_eq!(at(design(x.clone(), y.clone())), not_finite(2, "intercept"));
        x[2] = 1.0;
        assert_eq!(at(design(x.clone(), y.clone())), not_finite(3, "a"));
        // The response before x.
        y[1] = f64::NAN;
        assert_eq!(at(design(x, y)), not_finite(2, "y"));
        let short = design(ok_x()[..5].to_vec(), ok_y());
        assert!(matches!(build(short), Err(Error::Dimension { .. })));
        let empty = design(alloc::vec![], alloc::vec![]);
        assert!(matches!(build(empty), Err(Error::InvalidData { .. })));
        let none = Design {
            d: 0,
            names: alloc::vec![],
            ..design(alloc::vec![], ok_y())
        };
        assert!(matches!(build(none), Err(Error::InvalidData { .. })));
        let other = build_from_design("gmm", design(ok_x(), ok_y()), "y", &Settings::new(), None);
        assert!(matches!(other, Err(Error::Unknown { .. })));
    }
}
