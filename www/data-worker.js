// Data worker: loads the wasm once, reports the registry, simulates built-in data sets and parses
// uploaded CSV files (the same parser as `tallmc run`), off the main thread.
import wasmInit, { DataSet, samplers, models, version } from './pkg/tallmc_web.js';

const ready = wasmInit();
// The current data set stays here; chain workers get their own copies (made in this worker, then
// transferred), so the main thread never copies large arrays.
let current = null;

function message(e) {
  return e && e.message ? e.message : String(e);
}

async function handle(msg) {
  await ready;
  switch (msg.type) {
    case 'registry':
      return {
        type: 'registry',
        samplers: JSON.parse(samplers()),
        models: JSON.parse(models()),
        version: version(),
      };
    case 'simulate':
    case 'csv': {
      const t0 = performance.now();
      const ds = msg.type === 'simulate'
        ? DataSet.simulate(msg.model, msg.n, msg.d, BigInt(msg.seed))
        : DataSet.fromCsv(new Uint8Array(msg.bytes), msg.name);
      try {
        current = { key: msg.key, names: ds.names(), nrows: ds.nrows(), values: ds.values() };
        return {
          type: 'data',
          id: msg.id,
          key: msg.key,
          names: current.names,
          nrows: current.nrows,
          ms: performance.now() - t0,
        };
      } finally {
        ds.free();
      }
    }
    case 'copies': {
      if (!current || current.key !== msg.key) throw new Error('the data set is no longer loaded; load it again');
      const copies = Array.from({ length: msg.k }, () => current.values.slice());
      return { type: 'copies', id: msg.id, copies, transfer: copies.map((c) => c.buffer) };
    }
    default:
      throw new Error(`data worker: unknown message ${msg.type}`);
  }
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    const out = await handle(msg);
    const transfer = out.transfer ?? [];
    delete out.transfer;
    self.postMessage(out, transfer);
  } catch (e) {
    self.postMessage({ type: 'error', id: msg.id, message: message(e) });
  }
};
