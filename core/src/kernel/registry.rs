//! Sampler registry: names, schemas and chain construction.

use crate::chain::Chain;
use crate::error::Error;
use crate::model::DataModel;
use crate::registry::{ChainConfig, SamplerInfo};
use crate::rng::ChainRng;
use alloc::boxed::Box;
use alloc::sync::Arc;

/// Every sampler, in display order.
pub static SAMPLERS: &[SamplerInfo] = &[];

/// Build a chain.
pub fn build(
    config: &ChainConfig<'_>,
    _model: Arc<dyn DataModel>,
    _rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    Err(Error::Unknown {
        what: "sampler",
        name: config.sampler.into(),
    })
}
