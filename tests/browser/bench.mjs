// Benchmark (not a test): the same seeded NUTS chain on the same CSV, natively (`tallmc run`,
// warm-up + sampling seconds from run.json) and in headless Chromium (time inside the worker's
// `run` calls). Prints the wasm/native time ratio from one run. Then the playground's stop
// latency: the time from a click on Stop until every chain's worker has stopped (page state
// `stopped`), three times during a 4-chain NUTS run.  `make bench`
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { setup, openPage, waitForEnd, errorText, ROOT } from './helpers.mjs';

const N = Number(process.env.BENCH_N ?? 20000);
const D = 9; // features (10 parameters with the intercept)
const WARMUP = 300;
const DRAWS = 300;
const SEED = 1;

function makeCsv() {
  let s = 987654321n;
  const u = () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return (Number(s >> 11n) + 0.5) / 2 ** 53;
  };
  const normal = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const lines = [['y', ...Array.from({ length: D }, (_, j) => `x${j + 1}`)].join(',')];
  for (let i = 0; i < N; i++) {
    const x = Array.from({ length: D }, () => normal().toFixed(6));
    const eta = 0.2 + x.reduce((a, v, j) => a + (j % 2 ? -0.3 : 0.3) * Number(v), 0);
    lines.push([u() < 1 / (1 + Math.exp(-eta)) ? 1 : 0, ...x].join(','));
  }
  return lines.join('\n') + '\n';
}

const cli = path.join(ROOT, 'target/release/tallmc');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-bench-'));
const data = path.join(dir, 'data.csv');
const text = makeCsv();
fs.writeFileSync(data, text);
execFileSync(cli, ['run', '--data', data, '--model', 'logistic', '--response', 'y', '--sampler', 'nuts', '--chains', '1',
  '--warmup', String(WARMUP), '--draws', String(DRAWS), '--seed', String(SEED), '--out', path.join(dir, 'out')],
{ stdio: ['ignore', 'ignore', 'inherit'] });
const runJson = JSON.parse(fs.readFileSync(path.join(dir, 'out/run.json'), 'utf8'));
const cd = runJson.chain_details[0];
const nativeS = cd.warmup_seconds + cd.sampling_seconds;

const env = await setup();
let wasmS;
const stopMs = [];
try {
  const { page } = await openPage(env,
    `?dataset=csv&model=logistic&sampler=nuts&chains=1&warmup=${WARMUP}&draws=${DRAWS}&seed=${SEED}&response=y`);
  await page.setInputFiles('[data-testid=file-input]', { name: 'data.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
  await page.waitForFunction(() => /data\.csv: \d+ rows/.test(document.querySelector('[data-testid=data-info]').textContent));
  await page.click('[data-testid=run-button]');
  const st = await waitForEnd(page);
  if (st !== 'done') throw new Error(`browser run ended ${st}: ${await errorText(page)}`);
  wasmS = (await page.evaluate(() => window.tallmc.computeMs()))[0] / 1000;
  await page.close();
  for (let k = 0; k < 3; k++) {
    const { page: p } = await openPage(env,
      '?dataset=logistic&n=100000&d=10&model=logistic&sampler=nuts&chains=4&warmup=100000&draws=100000&seed=2');
    await p.click('[data-testid=run-button]');
    await p.waitForFunction(() => window.tallmc.iterations().length === 4 && window.tallmc.iterations().every((i) => i > 0),
      null, { timeout: 120000, polling: 100 });
    await new Promise((r) => setTimeout(r, 1000));
    stopMs.push(await p.evaluate(() => new Promise((resolve) => {
      const t0 = performance.now();
      document.querySelector('[data-testid=stop-button]').click();
      const poll = () => (document.body.dataset.state === 'stopped' ? resolve(performance.now() - t0) : setTimeout(poll, 2));
      poll();
    })));
    await p.close();
  }
} finally {
  await env.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`logistic n=${N} d=${D + 1}, nuts, 1 chain, ${WARMUP}+${DRAWS} iterations, seed ${SEED}`);
console.log(`native ${nativeS.toFixed(3)} s   wasm (headless Chromium) ${wasmS.toFixed(3)} s   ratio wasm/native ${(wasmS / nativeS).toFixed(2)}`);
console.log(`stop latency (click → every worker stopped), 4 nuts chains: ${stopMs.map((v) => v.toFixed(0)).join(', ')} ms (median ${[...stopMs].sort((a, b) => a - b)[1].toFixed(0)} ms)`);
