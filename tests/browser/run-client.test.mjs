// One run client (issue 18 item 6): the playground (app.js, ksd.js), compare mode (compare.js)
// and the <tallmc-sampler> element (embed.js) create no chain, diagnostics or KSD worker of
// their own; every one is created by www/run-client.js. Checked twice: in the sources, and in
// the browser by the module that constructs each Worker (the first page script on the stack).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, WWW } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const CONSUMERS = ['app.js', 'ksd.js', 'compare.js', 'embed.js'];
const RUN_WORKERS = ['chain-worker.js', 'diag-worker.js', 'ksd-worker.js'];

test('the consumers name no run worker and construct none', () => {
  for (const f of CONSUMERS) {
    const src = fs.readFileSync(path.join(WWW, f), 'utf8');
    // A worker script as a module URL ('./diag-worker.js'), not a mention in a comment.
    for (const w of RUN_WORKERS) assert.ok(!new RegExp(`['"\`]\\./${w.replace('.', '\\.')}`).test(src), `${f} names ${w}`);
    // The only Worker a consumer constructs is the playground's data worker (parsing, not runs).
    const made = [...src.matchAll(/new Worker\(([^)]*\))/g)].map((m) => m[1]);
    assert.deepEqual(made, f === 'app.js' ? ["new URL('./data-worker.js', import.meta.url)"] : [], `${f}: ${made}`);
  }
});

/** Record each Worker the page constructs: its script and the page module that called `new Worker`. */
function recordWorkers() {
  window.__workers = [];
  const W = window.Worker;
  window.Worker = class extends W {
    constructor(url, opts) {
      super(url, opts);
      const frames = String(new Error().stack).split('\n').slice(1);
      const by = frames.map((l) => /\/([\w.-]+\.js)(?:\?[^:]*)?:\d+:\d+/.exec(l)?.[1]).find(Boolean) ?? '?';
      window.__workers.push({ url: String(url).split('/').pop(), by });
    }
  };
}

/** The run workers of `list` grouped as `script <- creator` with counts. */
function tally(list) {
  const out = {};
  for (const { url, by } of list) {
    if (!RUN_WORKERS.includes(url)) continue;
    const k = `${url} <- ${by}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

async function newPage() {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(recordWorkers);
  return { page, errors };
}

test('playground and compare mode: every chain, diagnostics and KSD worker comes from run-client.js', async () => {
  const { page, errors } = await newPage();
  await page.goto(`${env.url}index.html?dataset=logistic&n=300&d=2&model=logistic&sampler=rwmh&chains=2&warmup=100&draws=200&seed=1&compare=rwmh;mala`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
  await page.click('[data-testid=run-button]');
  await page.waitForFunction(() => document.body.dataset.state === 'done', null, { timeout: 120000, polling: 200 });
  await page.waitForFunction(() => document.querySelector('[data-testid=ksd-value]')?.dataset.final === 'true',
    null, { timeout: 120000, polling: 200 });
  const single = tally(await page.evaluate(() => window.__workers));
  // Two chains, one diagnostics worker, one KSD worker.
  assert.deepEqual(single, {
    'chain-worker.js <- run-client.js': 2, 'diag-worker.js <- run-client.js': 1, 'ksd-worker.js <- run-client.js': 1,
  });
  await page.click('[data-testid=compare-run]');
  await page.waitForFunction(() => ['done', 'error', 'stopped'].includes(document.body.dataset.compare), null, { timeout: 180000, polling: 250 });
  assert.equal(await page.evaluate(() => document.body.dataset.compare), 'done', await page.textContent('[data-testid=compare-status]'));
  // Two configurations more: per configuration two chains, a diagnostics and a KSD worker.
  assert.deepEqual(tally(await page.evaluate(() => window.__workers)), {
    'chain-worker.js <- run-client.js': 6, 'diag-worker.js <- run-client.js': 3, 'ksd-worker.js <- run-client.js': 3,
  });
  assert.deepEqual(errors, []);
  await page.close();
});

test('<tallmc-sampler>: its chain and diagnostics workers come from run-client.js', async () => {
  const { page, errors } = await newPage();
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>embed</title>
<link rel="icon" href="data:,"><script type="module" src="/embed.js"></script></head><body>
<tallmc-sampler id="a" model="logistic" sampler="rwmh" data="builtin:logistic" n="300" d="2"
  chains="2" warmup="100" draws="200" seed="1"></tallmc-sampler></body></html>`;
  await page.route(`${env.url}__test__/embed.html`, (r) => r.fulfill({ contentType: 'text/html', body: html }));
  await page.goto(`${env.url}__test__/embed.html`);
  await page.waitForFunction(() => document.getElementById('a').dataset.state === 'idle', null, { timeout: 30000 });
  await page.click('#a >> [data-testid=embed-run]');
  await page.waitForFunction(() => ['done', 'error', 'stopped'].includes(document.getElementById('a').dataset.state),
    null, { timeout: 120000, polling: 200 });
  assert.equal(await page.evaluate(() => document.getElementById('a').dataset.state), 'done');
  assert.ok(await page.evaluate(() => document.getElementById('a').result.essBulk.every((e) => e > 0)));
  assert.deepEqual(tally(await page.evaluate(() => window.__workers)), {
    'chain-worker.js <- run-client.js': 2, 'diag-worker.js <- run-client.js': 1,
  });
  assert.deepEqual(errors, []);
  await page.close();
});
