// Types of the tallmc WebAssembly API: wasm-bindgen's generated declarations, re-exported.
export * from './pkg/tallmc_web.js';
export { default } from './pkg/tallmc_web.js';
