//! Set-up work a run's chains share: the first chain keeps what its set-up computed
//! deterministically from the model and the options (a mode search; a control variate's
//! centre, with its per-datum gradients where stored; HMC-ECS's Taylor control variates at
//! its centre; the minibatch tests' Taylor control variate at the mode; SMH's whole kernel),
//! the other chains take it instead of computing it again. Deterministic means the same bits on
//! any number of threads (`find_mode`'s passes sum fixed chunks in order), so a chain that
//! reuses is the chain built alone, bit for bit; it counts in its cost only the evaluations it
//! spent, so the run's total counts the shared work once.

use crate::cost::Cost;
use crate::error::Error;
use crate::estimator::gradient::Centre;
use crate::estimator::{ControlVariates, GradientEstimator, Subsampler};
use crate::kernel::minibatch_mh::cv::TaylorCv;
use crate::kernel::smh::{Smh, SmhOptions};
use crate::model::DataModel;
use crate::optim::{find_mode, ModeOptions, ModeResult};
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

/// What the first chain of a run kept ([`Sharing::Record`]) for the others
/// ([`Sharing::Reuse`]). Each entry names its model by a weak reference, so that another model
/// cannot take its allocation's place while the entry is kept.
#[derive(Clone, Default)]
pub struct SetupShare {
    mode: Option<SharedMode>,
    smh: Option<SharedSmh>,
    cv: Option<SharedCentre>,
    taylor: Option<SharedTaylor>,
    mh_cv: Option<SharedMhCv>,
}

/// What is kept, not the kept values (an SMH kernel holds arrays of n numbers).
impl core::fmt::Debug for SetupShare {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SetupShare")
            .field("mode", &self.has_mode())
            .field("smh", &self.has_smh())
            .field("cv", &self.has_cv_centre())
            .field("taylor", &self.has_control_variates())
            .field("mh_cv", &self.has_mh_control_variate())
            .finish()
    }
}

#[derive(Debug, Clone)]
struct SharedMode {
    model: Weak<dyn DataModel>,
    start: Vec<u64>,
    opts: ModeOptions,
    result: ModeResult,
}

#[derive(Debug, Clone)]
struct SharedSmh {
    model: Weak<dyn DataModel>,
    start: Vec<u64>,
    opts: SmhOptions,
    kernel: Smh,
}

#[derive(Debug, Clone)]
struct SharedCentre {
    model: Weak<dyn DataModel>,
    at: Vec<u64>,
    centre: Arc<Centre>,
}

#[derive(Debug, Clone)]
struct SharedTaylor {
    model: Weak<dyn DataModel>,
    at: Vec<u64>,
    order: usize,
    cv: ControlVariates,
}

#[derive(Debug, Clone)]
struct SharedMhCv {
    model: Weak<dyn DataModel>,
    at: Vec<u64>,
    cv: TaylorCv,
}

impl SetupShare {
    /// Whether a mode search is kept.
    pub fn has_mode(&self) -> bool {
        self.mode.is_some()
    }

    /// Whether an SMH kernel is kept.
    pub fn has_smh(&self) -> bool {
        self.smh.is_some()
    }

    /// Whether a control-variate centre (its full-data gradient, and the per-datum gradients
    /// where they are stored) is kept.
    pub fn has_cv_centre(&self) -> bool {
        self.cv.is_some()
    }

    /// Whether Taylor control variates (HMC-ECS's) are kept.
    pub fn has_control_variates(&self) -> bool {
        self.taylor.is_some()
    }

    /// Whether the minibatch tests' Taylor control variate is kept.
    pub fn has_mh_control_variate(&self) -> bool {
        self.mh_cv.is_some()
    }
}

/// How a chain's builder treats the deterministic part of its set-up: on its own
/// ([`Sharing::Off`]); computing it and keeping it for the run's other chains
/// ([`Sharing::Record`], the first chain); or taking what was kept when the model (the same
/// `Arc`) and the inputs are the same ([`Sharing::Reuse`], computing it otherwise).
#[derive(Debug)]
pub enum Sharing<'a> {
    /// Compute, keep nothing.
    Off,
    /// Compute and keep.
    Record(&'a mut SetupShare),
    /// Take what matches (else compute).
    Reuse(&'a SetupShare),
}

fn same_model(kept: &Weak<dyn DataModel>, model: &Arc<dyn DataModel>) -> bool {
    Weak::ptr_eq(kept, &Arc::downgrade(model))
}

/// Options compared by their printed form: Rust prints every f64 so that it reads back to
/// the same bits, and NaN (`auto` settings) as `NaN`, which `==` would call different from
/// itself.
fn same_options<T: core::fmt::Debug>(a: &T, b: &T) -> bool {
    alloc::format!("{a:?}") == alloc::format!("{b:?}")
}

impl Sharing<'_> {
    /// [`find_mode`] on `model` from `start` with `opts`, or the kept result for the same
    /// three: the result and whether this call searched (then its evaluations are this
    /// chain's to count).
    pub fn find_mode(
        &mut self,
        model: &Arc<dyn DataModel>,
        start: &[f64],
        opts: &ModeOptions,
    ) -> Result<(ModeResult, bool), Error> {
        let bits: Vec<u64> = start.iter().map(|v| v.to_bits()).collect();
        if let Sharing::Reuse(share) = self {
            if let Some(e) = &share.mode {
                if same_model(&e.model, model) && e.start == bits && same_options(&e.opts, opts) {
                    return Ok((e.result.clone(), false));
                }
            }
        }
        let r = find_mode(model.as_ref(), start, opts)?;
        if let Sharing::Record(share) = self {
            share.mode = Some(SharedMode {
                model: Arc::downgrade(model),
                start: bits,
                opts: *opts,
                result: r.clone(),
            });
        }
        Ok((r, true))
    }

    /// [`GradientEstimator::new`] for `model`, `sub` and the control-variate `centre`, or the
    /// same estimator on the centre kept for the same model and θ̂ (its pass, and its n × d
    /// per-datum gradients where stored, then not repeated: cost 0). The first chain keeps its
    /// centre ([`Sharing::Record`]). Without a centre, always `new` (nothing to share).
    pub fn gradient_estimator(
        &mut self,
        model: &Arc<dyn DataModel>,
        sub: Subsampler,
        centre: Option<&[f64]>,
    ) -> Result<(GradientEstimator, Cost), Error> {
        let Some(c) = centre else {
            return GradientEstimator::new(model.as_ref(), sub, None);
        };
        let at: Vec<u64> = c.iter().map(|v| v.to_bits()).collect();
        if let Sharing::Reuse(share) = self {
            if let Some(e) = &share.cv {
                if same_model(&e.model, model) && e.at == at {
                    let est =
                        GradientEstimator::with_centre(model.as_ref(), sub, e.centre.clone())?;
                    return Ok((est, Cost::default()));
                }
            }
        }
        let (est, cost) = GradientEstimator::new(model.as_ref(), sub, Some(c))?;
        if let Sharing::Record(share) = self {
            if let Some(kept) = est.centre_kept() {
                share.cv = Some(SharedCentre {
                    model: Arc::downgrade(model),
                    at,
                    centre: kept,
                });
            }
        }
        Ok((est, cost))
    }

    /// [`ControlVariates::new`] for `model` at `centre` of `order`, or a copy of those kept for
    /// the same three (a GLM's copies hold one per-datum cache): the control variates and whether this call computed them (then their
    /// full pass is this chain's to count). The first chain keeps its own
    /// ([`Sharing::Record`]).
    pub fn control_variates(
        &mut self,
        model: &Arc<dyn DataModel>,
        centre: &[f64],
        order: usize,
    ) -> Result<(ControlVariates, bool), Error> {
        let at: Vec<u64> = centre.iter().map(|v| v.to_bits()).collect();
        if let Sharing::Reuse(share) = self {
            if let Some(e) = &share.taylor {
                if same_model(&e.model, model) && e.at == at && e.order == order {
                    return Ok((e.cv.clone(), false));
                }
            }
        }
        let cv = ControlVariates::new(model.as_ref(), centre, order)?;
        if let Sharing::Record(share) = self {
            share.taylor = Some(SharedTaylor {
                model: Arc::downgrade(model),
                at,
                order,
                cv: cv.clone(),
            });
        }
        Ok((cv, true))
    }

    /// [`TaylorCv::new`] for `model` (a GLM: an error otherwise) at `centre`, or a copy of the
    /// one kept for the same model and centre (the copies hold one set of per-datum arrays):
    /// the control variate and whether this call computed it (then its pass is this chain's to
    /// count). The first chain keeps its own ([`Sharing::Record`]).
    pub fn taylor_cv(
        &mut self,
        model: &Arc<dyn DataModel>,
        centre: &[f64],
    ) -> Result<(TaylorCv, bool), Error> {
        let at: Vec<u64> = centre.iter().map(|v| v.to_bits()).collect();
        if let Sharing::Reuse(share) = self {
            if let Some(e) = &share.mh_cv {
                if same_model(&e.model, model) && e.at == at {
                    return Ok((e.cv.clone(), false));
                }
            }
        }
        let view = model.as_glm().ok_or_else(|| {
            Error::setting(
                "control",
                "control variates need a generalised linear model",
            )
        })?;
        let cv = TaylorCv::new(view, centre)?;
        if let Sharing::Record(share) = self {
            share.mh_cv = Some(SharedMhCv {
                model: Arc::downgrade(model),
                at,
                cv: cv.clone(),
            });
        }
        Ok((cv, true))
    }

    /// [`Smh::new`] for `model` and `opts`, or a copy of the kept kernel for the same model,
    /// start ([`DataModel::initial_point`], where `Smh::new` starts its mode search) and
    /// options (its set-up cost then 0: the copy spent no evaluation); the first chain keeps
    /// its kernel ([`Sharing::Record`]).
    pub fn smh_kernel(
        &mut self,
        model: &Arc<dyn DataModel>,
        opts: &SmhOptions,
    ) -> Result<Smh, Error> {
        let start: Vec<u64> = model.initial_point().iter().map(|v| v.to_bits()).collect();
        if let Sharing::Reuse(share) = self {
            if let Some(e) = &share.smh {
                if same_model(&e.model, model) && e.start == start && same_options(&e.opts, opts) {
                    return Ok(e.kernel.clone().without_setup_cost());
                }
            }
        }
        let kernel = Smh::new(model.as_ref(), opts)?;
        if let Sharing::Record(share) = self {
            share.smh = Some(SharedSmh {
                model: Arc::downgrade(model),
                start,
                opts: *opts,
                kernel: kernel.clone(),
            });
        }
        Ok(kernel)
    }
}
