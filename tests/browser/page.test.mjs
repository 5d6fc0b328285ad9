// The playground loads cleanly, and four NUTS chains on the built-in logistic data set reach the
// end with converged diagnostics, each chain in its own Worker (so sampling never runs on the main
// thread), and no request leaves the page's origin. Main-thread long tasks are printed, not
// asserted: their length depends on machine load, and timings never decide a test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, readDiagnostics, errorText } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('page loads with no console errors and lists the registry', async () => {
  const { page, errors, foreign } = await openPage(env);
  const samplers = await page.$$eval('[data-testid=sampler-select] option', (o) => o.map((x) => x.value));
  const models = await page.$$eval('[data-testid=model-select] option', (o) => o.map((x) => x.value));
  assert.ok(models.includes('logistic'), `models: ${models}`);
  assert.ok(samplers.length > 0, 'no sampler in the registry');
  for (const id of ['dataset-select', 'file-input', 'model-select', 'sampler-select', 'chains-input', 'draws-input',
    'seed-input', 'run-button', 'stop-button', 'progress', 'diagnostics-table', 'trace-plot', 'hist-plot',
    'acf-plot', 'pair-plot', 'error-message', 'export-csv']) {
    assert.equal(await page.locator(`[data-testid=${id}]`).count(), 1, `data-testid=${id}`);
  }
  assert.equal(await errorText(page), '');
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
});

test('logistic + nuts, 4 chains: finishes with R-hat < 1.01 and bulk ESS > 400', async () => {
  const { page, errors, foreign } = await openPage(
    env, '?dataset=logistic&n=10000&d=10&model=logistic&sampler=nuts&chains=4&warmup=1000&draws=1000&seed=1',
  );
  // Long tasks on the main thread (printed), and the Workers the run creates (asserted).
  await page.evaluate(() => {
    window.__workers = [];
    const W = window.Worker;
    window.Worker = class extends W {
      constructor(url, opts) { super(url, opts); window.__workers.push(String(url)); }
    };
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page), 'done', await errorText(page));
  assert.equal((await page.textContent('[data-testid=progress]')).trim(), 'done');
  assert.equal(await page.getAttribute('[data-testid=progress]', 'aria-valuenow'), '100');
  const diag = await readDiagnostics(page);
  const names = Object.keys(diag);
  assert.equal(names.length, 10, `parameters: ${names}`);
  assert.equal(names[0], 'intercept');
  for (const [p, r] of Object.entries(diag)) {
    assert.ok(r.rhat < 1.01, `${p}: R-hat ${r.rhat}`);
    assert.ok(r.ess_bulk > 400, `${p}: bulk ESS ${r.ess_bulk}`);
    assert.ok(r.ess_tail > 0 && Number.isFinite(r.mean) && r.sd > 0, `${p}: ${JSON.stringify(r)}`);
  }
  const workers = await page.evaluate(() => window.__workers);
  assert.equal(workers.filter((u) => u.endsWith('/chain-worker.js')).length, 4, `workers: ${workers}`);
  const longTasks = await page.evaluate(() => window.__longTasks);
  console.log(`main-thread long tasks (ms): ${longTasks.map(Math.round).join(' ') || 'none'}`);
  // The export holds every post-warm-up draw.
  const csv = await page.evaluate(() => window.tallmc.drawsCsv());
  const lines = csv.trim().split('\n');
  assert.equal(lines[0], ['chain', 'draw', ...names].join(','));
  assert.equal(lines.length, 1 + 4 * 1000);
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
});

test('the <tallmc-chain> embed widget runs a chain', async () => {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${env.url}embed.html`);
  await page.click('tallmc-chain >> button');
  await page.waitForFunction(
    () => /\(1000 draws\)$/.test(document.querySelector('tallmc-chain').shadowRoot.querySelector('.out').textContent),
    null, { timeout: 120000 },
  );
  const text = await page.evaluate(() => document.querySelector('tallmc-chain').shadowRoot.querySelector('.out').textContent);
  assert.match(text, /^x1: -?\d/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the URL query reproduces the configuration, and the share link round-trips it', async () => {
  const q = '?dataset=poisson&n=3000&d=4&model=poisson&sampler=nuts&chains=3&warmup=250&draws=750&seed=42&set.target_accept=0.9';
  const { page, errors } = await openPage(env, q);
  assert.equal(await page.inputValue('[data-testid=dataset-select]'), 'poisson');
  assert.equal(await page.inputValue('[data-testid=model-select]'), 'poisson');
  assert.equal(await page.inputValue('[data-testid=sampler-select]'), 'nuts');
  assert.equal(await page.inputValue('[data-testid=chains-input]'), '3');
  assert.equal(await page.inputValue('[data-testid=draws-input]'), '750');
  assert.equal(await page.inputValue('[data-testid=seed-input]'), '42');
  assert.equal(await page.inputValue('[data-setting=target_accept]'), '0.9');
  const href = await page.getAttribute('[data-testid=share-link]', 'href');
  const got = new URLSearchParams(href.slice(href.indexOf('?')));
  for (const [k, v] of new URLSearchParams(q)) assert.equal(got.get(k), v, `share link ${k}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('feature picker: an unchecked feature is left out of the model and the URL', async () => {
  const { page, errors } = await openPage(env, '?dataset=logistic&n=500&d=4&sampler=nuts&chains=1&warmup=100&draws=100&seed=1');
  await page.uncheck('[data-testid=features-picker] input[value=x2]');
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  assert.deepEqual(Object.keys(await readDiagnostics(page)), ['intercept', 'x1', 'x3']);
  assert.equal(new URL(page.url()).searchParams.get('features'), 'x1,x3');
  assert.deepEqual(errors, []);
  await page.close();
});
