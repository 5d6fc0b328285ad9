// Diagnostics worker: accumulates post-warm-up draws of every chain in a wasm DrawStore and
// answers summary / autocorrelation requests (R-hat, bulk/tail ESS, MCSE from tallmc's core).
import wasmInit, { DrawStore } from './pkg/tallmc_web.js';

const ready = wasmInit();
let store = null;

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    await ready;
    switch (msg.type) {
      case 'reset':
        if (store) store.free();
        store = new DrawStore(msg.chains, msg.d, msg.signed);
        break;
      case 'push':
        if (store) store.push(msg.chain, msg.draws, msg.signs ?? new Float64Array(0));
        break;
      case 'summary': {
        if (!store) return;
        const t0 = performance.now();
        const summary = store.summary();
        const acf = msg.acfParam >= 0 ? store.acf(msg.acfParam, msg.maxLag) : new Float64Array(0);
        // The final summary carries the CLI's convergence warnings (R-hat, ESS, divergences, stuck chains).
        const warnings = msg.names ? store.warnings(msg.names, Uint32Array.from(msg.divergent ?? [])) : null;
        self.postMessage(
          { type: 'summary', id: msg.id, summary, acf, acfParam: msg.acfParam, warnings, ms: performance.now() - t0 },
          [summary.buffer, acf.buffer],
        );
        break;
      }
      default:
        break;
    }
  } catch (e) {
    self.postMessage({ type: 'error', id: msg.id, message: e && e.message ? e.message : String(e) });
  }
};
