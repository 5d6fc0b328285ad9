// Data worker: loads the wasm once, reports the registry, simulates built-in data sets and parses
// uploaded CSV files (the same parser as `tallmc run`), off the main thread.
import wasmInit, { DataSet, samplers, models, version } from './pkg/tallmc_web.js';

const ready = wasmInit();

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
        const values = ds.values();
        return {
          type: 'data',
          id: msg.id,
          names: ds.names(),
          nrows: ds.nrows(),
          values,
          ms: performance.now() - t0,
          transfer: [values.buffer],
        };
      } finally {
        ds.free();
      }
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
