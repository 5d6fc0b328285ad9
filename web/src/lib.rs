//! tallmc-web: thin wasm-bindgen bindings of tallmc-core for the browser playground.
//!
//! Opaque handles own everything in wasm memory: [`DataSet`] (a parsed or simulated table),
//! [`ChainHandle`] (model, chain and the chain's RNG stream) and [`DrawStore`] (draws for the
//! diagnostics). Values cross the boundary as typed arrays, one copy per batch. Every error reaches
//! JavaScript as a `JsError` whose message names the problem; user input has no panic path.
//!
//! The pure-Rust halves ([`ChainCore`], [`config::RunConfig`], [`registry_json`]) are usable and
//! tested natively; the `#[wasm_bindgen]` wrappers only convert.

use wasm_bindgen::prelude::*;

pub mod chain;
pub mod config;
pub mod data;
pub mod diag;
pub mod ksd;
pub mod registry;

pub use chain::{ChainCore, ChainHandle};
pub use data::DataSet;
pub use diag::DrawStore;
pub use ksd::KsdStore;
pub use registry::registry_json;

/// Install a panic hook that reports the panic message to the browser console (a panic is a bug:
/// user input errors are returned as `JsError`s). Idempotent; called by every constructor.
#[wasm_bindgen]
pub fn init() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                web_sys::console::error_1(&format!("tallmc-web panicked (a bug): {info}").into());
            }));
        });
    }
}

/// The crate version, so the page can show what it runs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Every sampler of the registry as JSON: `[{name, description, exact, signed, models, params}]`,
/// each param `{key, description, kind, default, min, max, choices}` (`default` null = automatic).
#[wasm_bindgen]
pub fn samplers() -> String {
    registry::samplers_json().to_string()
}

/// Every model of the registry as JSON: `[{name, description, regression, params}]`.
#[wasm_bindgen]
pub fn models() -> String {
    registry::models_json().to_string()
}

/// Turn any displayable error into a `JsError` carrying its message.
pub(crate) fn js_err(e: impl core::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}
