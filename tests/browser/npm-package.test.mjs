// The npm package (`make npm`, www/npm/build.mjs): its tarball installed with npm into an empty
// scratch site, which imports `tallmc/embed` through an import map and renders two live
// <tallmc-sampler> panels (a built-in data set and a CSV file of the site) plus a <tallmc-chain>,
// all loaded from node_modules/tallmc with no file copied by hand; Node resolves the package's
// exports; the TypeScript declarations type-check a use of the elements, their events and the
// wasm API, and reject a wrong one.
//
// The tarball is `TALLMC_NPM_TARBALL` when set (`make test` packs once with `make npm`), else
// packed here from www/ (a few seconds once www/pkg is built).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { ROOT, CHROMIUM } from './helpers.mjs';
import { startServer } from '../../www/serve.mjs';
import { buildPackage } from '../../www/npm/build.mjs';

let tmp;
let site;
let tarball;
let version;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-npm-'));
  if (process.env.TALLMC_NPM_TARBALL) {
    tarball = path.resolve(process.env.TALLMC_NPM_TARBALL);
    assert.ok(fs.existsSync(tarball), `${tarball} is missing: run \`make npm\``);
  } else {
    ({ tarball } = buildPackage({ out: path.join(tmp, 'pack') }));
  }
  // An empty site: a package.json and nothing else, then `npm install <tarball>` (no network:
  // the package has no dependencies).
  site = path.join(tmp, 'site');
  fs.mkdirSync(site);
  fs.writeFileSync(path.join(site, 'package.json'), JSON.stringify({ name: 'scratch-site', private: true, version: '1.0.0' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
    cwd: site, stdio: ['ignore', 'pipe', 'pipe'],
  });
  version = JSON.parse(fs.readFileSync(path.join(site, 'node_modules/tallmc/package.json'), 'utf8')).version;
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('the installed package is dependency-free and carries the element, its workers, the wasm and the declarations', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(site, 'node_modules/tallmc/package.json'), 'utf8'));
  assert.equal(pkg.name, 'tallmc');
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.dependencies, undefined);
  const cargo = fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8');
  assert.equal(pkg.version, cargo.match(/^version = "([^"]+)"/m)[1]);
  for (const f of ['embed.js', 'embed.d.ts', 'index.js', 'index.d.ts', 'run-client.js', 'chain-worker.js', 'diag-worker.js',
    'pkg/tallmc_web.js', 'pkg/tallmc_web_bg.wasm', 'pkg/tallmc_web.d.ts', 'README.md']) {
    assert.ok(fs.existsSync(path.join(site, 'node_modules/tallmc', f)), `node_modules/tallmc/${f}`);
  }
  // The element's modules and the wasm are www/'s, byte for byte (www/ is their one source; a
  // stale tarball fails here).
  for (const f of pkg.files.filter((x) => /\.(js|wasm)$/.test(x) && x !== 'index.js')) {
    assert.ok(fs.readFileSync(path.join(site, 'node_modules/tallmc', f)).equals(fs.readFileSync(path.join(ROOT, 'www', f))), `${f} differs from www/${f}`);
  }
  // The site's own lock file records only tallmc.
  const lock = JSON.parse(fs.readFileSync(path.join(site, 'package-lock.json'), 'utf8'));
  assert.deepEqual(Object.keys(lock.packages).filter((k) => k), ['node_modules/tallmc']);
  // Node resolves both exports (what bundlers do too), with their types conditions.
  const out = execFileSync(process.execPath, ['--input-type=module', '-e',
    "console.log(JSON.stringify([import.meta.resolve('tallmc/embed'), import.meta.resolve('tallmc')]))"], { cwd: site, encoding: 'utf8' });
  const [embedUrl, apiUrl] = JSON.parse(out);
  assert.ok(embedUrl.endsWith('/node_modules/tallmc/embed.js'), embedUrl);
  assert.ok(apiUrl.endsWith('/node_modules/tallmc/index.js'), apiUrl);
  assert.equal(pkg.exports['./embed'].types, './embed.d.ts');
  assert.equal(pkg.exports['.'].types, './index.d.ts');
  // The README's attribute reference names every attribute the element reads itself.
  const readme = fs.readFileSync(path.join(site, 'node_modules/tallmc/README.md'), 'utf8');
  const own = fs.readFileSync(path.join(site, 'node_modules/tallmc/embed.js'), 'utf8').match(/const OWN_ATTRS = new Set\(\[([^\]]+)\]/)[1];
  for (const a of own.match(/'[^']+'/g).map((s) => s.slice(1, -1))) assert.match(readme, new RegExp(`\\| \`${a}\``), `README: attribute ${a}`);
});

/** A small logistic-regression CSV (fixed pseudo-random stream; columns y,x1,x2). */
function logisticCsv(n) {
  let s = 4242;
  const u = () => { s = (1103515245 * s + 12345) % 2147483648; return (s + 0.5) / 2147483648; };
  const z = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const rows = ['y,x1,x2'];
  for (let i = 0; i < n; i++) {
    const x1 = z();
    const x2 = z();
    const p = 1 / (1 + Math.exp(-(0.3 + 1.0 * x1 - 0.5 * x2)));
    rows.push(`${u() < p ? 1 : 0},${x1.toFixed(6)},${x2.toFixed(6)}`);
  }
  return `${rows.join('\n')}\n`;
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>scratch site</title>
<link rel="icon" href="data:,">
<script type="importmap">{"imports":{"tallmc/embed":"./node_modules/tallmc/embed.js","tallmc":"./node_modules/tallmc/index.js"}}</script>
<script type="module">
  import 'tallmc/embed';
  import init, { version, DataSet, ChainHandle } from 'tallmc';
  window.events = [];
  // Live updates: each change of a panel's progress bar, with the panel's state at that moment.
  window.progress = { a: [], b: [] };
  for (const el of document.querySelectorAll('tallmc-sampler')) {
    const bar = el.shadowRoot.querySelector('[data-testid=embed-progress]');
    new MutationObserver(() => window.progress[el.id].push([el.dataset.state, bar.value]))
      .observe(bar, { attributes: true, attributeFilter: ['value'] });
  }
  for (const el of document.querySelectorAll('tallmc-sampler, tallmc-chain')) {
    for (const type of ['tallmc-done', 'tallmc-error']) {
      el.addEventListener(type, (e) => window.events.push({ id: el.id, type, detail: e.detail, isResult: e.detail === el.result }));
    }
  }
  // The wasm API on the page's thread, as in the package README.
  init().then(() => {
    const ds = DataSet.simulate('logistic', 1000, 3, 1n);
    const chain = new ChainHandle(JSON.stringify({ model: 'logistic', sampler: 'nuts', warmup: 50, seed: 1, chain: 0 }), ds);
    ds.free();
    const b = chain.run(100);
    window.api = { version: version(), n: b.n, d: b.d, draws: b.draws.length, names: chain.paramNames(), iteration: chain.iteration() };
    chain.free();
  }, (e) => { window.api = { error: String(e) }; });
</script></head><body>
<tallmc-sampler id="a" sampler="nuts" data="builtin:logistic" n="5000" d="3"
  chains="2" warmup="300" draws="1500" seed="1" autostart></tallmc-sampler>
<tallmc-sampler id="b" sampler="mh-minibatch" data="data/small.csv"
  chains="1" warmup="500" draws="250000" seed="7" step_size="0.05" label="minibatch MH on a CSV of this site"></tallmc-sampler>
<tallmc-chain id="c" model="logistic" sampler="mala" n="1000" d="3" warmup="100" draws="200" seed="3" autostart></tallmc-chain>
</body></html>`;

test('a scratch site with the installed tarball renders two live samplers in Chromium', async () => {
  fs.mkdirSync(path.join(site, 'data'));
  fs.writeFileSync(path.join(site, 'data/small.csv'), logisticCsv(1500));
  fs.writeFileSync(path.join(site, 'index.html'), PAGE);
  const { server, url } = await startServer({ root: site, host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    const requests = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
    page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.url()}`); });
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${url}index.html`);
    // b waits for its Run button (a starts by itself: autostart).
    await page.waitForFunction(() => ['a', 'b'].every((id) => document.getElementById(id).dataset.state), null, { timeout: 30000 });
    assert.deepEqual(await page.$eval('#b', (el) => [el.dataset.state, el.result, el.running]), ['idle', null, false]);
    await page.click('#b >> [data-testid=embed-run]');
    await page.waitForFunction(() => ['a', 'b'].every((id) => ['done', 'error', 'stopped'].includes(document.getElementById(id).dataset.state))
      && window.events.some((e) => e.id === 'c'), null, { timeout: 180000, polling: 200 });
    const res = await page.evaluate(() => ['a', 'b'].map((id) => {
      const el = document.getElementById(id);
      const root = el.shadowRoot;
      // Non-blank pixels of the trace and density canvases: the plots were drawn.
      const inked = (sel) => {
        const c = root.querySelector(sel);
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
        return n;
      };
      return {
        state: el.dataset.state,
        status: root.querySelector('[data-testid=embed-status]').textContent,
        title: root.querySelector('.title').textContent,
        result: el.result,
        rows: root.querySelectorAll('[data-testid=embed-diagnostics] tbody tr').length,
        trace: inked('[data-testid=embed-trace]'),
        density: inked('[data-testid=embed-density]'),
      };
    }));
    for (const r of res) {
      assert.equal(r.state, 'done', r.status);
      assert.match(r.status, /^done: \d+ draws$/);
      assert.equal(r.rows, 3);
      assert.ok(r.trace > 500 && r.density > 200, `${r.title}: plots drawn (${r.trace}, ${r.density} inked pixels)`);
      assert.deepEqual(r.result.names, ['intercept', 'x1', 'x2']);
      for (const m of r.result.mean) assert.ok(Number.isFinite(m), `${r.result.sampler}: mean ${m}`);
    }
    // Live: while running, each panel's progress bar moved through at least two values strictly
    // between 0 and 100 (the runs are sized to take a second or more: several 200 ms redraws;
    // b's 80 000 draws took 0.6 s on a fast host on 2026-11-28 and moved the bar through one
    // value only, so it runs 250 000).
    const progress = await page.evaluate(() => window.progress);
    for (const id of ['a', 'b']) {
      const live = new Set(progress[id].filter(([st, v]) => st === 'running' && v > 0 && v < 100).map(([, v]) => v));
      assert.ok(live.size >= 2, `${id}: progress while running ${JSON.stringify(progress[id])}`);
    }
    const [a, b] = res.map((r) => r.result);
    assert.equal(a.sampler, 'nuts');
    assert.deepEqual(a.iterations, [1800, 1800]);
    assert.equal(a.draws, 3000);
    assert.equal(b.sampler, 'mh-minibatch');
    assert.deepEqual(b.iterations, [250500]);
    assert.equal(b.nData, 1500, 'b read the site\'s CSV');
    assert.equal(res[1].title, 'minibatch MH on a CSV of this site');
    // The data were simulated with slope 1.0 on x1: NUTS on the built-in set and MH on the CSV
    // both put it well above zero.
    assert.ok(b.mean[1] > 0.5 && b.mean[1] < 1.6, `b: x1 ${b.mean[1]}`);
    // Events: tallmc-done once per panel with el.result as detail, and the chain's own; no errors.
    const events = await page.evaluate(() => window.events);
    assert.deepEqual(events.map((e) => `${e.id}:${e.type}`).sort(), ['a:tallmc-done', 'b:tallmc-done', 'c:tallmc-done']);
    for (const e of events.filter((x) => x.id !== 'c')) assert.ok(e.isResult, `${e.id}: detail is el.result`);
    const c = events.find((e) => e.id === 'c').detail;
    assert.equal(c.name, 'intercept');
    assert.equal(c.draws, 200);
    assert.equal(c.iterations, 300);
    assert.ok(Number.isFinite(c.mean) && c.sd > 0, `c: ${JSON.stringify(c)}`);
    // The "." export: the wasm API of the same build.
    const api = await page.evaluate(() => window.api);
    assert.deepEqual(api, { version, n: 100, d: 3, draws: 300, names: ['intercept', 'x1', 'x2'], iteration: 100 });
    assert.deepEqual(errors, []);
    // Every file came from the site, the element's from node_modules/tallmc (the workers and the
    // wasm included); nothing else was requested.
    const origin = new URL(url).origin;
    const paths = [...new Set(requests.filter((u) => !u.startsWith('data:')).map((u) => {
      assert.equal(new URL(u).origin, origin, u);
      return new URL(u).pathname;
    }))].sort();
    for (const p of ['/node_modules/tallmc/embed.js', '/node_modules/tallmc/chain-worker.js', '/node_modules/tallmc/diag-worker.js',
      '/node_modules/tallmc/pkg/tallmc_web_bg.wasm']) assert.ok(paths.includes(p), `requested ${p} (${paths.join(', ')})`);
    for (const p of paths) assert.ok(p === '/index.html' || p === '/data/small.csv' || p.startsWith('/node_modules/tallmc/'), p);
    await page.close();
  } finally {
    await browser.close();
    await new Promise((r) => server.close(r));
  }
});

const TS_CONFIG = {
  compilerOptions: {
    target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'esnext.disposable', 'dom'],
    strict: true, noEmit: true, types: [], skipLibCheck: false,
  },
};

const TS_GOOD = `import 'tallmc/embed';
import { TallmcSampler, registry } from 'tallmc/embed';
import type { TallmcSamplerAttributes, TallmcSamplerResult, TallmcSamplerState, TallmcChainResult } from 'tallmc/embed';
import init, { version, DataSet, ChainHandle, DrawStore } from 'tallmc';

const el: TallmcSampler | null = document.querySelector('tallmc-sampler');
const made: TallmcSampler = document.createElement('tallmc-sampler');
const attrs: TallmcSamplerAttributes = { sampler: 'hmc-ecs', data: 'builtin:logistic', chains: '2', autostart: '' };
for (const [k, v] of Object.entries(attrs)) made.setAttribute(k, v);
made.addEventListener('tallmc-done', (e) => {
  const r: TallmcSamplerResult = e.detail;
  const means: number[] = r.mean;
  const w: string[] = e.detail.warnings;
  console.log(means, w, r.extraMeans['batch_size']);
});
made.addEventListener('tallmc-error', (e) => console.log(e.detail.message.length));
document.createElement('tallmc-chain').addEventListener('tallmc-done', (e) => {
  const c: TallmcChainResult = e.detail;
  console.log(c.mean + c.sd);
});
const state = el?.dataset.state as TallmcSamplerState;
const running: boolean = made.running;
void made.start().then(() => made.stop());
console.log(state, running, made.result?.rhat[0]);

const reg = await registry();
console.log(reg.samplers.map((s) => s.params.map((p) => p.key)), reg.models[0].series);

await init();
const v: string = version();
const ds = DataSet.simulate('logistic', 1000, 3, 1n);
const chain = new ChainHandle(JSON.stringify({ model: 'logistic', sampler: 'nuts', seed: '1', chain: 0 }), ds);
const store = new DrawStore(1, chain.dim(), chain.signed());
const s: Float64Array = store.summary();
console.log(v, s);
export {};
`;

const TS_SMALL = `import 'tallmc/embed';
import type { TallmcSamplerResult } from 'tallmc/embed';
import init, { version } from 'tallmc';
document.createElement('tallmc-sampler').addEventListener('tallmc-done', (e) => {
  const r: TallmcSamplerResult = e.detail;
  console.log(r.mean);
});
await init();
const v: string = version();
console.log(v);
export {};
`;

/** Wrong uses, each of which the declarations must reject (with the error code expected). */
const TS_BAD = [
  ["document.createElement('tallmc-sampler').addEventListener('tallmc-done', (e) => { const s: string = e.detail.mean; console.log(s); });", 'TS2322'],
  ["document.createElement('tallmc-sampler').addEventListener('tallmc-error', (e) => console.log(e.detail.code));", 'TS2339'],
  ["const a: import('tallmc/embed').TallmcSamplerAttributes = { chains: 2 }; console.log(a);", 'TS2322'],
  ["document.createElement('tallmc-sampler').restart();", 'TS2551'], // "did you mean 'start'?"
  ["import('tallmc').then((m) => m.DataSet.simulate('logistic', 1000, 3, 1));", 'TS2345'],
];

function tsc(dir) {
  const bin = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  assert.ok(fs.existsSync(bin), 'typescript is missing: run `npm ci` (make node-deps)');
  return spawnSync(process.execPath, [bin, '-p', dir], { encoding: 'utf8' });
}

test('the TypeScript declarations type-check the elements, their attributes and events, and the wasm API', () => {
  const good = path.join(site, 'ts-good');
  fs.mkdirSync(good);
  fs.writeFileSync(path.join(good, 'tsconfig.json'), JSON.stringify({ ...TS_CONFIG, include: ['*.ts'] }));
  fs.writeFileSync(path.join(good, 'use.ts'), TS_GOOD);
  const ok = tsc(good);
  assert.equal(ok.status, 0, `tsc on a correct use:\n${ok.stdout}${ok.stderr}`);
  // The same entries resolve under Node's resolution (exports, .mts) and the older node10 one
  // (no exports: package.json's types, and embed.d.ts found next to embed.js). The declarations themselves were
  // checked above; here and below skipLibCheck saves checking lib.dom again.
  for (const [moduleResolution, module, file] of [['nodenext', 'nodenext', 'use.mts'], ['node10', 'esnext', 'use.ts']]) {
    const dir = path.join(site, `ts-${moduleResolution}`);
    fs.mkdirSync(dir);
    const compilerOptions = { ...TS_CONFIG.compilerOptions, module, moduleResolution, skipLibCheck: true };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts', '*.mts'] }));
    fs.writeFileSync(path.join(dir, file), TS_SMALL);
    const r = tsc(dir);
    assert.equal(r.status, 0, `tsc with moduleResolution ${moduleResolution}:\n${r.stdout}${r.stderr}`);
  }
  // Each wrong use (one file each) must fail with its error: the declarations are typed, not `any`.
  const bad = path.join(site, 'ts-bad');
  fs.mkdirSync(bad);
  fs.writeFileSync(path.join(bad, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...TS_CONFIG.compilerOptions, skipLibCheck: true }, include: ['*.ts'] }));
  TS_BAD.forEach(([line], i) => fs.writeFileSync(path.join(bad, `bad${i}.ts`), `import 'tallmc/embed';\n${line}\nexport {};\n`));
  const r = tsc(bad);
  assert.notEqual(r.status, 0, `tsc accepted every wrong use:\n${r.stdout}`);
  TS_BAD.forEach(([line, code], i) => {
    assert.match(r.stdout, new RegExp(`bad${i}\\.ts\\(2,\\d+\\): error ${code}`), `tsc did not reject: ${line}\n${r.stdout}`);
  });
  const errorsCount = (r.stdout.match(/error TS/g) ?? []).length;
  assert.equal(errorsCount, TS_BAD.length, r.stdout);
});
