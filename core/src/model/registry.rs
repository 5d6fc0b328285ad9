//! Model registry: names, schemas and construction from a table.

use crate::data::{DesignSpec, Table};
use crate::error::Error;
use crate::model::DataModel;
use crate::registry::ModelInfo;
use crate::settings::Settings;
use alloc::sync::Arc;

/// Every model, in display order.
pub static MODELS: &[ModelInfo] = &[];

/// Build model `name`.
pub fn build(
    name: &str,
    _table: &Table,
    _design: &DesignSpec,
    _settings: &Settings,
) -> Result<Arc<dyn DataModel>, Error> {
    Err(Error::Unknown {
        what: "model",
        name: name.into(),
    })
}
