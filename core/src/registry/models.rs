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
        "logistic" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let d = regression_design_on(table, design, parallel.as_deref())?;
            check_binary(&d, &design.response)?;
            Ok(Arc::new(reparametrise(
                Glm::new(d, Logistic, prior),
                mode,
                &parallel,
            )))
        }
        "poisson" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let d = regression_design_on(table, design, parallel.as_deref())?;
            check_counts(&d, &design.response)?;
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
            let d = regression_design_on(table, design, parallel.as_deref())?;
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
            let d = regression_design_on(table, design, parallel.as_deref())?;
            Ok(Arc::new(reparametrise(
                Glm::new(d, StudentT { nu, scale }, prior),
                mode,
                &parallel,
            )))
        }
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
}
