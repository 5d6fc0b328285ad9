// KSD worker: builds its own copy of the run's model from the configuration and a copy of the
// data, keeps a thinned subset of the kept draws of every chain with their exact scores (wasm
// KsdStore), and answers 'compute' with the kernel Stein discrepancy of the run so far and its
// trace against the iteration (IMQ kernel, c = 1, β = −1/2; tallmc_core::diag::ksd).
import wasmInit, { DataSet, KsdStore } from './pkg/tallmc_web.js';

const ready = wasmInit();
let store = null;

function message(e) {
  return e && e.message ? e.message : String(e);
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    await ready;
    switch (msg.type) {
      case 'start': {
        if (store) store.free();
        store = null;
        const ds = DataSet.fromColumns(msg.names, msg.values);
        try {
          store = new KsdStore(JSON.stringify(msg.config), ds, msg.chains, msg.signed, msg.maxDraws ?? 0);
        } finally {
          ds.free();
        }
        break;
      }
      case 'push':
        if (store) store.push(msg.chain, msg.draws, msg.signs ?? new Float64Array(0));
        break;
      case 'compute': {
        if (!store) {
          self.postMessage({ type: 'ksd', id: msg.id, result: null });
          return;
        }
        const t0 = performance.now();
        const r = store.compute();
        const out = { type: 'ksd', id: msg.id, result: r, ms: performance.now() - t0 };
        self.postMessage(out, r ? [r.iterations.buffer, r.ksd.buffer] : []);
        break;
      }
      default:
        break;
    }
  } catch (e) {
    self.postMessage({ type: 'error', id: msg.id, message: message(e) });
  }
};
