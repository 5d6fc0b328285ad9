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
use crate::model::gaussian::{self, Correlation, GaussianMean};
use crate::model::glm::{GaussianNoise, Glm, Logistic, Poisson, StudentT};
use crate::model::gmm::{self, Gmm};
use crate::model::linear::{self, LinearUnknownNoise};
use crate::model::prior::{Prior, DEFAULT_PRIOR_SCALE};
use crate::model::reparam::ReparamMode;
use crate::model::series::{SeriesModel, SsmKind};
use crate::model::DataModel;
use crate::schema::{ModelInfo, ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

const PRIOR: ParamSpec = ParamSpec {
    key: "prior",
    description: "Prior on the coefficients: normal (N(0, prior_scale²) each) or flat",
    kind: ParamKind::Choice(&["normal", "flat"]),
};
const PRIOR_SCALE: ParamSpec = ParamSpec {
    key: "prior_scale",
    description: "Prior standard deviation of every coefficient, intercept included (> 0)",
    kind: ParamKind::RealOpen {
        default: DEFAULT_PRIOR_SCALE,
        min: 0.0,
        max: f64::INFINITY,
        min_open: true,
        max_open: true,
    },
};
const REPARAM: ParamSpec = ParamSpec {
    key: "reparam",
    description:
        "auto: sample in whitened coordinates θ = θ̂ + C⁻ᵀz (mode and Laplace precision CCᵀ; \
                  exact, draws reported on θ; not for linear noise=gamma); none: sample θ as given",
    kind: ParamKind::Choice(&["auto", "none"]),
};
const NOISE_SD: ParamSpec = ParamSpec {
    key: "noise_sd",
    description: "Known noise standard deviation σ (> 0)",
    kind: ParamKind::RealOpen {
        default: linear::DEFAULT_NOISE_SD,
        min: 0.0,
        max: f64::INFINITY,
        min_open: true,
        max_open: true,
    },
};

/// Every model, in display order.
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
            ParamSpec {
                key: "noise",
                description: "known: noise_sd is fixed; gamma: precision τ ~ Gamma(shape, rate), sampled as log_tau",
                kind: ParamKind::Choice(&["known", "gamma"]),
            },
            NOISE_SD,
            ParamSpec {
                key: "noise_prior_shape",
                description: "Gamma prior shape of the noise precision τ (noise=gamma)",
                kind: ParamKind::RealOpen {
                    default: linear::DEFAULT_NOISE_PRIOR_SHAPE,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "noise_prior_rate",
                description: "Gamma prior rate of the noise precision τ (noise=gamma)",
                kind: ParamKind::RealOpen {
                    default: linear::DEFAULT_NOISE_PRIOR_RATE,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            PRIOR,
            PRIOR_SCALE,
            REPARAM,
        ],
    },
    ModelInfo {
        name: "robust",
        description: "Robust linear regression, Student-t noise with known scale",
        regression: true,
        params: &[
            ParamSpec {
                key: "nu",
                description: "Degrees of freedom ν of the Student-t noise (> 0)",
                kind: ParamKind::RealOpen {
                    default: 4.0,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "noise_sd",
                description: "Scale of the Student-t noise (> 0)",
                kind: ParamKind::RealOpen {
                    default: 1.0,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            PRIOR,
            PRIOR_SCALE,
            REPARAM,
        ],
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
            ParamSpec {
                key: "prior_var_1",
                description: "Prior variance of theta1",
                kind: ParamKind::RealOpen {
                    default: gmm::DEFAULT_PRIOR_VAR_1,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "prior_var_2",
                description: "Prior variance of theta2",
                kind: ParamKind::RealOpen {
                    default: gmm::DEFAULT_PRIOR_VAR_2,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "noise_var",
                description: "Variance σₓ² of each mixture component",
                kind: ParamKind::RealOpen {
                    default: gmm::DEFAULT_NOISE_VAR,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "temperature",
                description: "Likelihood temperature K ≥ 1 (log-likelihood divided by K)",
                kind: ParamKind::Real {
                    default: 1.0,
                    min: 1.0,
                    max: f64::INFINITY,
                },
            },
        ],
    },
    ModelInfo {
        name: "gaussian",
        description: "Mean of dense Gaussian observations with known correlated covariance",
        regression: false,
        params: &[
            ParamSpec {
                key: "correlation",
                description: "Correlation structure: equi (all pairs ρ) or ar1 (ρ^|j−k|)",
                kind: ParamKind::Choice(&["equi", "ar1"]),
            },
            ParamSpec {
                key: "rho",
                description: "Correlation ρ of the observations",
                kind: ParamKind::RealOpen {
                    default: gaussian::DEFAULT_RHO,
                    min: -1.0,
                    max: 1.0,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "sd",
                description: "Marginal standard deviation of each coordinate",
                kind: ParamKind::RealOpen {
                    default: gaussian::DEFAULT_SD,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            PRIOR,
            PRIOR_SCALE,
            REPARAM,
        ],
    },
    ModelInfo {
        name: "pmf",
        description: "Bayesian probabilistic matrix factorisation: columns user, item (0-based ids) and rating",
        regression: false,
        params: &[
            ParamSpec {
                key: "rank",
                description: "Latent dimension k of the user and item factors",
                kind: ParamKind::Int {
                    default: crate::model::pmf::DEFAULT_RANK,
                    min: 1,
                    max: 1000,
                },
            },
            ParamSpec {
                key: "precision",
                description: "Observation precision β of the ratings (> 0)",
                kind: ParamKind::RealOpen {
                    default: crate::model::pmf::DEFAULT_PRECISION,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "prior_precision",
                description: "Prior precision λ of every factor entry (> 0)",
                kind: ParamKind::RealOpen {
                    default: crate::model::pmf::DEFAULT_PRIOR_PRECISION,
                    min: 0.0,
                    max: f64::INFINITY,
                    min_open: true,
                    max_open: true,
                },
            },
            ParamSpec {
                key: "center",
                description: "Subtract the mean rating (the prediction is mean + uᵢᵀvⱼ)",
                kind: ParamKind::Bool(true),
            },
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
        params: SERIES_PARAMS,
    },
];

const SERIES_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "initial",
        description:
            "Law of the state before y₁: stationary (the thesis) or normal N(0, initial_var)",
        kind: ParamKind::Choice(&["stationary", "normal"]),
    },
    ParamSpec {
        key: "initial_var",
        description:
            "Variance of the normal initial law (initial=normal; the authors' code uses 10)",
        kind: ParamKind::RealOpen {
            default: 10.0,
            min: 0.0,
            max: f64::INFINITY,
            min_open: true,
            max_open: true,
        },
    },
];

/// `lgssm` and `sv`: the initial law and the prior φ | σ ~ N(0, (cσ)²), σ⁻¹, τ⁻¹ ~ Gamma(a, b)
/// (`crate::ssm::scale_prior_from_settings`).
const SERIES_PRIOR_PARAMS: &[ParamSpec] = &[
    SERIES_PARAMS[0],
    SERIES_PARAMS[1],
    ParamSpec {
        key: "phi_prior_scale",
        description: "c in the prior φ | σ ~ N(0, (cσ)²)",
        kind: ParamKind::RealOpen {
            default: 10.0,
            min: 0.0,
            max: f64::INFINITY,
            min_open: true,
            max_open: true,
        },
    },
    ParamSpec {
        key: "inv_shape",
        description: "Shape a of the Gamma(a, b) prior on σ⁻¹ and τ⁻¹",
        kind: ParamKind::RealOpen {
            default: 101.0,
            min: 0.0,
            max: f64::INFINITY,
            min_open: true,
            max_open: true,
        },
    },
    ParamSpec {
        key: "inv_scale",
        description: "Scale b of the Gamma(a, b) prior on σ⁻¹ and τ⁻¹ (default 1/101)",
        kind: ParamKind::RealOpen {
            default: 1.0 / 101.0,
            min: 0.0,
            max: f64::INFINITY,
            min_open: true,
            max_open: true,
        },
    },
];

fn positive(settings: &Settings, key: &str, default: f64) -> Result<f64, Error> {
    let v = settings.f64_or(key, default)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(Error::setting(
            key,
            alloc::format!("{} must be > 0", crate::settings::number(v)),
        ))
    }
}

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
    for c in cols {
        let v = table.column(c)?;
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
    check_finite(table, &regression_columns(table, spec))?;
    let design = Design::from_table(table, spec)?;
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
    let corr = match settings.choice("correlation", "equi", &["equi", "ar1"])? {
        "ar1" => Correlation::Ar1,
        _ => Correlation::Equi,
    };
    let rho = settings.f64_or("rho", gaussian::DEFAULT_RHO)?;
    let sd = settings.f64_or("sd", gaussian::DEFAULT_SD)?;
    let cols: Vec<String> = match &design.features {
        Some(f) => f.clone(),
        None => table
            .names
            .iter()
            .filter(|c| **c != design.response)
            .cloned()
            .collect(),
    };
    if cols.is_empty() {
        return Err(Error::data("the gaussian model needs at least one column"));
    }
    for (k, c) in cols.iter().enumerate() {
        if cols[..k].contains(c) {
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
    let mut data: Vec<&[f64]> = Vec::with_capacity(dim);
    for c in &cols {
        data.push(table.column(c)?);
    }
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
    let rank = settings.usize_in("rank", crate::model::pmf::DEFAULT_RANK, 1, 1000)?;
    let precision = positive(settings, "precision", crate::model::pmf::DEFAULT_PRECISION)?;
    let prior = positive(
        settings,
        "prior_precision",
        crate::model::pmf::DEFAULT_PRIOR_PRECISION,
    )?;
    let center = settings.bool_or("center", true)?;
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

/// Apply the `reparam` setting to a GLM ([`Glm::whiten`] under `auto`).
fn reparametrise<F: crate::model::GlmFamily>(glm: Glm<F>, mode: ReparamMode) -> Glm<F> {
    match mode {
        ReparamMode::Auto => glm.whiten(),
        ReparamMode::None => glm.not_whitened("reparam=none"),
    }
}

/// Build model `name` from `table`; model options come from `settings` (keys read are marked
/// used). Time-series models (`lgssm`, `sv`, `garch`) read one column (see
/// [`SeriesModel::from_table`]). Unknown names give [`Error::Unknown`].
pub fn build(
    name: &str,
    table: &Table,
    design: &DesignSpec,
    settings: &Settings,
) -> Result<Arc<dyn DataModel>, Error> {
    match name {
        "logistic" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let d = regression_design(table, design)?;
            check_binary(&d, &design.response)?;
            Ok(Arc::new(reparametrise(Glm::new(d, Logistic, prior), mode)))
        }
        "poisson" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let d = regression_design(table, design)?;
            check_counts(&d, &design.response)?;
            Ok(Arc::new(reparametrise(Glm::new(d, Poisson, prior), mode)))
        }
        "linear" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let noise = settings.choice("noise", "known", &["known", "gamma"])?;
            let d = regression_design(table, design)?;
            if noise == "gamma" {
                reject(
                    settings,
                    "noise_sd",
                    "with noise=gamma (the noise is sampled)",
                )?;
                let a = positive(
                    settings,
                    "noise_prior_shape",
                    linear::DEFAULT_NOISE_PRIOR_SHAPE,
                )?;
                let b = positive(
                    settings,
                    "noise_prior_rate",
                    linear::DEFAULT_NOISE_PRIOR_RATE,
                )?;
                Ok(Arc::new(LinearUnknownNoise::new(d, prior, a, b)?))
            } else {
                reject(settings, "noise_prior_shape", "with noise=known")?;
                reject(settings, "noise_prior_rate", "with noise=known")?;
                let sd = positive(settings, "noise_sd", linear::DEFAULT_NOISE_SD)?;
                Ok(Arc::new(reparametrise(
                    Glm::new(d, GaussianNoise { sd }, prior),
                    mode,
                )))
            }
        }
        "robust" => {
            let prior = Prior::from_settings(settings)?;
            let mode = ReparamMode::from_settings(settings)?;
            let nu = positive(settings, "nu", 4.0)?;
            let scale = positive(settings, "noise_sd", 1.0)?;
            let d = regression_design(table, design)?;
            Ok(Arc::new(reparametrise(
                Glm::new(d, StudentT { nu, scale }, prior),
                mode,
            )))
        }
        "gmm" => {
            let v1 = positive(settings, "prior_var_1", gmm::DEFAULT_PRIOR_VAR_1)?;
            let v2 = positive(settings, "prior_var_2", gmm::DEFAULT_PRIOR_VAR_2)?;
            let nv = positive(settings, "noise_var", gmm::DEFAULT_NOISE_VAR)?;
            let k = settings.f64_or("temperature", 1.0)?;
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
