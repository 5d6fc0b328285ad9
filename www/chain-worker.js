// Chain worker: owns one chain in wasm memory and steps it in batches, posting draws and per-draw
// statistics as transferred typed arrays. Honours pause / resume / stop between batches.
import wasmInit, { ChainHandle, DataSet } from './pkg/tallmc_web.js';

const ready = wasmInit();
const TARGET_MS = 40; // aim for batches of about this long, so control messages are seen quickly

let handle = null;
let chain = 0;
let total = 0;
let paused = false;
let stopped = false;
let wake = null;
let computeMs = 0;

function message(e) {
  return e && e.message ? e.message : String(e);
}

// Yield to the event loop so pause/stop messages are handled between batches.
const channel = new MessageChannel();
let pendingYield = null;
channel.port1.onmessage = () => {
  const r = pendingYield;
  pendingYield = null;
  if (r) r();
};
function yieldNow() {
  return new Promise((r) => {
    pendingYield = r;
    channel.port2.postMessage(0);
  });
}

async function loop() {
  let batch = 1;
  while (!stopped && handle.iteration() < total) {
    if (paused) {
      // Acknowledge: every batch before this message has been posted, none follows until resume.
      self.postMessage({ type: 'paused', chain, iteration: handle.iteration() });
      await new Promise((r) => { wake = r; });
      continue;
    }
    const k = Math.min(batch, total - handle.iteration());
    const t0 = performance.now();
    const b = handle.run(k);
    const dt = performance.now() - t0;
    computeMs += dt;
    // Grow or shrink the batch towards TARGET_MS (at most doubling per step).
    const rate = k / Math.max(dt, 0.05);
    batch = Math.max(1, Math.min(2 * k, Math.round(rate * TARGET_MS), 20000));
    self.postMessage(
      { type: 'batch', chain, batch: b, iteration: handle.iteration(), computeMs, trace: handle.windowTrace() },
      [b.draws.buffer, b.acceptProb.buffer, b.divergent.buffer, b.likEvals.buffer,
        b.gradEvals.buffer, b.nLeapfrog.buffer, b.stepSize.buffer, b.energy.buffer,
        b.sign.buffer, b.extra.buffer],
    );
    await yieldNow();
  }
  self.postMessage({ type: stopped ? 'stopped' : 'done', chain, iteration: handle.iteration(), computeMs });
  handle.free();
  handle = null;
  self.close(); // tear down here rather than by terminate() on the main thread
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  switch (msg.type) {
    case 'start': {
      chain = msg.config.chain;
      try {
        await ready;
        let ds;
        if (msg.simulate) ds = DataSet.simulate(msg.simulate.model, msg.simulate.n, msg.simulate.d, BigInt(msg.simulate.seed));
        else if (msg.csv) ds = DataSet.fromCsv(new Uint8Array(msg.csv.bytes), msg.csv.name); // CSV bytes (embed: a same-origin URL)
        else ds = DataSet.fromColumns(msg.names, msg.values);
        try {
          handle = new ChainHandle(JSON.stringify(msg.config), ds);
        } finally {
          ds.free();
        }
        total = handle.warmup() + msg.draws;
        self.postMessage({
          type: 'ready',
          chain,
          paramNames: handle.paramNames(),
          dim: handle.dim(),
          signed: handle.signed(),
          exact: handle.exact(),
          nData: handle.nData(),
          extraNames: handle.extraNames(),
          extrasPerStep: handle.extrasPerStep(),
          warmup: handle.warmup(),
          total,
          setupLikEvals: handle.setupLikEvals(),
          setupGradEvals: handle.setupGradEvals(),
        });
      } catch (e) {
        self.postMessage({ type: 'error', chain, message: message(e) });
        return;
      }
      loop().catch((e) => self.postMessage({ type: 'error', chain, message: message(e) }));
      break;
    }
    case 'crash':
      // Test hook (window.tallmc.crashChain): die as a worker does on an uncaught error.
      setTimeout(() => { throw new Error('chain worker crashed (test hook)'); });
      break;
    case 'pause':
      paused = true;
      break;
    case 'resume':
      paused = false;
      if (wake) { const w = wake; wake = null; w(); }
      break;
    case 'stop':
      stopped = true;
      paused = false;
      if (wake) { const w = wake; wake = null; w(); }
      break;
    default:
      break;
  }
};
