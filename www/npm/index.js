// The tallmc WebAssembly API (wasm-bindgen, `--target web`): call the default export once
// (`await init()`; it fetches pkg/tallmc_web_bg.wasm next to this module) before anything else.
// The same module instance backs `tallmc/embed`, so the wasm is fetched once per page.
export * from './pkg/tallmc_web.js';
export { default } from './pkg/tallmc_web.js';
