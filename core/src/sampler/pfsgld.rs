//! The `pf-sgld` sampler: the buffered particle-filter SGLD kernel
//! ([`crate::kernel::pfsgld`], formulas, cost and extras there) on the generic driver, its
//! settings, and the particle-filter settings it shares with `pmmh`.

use super::driver::{Driver, Warmup};
use crate::chain::{Chain, Cost};
use crate::error::Error;
pub use crate::kernel::pfsgld::{PfSgld, PfSgldState, WindowGradient};
use crate::kernel::sgmcmc::StepSchedule;
use crate::kernel::{HasPosition, Kernel, StepInfo};
use crate::math;
use crate::model::SeriesModel;
use crate::rng::{uniform, ChainRng};
use crate::sampler::sgmcmc::{schedule_from_settings, P_SCHEDULE, P_SCHEDULE_B, P_SCHEDULE_GAMMA};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::settings::Settings;
pub use crate::ssm::buffered::WindowTrace;
use crate::ssm::buffered::{BufferConfig, P_BUFFER, P_SUBSEQ_LEN};
use crate::ssm::pf::{
    p_ess_threshold, p_particles, PfConfig, Proposal, PF_PARAMS, P_PROPOSAL, P_RESAMPLING,
};
use crate::ssm::resample::Resampling;
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

/// Starting step factor: h = `AUTO_STEP_FACTOR`/T (the thesis's ε = 0.05 per observation);
/// with `step_size` = auto the warm-up then sets per-coordinate steps ([`PfSgldWarmup`]).
pub const AUTO_STEP_FACTOR: f64 = 0.1;

/// `particles` = auto: N = `AUTO_PARTICLES_PER_POINT`·|S*| (the window's length), at least
/// [`AUTO_PARTICLES_MIN`] and at most [`AUTO_PARTICLES_MAX`].
///
/// The particle score's bias is O(|S*|/N) (Putcha 2024, Theorem 3.4.2 (I)). Measured on 200
/// daily DAX returns (`sv`, the full sequence, at NumPyro's posterior mean): the φ component's
/// bias was −0.86 ± 0.15 at N = |S*| and −0.30 ± 0.12 at N = 5|S*|, so N = 2.5|S*| keeps it
/// near 0.1 posterior sd (sd 0.24, b·s² ≈ 0.4 × 0.058) at the posterior mean. It grows along
/// the posterior's ridge, though: against a grid filter's exact score at N = 500, −0.50 ± 0.16
/// at the posterior mean and −2.72 ± 0.25 at φ = 0.8 (`tests/examples/sv_score_bias.rs`;
/// DESIGN.md, `pf-sgld`'s known limitation).
pub const AUTO_PARTICLES_PER_POINT: f64 = 2.5;

/// Fewest particles with `particles` = auto (the former fixed default).
pub const AUTO_PARTICLES_MIN: usize = 200;

/// Most particles with `particles` = auto.
pub const AUTO_PARTICLES_MAX: usize = 2500;

/// `particles` = auto for a window of `len` time points.
pub fn auto_particles(len: usize) -> usize {
    let n = math::ceil(AUTO_PARTICLES_PER_POINT * len as f64) as usize;
    n.clamp(AUTO_PARTICLES_MIN, AUTO_PARTICLES_MAX)
}

/// Largest variance inflation allowed to the gradient noise: hᵢVᵢ/4 ≤ this ([`PfSgldWarmup`]).
pub const NOISE_INFLATION: f64 = 0.1;

/// Largest discretisation inflation: hᵢ/(4sᵢ²) ≤ this ([`PfSgldWarmup`]).
pub const STEP_INFLATION: f64 = 0.05;

pub(crate) const P_STEP: ParamSpec = ParamSpec {
    key: "step_size",
    description: "SGLD step h in θ + (h/2)ĝ + √h ξ; auto = per-coordinate steps set in warm-up (≥ 100 iterations) from the posterior scale and the gradient noise (0.1/T before, and throughout with a shorter warm-up)",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_GRADIENT: ParamSpec = ParamSpec {
    key: "gradient",
    description: "window expectation: particle filter, or kalman (exact RTS smoother on the window, lgssm only)",
    kind: ParamKind::Choice(&["particle", "kalman"]),
};

const P_INTEGRATOR: ParamSpec = ParamSpec {
    key: "integrator",
    description: "the Langevin step: lm (Leimkuhler–Matthews, θ + (h/2)∇log π̂ + √h(ξₙ + ξₙ₊₁)/2: no discretisation error in a Gaussian target's variance at a constant step, the same cost) or euler (θ + (h/2)∇log π̂ + √h ξₙ, the thesis')",
    kind: ParamKind::Choice(&["lm", "euler"]),
};

pub(crate) const P_INIT: ParamSpec = ParamSpec {
    key: "init",
    description:
        "starting point: model (data-based guess), zero, or random (uniform(−1, 1) around model)",
    kind: ParamKind::Choice(&["model", "zero", "random"]),
};

/// Registry entry of `pf-sgld`.
pub const PF_SGLD_INFO: SamplerInfo = SamplerInfo {
    name: "pf-sgld",
    description: "buffered particle-filter SGLD for time series (Aicher, Putcha et al. 2023; Putcha 2024, Alg. 3)",
    exact: false,
    signed: false,
    models: crate::model::series::SERIES_MODELS,
    params: &[
        P_STEP,
        P_SCHEDULE,
        P_SCHEDULE_B,
        P_SCHEDULE_GAMMA,
        P_SUBSEQ_LEN,
        P_BUFFER,
        p_particles(0),
        P_PROPOSAL,
        P_RESAMPLING,
        p_ess_threshold(1.0),
        P_GRADIENT,
        P_INTEGRATOR,
        P_INIT,
    ],
};

/// Options of a [`PfSgldChain`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PfSgldOptions {
    /// Step-size schedule (its h₀ is the step; NaN h₀ = auto, 0.1/T).
    pub schedule: StepSchedule,
    /// Subsequence length and buffer.
    pub window: BufferConfig,
    /// Particle filter settings; `None` = Kalman gradient (`lgssm` only).
    pub filter: Option<PfConfig>,
    /// The Leimkuhler–Matthews step (`integrator = lm`) instead of Euler's.
    pub leimkuhler_matthews: bool,
}

/// A buffered PF-SGLD chain: [`PfSgld`] with [`PfSgldWarmup`] on the generic driver.
pub type PfSgldChain = Driver<PfSgld, SeriesModel, PfSgldWarmup>;

/// PF-SGLD's warm-up with `step_size` = auto: per-coordinate steps from the posterior scale and
/// the gradient noise, set at the end of each of four windows and then frozen (with an explicit
/// `step_size`, or fewer than [`MIN_ADAPT_WARMUP`] warm-up iterations, nothing adapts).
///
/// # Formula
/// For a Gaussian target of variance sᵢ² in coordinate i, SGLD with step hᵢ and gradient noise
/// of variance Vᵢ has stationary variance ≈ sᵢ²(1 + hᵢ/(4sᵢ²) + hᵢVᵢ/4) with Euler's step: the
/// first term is Euler's discretisation (absent with the default Leimkuhler–Matthews step at a
/// constant step), the second the noise the step lets in. The warm-up chooses
///
/// hᵢ = min(4·[`NOISE_INFLATION`]/V̂ᵢ, 4·[`STEP_INFLATION`]·ŝᵢ²),
///
/// so that for uncorrelated coordinates each inflates the variance by at most 10% and 5%, and
/// the chain relaxes in 2ŝᵢ²/hᵢ ≥ 10 iterations; the kernel takes h = maxᵢ hᵢ with factors
/// mᵢ = hᵢ/h. Correlated coordinates make the direction of smallest variance stiffer than any
/// ŝᵢ² says (discretisation inflation λ/4 with λ the largest eigenvalue of D^½ Σ̂⁻¹ D^½,
/// D = diag hᵢ, Σ̂ the window's covariance; the step is unstable at λ ≥ 4): all steps are scaled
/// down so that a Gershgorin bound on λ is at most 1 (≤ 25% along the stiffest direction).
/// V̂ᵢ = ½·mean (ĝₜ − ĝ′ₜ)ᵢ² over the first window's non-divergent iterations (or later ones if
/// it had fewer than 10 pairs), where ĝ′ₜ is a second, independent estimate at the point
/// where step t takes its own ĝₜ ([`PfSgld::score`] at θₜ₋₁, drawn from the chain's stream
/// 2¹⁹² draws ahead, so the chain's own stream of random numbers is untouched: the draws
/// change only through the steps V̂ sets): the pair differs by the estimator's noise alone,
/// 2Vᵢ in expectation. (Consecutive steps' estimates, used before, also differ by θ's
/// movement, ≈ h₀Σⱼ Hᵢⱼ²; when the noise is small that dominated V̂ and the steps came out
/// orders of magnitude too small.) The second estimates cost one window gradient per
/// iteration of the first window but its last (and of later ones while fewer than 10 pairs),
/// counted in the warm-up's cost. Σ̂ is recomputed in each of
/// the windows ending at [`WINDOW_ENDS`] (0.15, 0.3, 0.5, 0.8 of the warm-up; the first at
/// least 12 iterations long), and the steps are set at the end of each, growing at most 10×
/// per window: a window run at too small a step sees less than the posterior's spread, and the
/// next, at the step that spread allows, sees more. With a decreasing `schedule`, hᵢ is the
/// step at the iteration where it is set.
#[derive(Debug, Clone)]
pub struct PfSgldWarmup {
    warmup: usize,
    adapt: bool,
    /// Welford over θ in the current window (mean and the p × p co-moments).
    n: usize,
    mean: Vec<f64>,
    m2: Vec<f64>,
    delta: Vec<f64>,
    /// Gradient noise: sums of squared differences of paired estimates and their count.
    dg2: Vec<f64>,
    dg_n: usize,
    /// A second estimate at the current θ (where the next step takes its own), its estimator
    /// and its random stream (the chain's, 2¹⁹² draws ahead: the chain's own stream is
    /// untouched by the probes).
    probe: Option<Vec<f64>>,
    probe_gradient: Option<WindowGradient>,
    probe_rng: Option<ChainRng>,
    noise: Vec<f64>,
}

impl PfSgldWarmup {
    /// A warm-up of `warmup` iterations for a p-dimensional θ; `adapt` = `step_size` auto.
    pub fn new(warmup: usize, p: usize, adapt: bool) -> Self {
        PfSgldWarmup {
            warmup,
            adapt: adapt && warmup >= MIN_ADAPT_WARMUP,
            n: 0,
            mean: vec![0.0; p],
            m2: vec![0.0; p * p],
            delta: vec![0.0; p],
            dg2: vec![0.0; p],
            dg_n: 0,
            probe: None,
            probe_gradient: None,
            probe_rng: None,
            noise: Vec::new(),
        }
    }

    fn record(&mut self, theta: &[f64]) {
        self.n += 1;
        let n = self.n as f64;
        let p = theta.len();
        for (j, &x) in theta.iter().enumerate() {
            self.delta[j] = x - self.mean[j];
            self.mean[j] += self.delta[j] / n;
        }
        for j in 0..p {
            let new_j = theta[j] - self.mean[j];
            for k in 0..p {
                self.m2[j * p + k] += self.delta[k] * new_j;
            }
        }
    }

    /// The gradient noise: the last step's estimate (`ok`: usable) against the probe taken at
    /// the same θ after the step before.
    fn pair(&mut self, st: &PfSgldState, ok: bool) {
        if let Some(q) = self.probe.take() {
            if ok {
                for (j, (g, q)) in st.gradient().iter().zip(&q).enumerate() {
                    self.dg2[j] += (g - q) * (g - q);
                }
                self.dg_n += 1;
            }
        }
    }

    /// A probe at the current θ, where the next step takes its own estimate: an independent
    /// estimate from the probes' stream (the chain's, 2¹⁹² draws ahead) through a copy of the
    /// chain's estimator. Returns its cost.
    fn probe(
        &mut self,
        kernel: &PfSgld,
        model: &SeriesModel,
        st: &PfSgldState,
        rng: &ChainRng,
    ) -> Cost {
        let side = self.probe_rng.get_or_insert_with(|| {
            let mut r = rng.clone();
            r.long_jump();
            r
        });
        let est = self
            .probe_gradient
            .get_or_insert_with(|| st.window_gradient().clone());
        let mut g = vec![0.0; st.position().len()];
        let score = kernel.score(model, st.position(), est, side, &mut g);
        if score.ok {
            self.probe = Some(g);
        }
        score.cost
    }

    /// Set the kernel's steps at iteration `iter` from the window's covariance and the noise
    /// estimate; restart the window.
    fn set_steps(&mut self, kernel: &mut PfSgld, iter: usize) {
        let p = self.mean.len();
        if self.noise.is_empty() && self.dg_n >= 10 {
            let n = self.dg_n as f64;
            self.noise = self.dg2.iter().map(|v| 0.5 * v / n).collect();
        }
        if self.n >= 10 && self.noise.len() == p {
            let cov: Vec<f64> = self.m2.iter().map(|v| v / (self.n - 1) as f64).collect();
            let now = kernel.schedule.at(iter);
            let mut steps: Vec<f64> = (0..p)
                .map(|j| {
                    let by_noise = 4.0 * NOISE_INFLATION / self.noise[j];
                    let by_scale = 4.0 * STEP_INFLATION * cov[j * p + j];
                    let current = now * kernel.scale.get(j).copied().unwrap_or(1.0);
                    by_noise.min(by_scale).min(MAX_GROWTH * current)
                })
                .collect();
            // the stiffest direction: a Gershgorin bound on λ_max(D^½ Σ̂⁻¹ D^½) at most 1
            if let Ok(ch) = crate::linalg::Cholesky::new(&cov, p) {
                let prec = ch.inverse();
                let lambda = (0..p)
                    .map(|j| {
                        (0..p)
                            .map(|k| math::abs(prec[j * p + k]) * math::sqrt(steps[j] * steps[k]))
                            .sum::<f64>()
                    })
                    .fold(0.0, f64::max);
                if lambda.is_finite() && lambda > 1.0 {
                    steps.iter_mut().for_each(|h| *h /= lambda);
                }
            }
            if steps.iter().all(|h| h.is_finite() && *h > 0.0) {
                let h = steps.iter().copied().fold(0.0, f64::max);
                // the schedule's decay so far: h is the step at `iter`
                let decay = now / kernel.schedule.initial();
                kernel.schedule = kernel.schedule.with_initial(h / decay);
                kernel.scale = steps.iter().map(|hi| hi / h).collect();
            }
        }
        self.n = 0;
        self.mean.iter_mut().for_each(|v| *v = 0.0);
        self.m2.iter_mut().for_each(|v| *v = 0.0);
    }
}

/// Fewest warm-up iterations for which `step_size` = auto adapts.
pub const MIN_ADAPT_WARMUP: usize = 100;

/// Largest growth of a coordinate's step from one window to the next.
pub const MAX_GROWTH: f64 = 10.0;

/// Where the warm-up's windows end, as fractions of the warm-up (the first starts at 1/10):
/// the steps are set at the end of each; the last fifth runs at the final steps.
const WINDOW_ENDS: [f64; 4] = [0.15, 0.3, 0.5, 0.8];

impl Warmup<PfSgld, SeriesModel> for PfSgldWarmup {
    fn adapt(
        &mut self,
        t: usize,
        kernel: &mut PfSgld,
        model: &SeriesModel,
        st: &mut PfSgldState,
        info: &mut StepInfo,
        rng: &mut ChainRng,
    ) -> Cost {
        if !self.adapt {
            return Cost::default();
        }
        let mut cost = Cost::default();
        let iter = t + 1;
        let w = self.warmup as f64;
        let start = (0.1 * w) as usize;
        let mut ends = WINDOW_ENDS.map(|f| (f * w) as usize);
        ends[0] = ends[0].max(start + 12);
        if iter > start && iter <= ends[3] {
            self.record(st.position());
            if self.noise.is_empty() {
                let ok = !info.divergent && st.gradient().iter().all(|g| g.is_finite());
                self.pair(st, ok);
                // no probe when none will be compared: after the last window, or at a
                // window's end where the estimate is set from the pairs so far
                let more = iter < ends[3] && !(ends.contains(&iter) && self.dg_n >= 10);
                if more {
                    cost = self.probe(kernel, model, st, rng);
                }
            }
            if ends.contains(&iter) {
                self.set_steps(kernel, iter);
            }
            if !self.noise.is_empty() || iter == ends[3] {
                // the probes are over: free the estimator's copy (its particles)
                self.probe = None;
                self.probe_gradient = None;
                self.probe_rng = None;
            }
        }
        cost
    }

    /// The gradient noise variances V̂ᵢ measured in warm-up and the per-coordinate steps.
    fn resolved(&self, kernel: &PfSgld) -> Vec<(&'static str, f64)> {
        if kernel.scale.is_empty() {
            return Vec::new();
        }
        let mut out = vec![];
        let h = kernel.schedule.initial();
        for (j, m) in kernel.scale.iter().enumerate().take(4) {
            let key = ["step_size_0", "step_size_1", "step_size_2", "step_size_3"][j];
            out.push((key, h * m));
        }
        for (j, v) in self.noise.iter().enumerate().take(4) {
            let key = [
                "grad_noise_0",
                "grad_noise_1",
                "grad_noise_2",
                "grad_noise_3",
            ][j];
            out.push((key, *v));
        }
        out
    }
}

/// Where a chain starts.
pub(crate) fn start_point(
    model: &SeriesModel,
    init: &str,
    rng: &mut ChainRng,
) -> Result<Vec<f64>, Error> {
    use crate::model::DataModel;
    let base = model.initial_point();
    let theta: Vec<f64> = match init {
        "zero" => vec![0.0; base.len()],
        "random" => base.iter().map(|v| v + 2.0 * uniform(rng) - 1.0).collect(),
        _ => base,
    };
    let mut g = vec![0.0; theta.len()];
    if !model.ssm().log_prior_grad(&theta, &mut g).is_finite() {
        return Err(Error::NonFiniteStart);
    }
    Ok(theta)
}

impl Driver<PfSgld, SeriesModel, PfSgldWarmup> {
    /// A chain on `model` starting at `theta`; `step_size` auto (NaN h₀) starts at 0.1/T and
    /// is adapted in warm-up ([`PfSgldWarmup`]).
    pub fn new(
        model: SeriesModel,
        opts: PfSgldOptions,
        theta: Vec<f64>,
        warmup: usize,
    ) -> Result<Self, Error> {
        let t_len = model.y().len() as f64;
        let mut schedule = opts.schedule;
        let auto = schedule.initial().is_nan();
        if auto {
            schedule = schedule.with_initial(AUTO_STEP_FACTOR / t_len);
        }
        let kernel = PfSgld {
            schedule,
            scale: Vec::new(),
            window: BufferConfig::new(opts.window.subseq_len, opts.window.buffer)?,
            filter: opts.filter,
            leimkuhler_matthews: opts.leimkuhler_matthews,
        };
        let state = kernel.init(&model, &theta)?;
        let h0 = schedule.initial();
        if !(h0.is_finite() && h0 > 0.0) {
            return Err(Error::setting("step_size", "must be a finite number > 0"));
        }
        let names = model.ssm().param_names();
        let adapt = PfSgldWarmup::new(warmup, theta.len(), auto);
        Ok(Driver::from_parts(
            kernel,
            model,
            state,
            adapt,
            names,
            warmup,
            Cost::default(),
        ))
    }
}

/// The filter settings from `particles`, `proposal`, `resampling`, `ess_threshold`, with the
/// defaults of sampler `info`'s schema; `particles` = auto (pmmh's default) starts from
/// `auto_particles` (pmmh then tunes it).
pub(crate) fn filter_settings(
    s: &Settings,
    info: &SamplerInfo,
    auto_particles: usize,
) -> Result<PfConfig, Error> {
    // absent or `auto`: the schema's default (pf-sgld), or `auto_particles` where the default
    // is automatic (pmmh)
    let spec = info.param("particles")?;
    let particles = match (s.get_str(spec.key), spec.kind) {
        (None | Some("auto"), ParamKind::Int { default, .. }) if default > 0 => default,
        (None | Some("auto"), _) => auto_particles,
        _ => spec.int(s)?,
    };
    let proposal = Proposal::from_name(P_PROPOSAL.choice(s)?)?;
    let resampling = Resampling::from_name(P_RESAMPLING.choice(s)?)?;
    let kappa = info.param("ess_threshold")?.real(s)?;
    PfConfig::new(particles, proposal, resampling, kappa)
}

/// The particle filter chosen by setting `key` (`particle` or `kalman`): `Some(config)` from
/// [`filter_settings`], or `None` for the exact Kalman filter, where the filter settings have
/// no effect and are refused.
pub(crate) fn particle_or_kalman(
    s: &Settings,
    info: &SamplerInfo,
    key: &str,
    auto_particles: usize,
) -> Result<Option<PfConfig>, Error> {
    if info.param(key)?.choice(s)? == "kalman" {
        for k in PF_PARAMS.iter().map(|p| p.key) {
            if s.contains(k) {
                return Err(Error::setting(
                    k,
                    alloc::format!("has no effect with {key}=kalman"),
                ));
            }
        }
        return Ok(None);
    }
    filter_settings(s, info, auto_particles).map(Some)
}

/// The series model of a chain, or the error for an i.i.d. model.
pub(crate) fn series_of<'a>(
    sampler: &str,
    model: &'a dyn crate::model::DataModel,
) -> Result<&'a SeriesModel, Error> {
    model.as_series().ok_or_else(|| {
        Error::setting(
            "sampler",
            alloc::format!(
                "`{sampler}` needs a time-series model (lgssm, sv, garch); this model's data \
                 are i.i.d."
            ),
        )
    })
}

/// Build a `pf-sgld` chain from the user's settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: &dyn crate::model::DataModel,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    let series = series_of(config.sampler, model)?;
    let s = config.settings;
    let step = P_STEP.positive_or_auto(s)?;
    let schedule = schedule_from_settings(s, step)?;
    let t_len = series.y().len();
    let window = BufferConfig::from_settings(s, t_len)?;
    let window_len = (window.subseq_len + 2 * window.buffer).min(t_len);
    let filter = particle_or_kalman(s, &PF_SGLD_INFO, "gradient", auto_particles(window_len))?;
    let leimkuhler_matthews = P_INTEGRATOR.choice(s)? == "lm";
    let init = P_INIT.choice(s)?;
    s.check_all_used()?;
    let theta = start_point(series, init, rng)?;
    let opts = PfSgldOptions {
        schedule,
        window,
        filter,
        leimkuhler_matthews,
    };
    Ok(Box::new(PfSgldChain::new(
        series.clone(),
        opts,
        theta,
        config.warmup,
    )?))
}
