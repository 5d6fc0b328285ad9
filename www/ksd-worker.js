// KSD worker: builds its own copy of the run's model from the configuration and a copy of the
// data, keeps a thinned subset of the kept draws of every chain with their exact scores (wasm
// KsdStore), and answers 'compute' with the kernel Stein discrepancy of the run so far and its
// trace against the iteration (IMQ kernel, c = 1, β = −1/2; tallmc_core::diag::ksd).
// A live request that comes sooner than BUSY × the last computation's time after it is answered
// with no result, so the KSD takes at most about 1/(BUSY + 1) of one core while chains run (the
// machine's cores are shared with the chain workers and the page); final requests always run.
import wasmInit, { DataSet, KsdStore } from './pkg/tallmc_web.js';

const BUSY = 3;
const ready = wasmInit();
let store = null;
let warmup = 0;
let lastEnd = -Infinity;
let lastMs = 0;

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
        warmup = msg.warmup ?? 0;
        lastEnd = -Infinity;
        lastMs = 0;
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
        if (msg.id !== 'final' && t0 - lastEnd < BUSY * lastMs) {
          self.postMessage({ type: 'ksd', id: msg.id, result: null, skipped: true });
          return;
        }
        const r = store.compute();
        if (r) {
          // Plot x: the iteration, warm-up included.
          const it = r.iterations;
          for (let i = 0; i < it.length; i++) it[i] += warmup;
        }
        lastEnd = performance.now();
        lastMs = lastEnd - t0;
        const out = { type: 'ksd', id: msg.id, result: r, ms: lastMs };
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
