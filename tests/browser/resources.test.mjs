// Bounded resources in the page (issue 19): a run too large to hold is refused with a clear
// message before draws accumulate, and a chain whose worker dies shows its error while the
// other chains go on to the end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, readDiagnostics, errorText } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('a run too large for the page is refused with its estimate', async () => {
  const { page, errors } = await openPage(env,
    '?dataset=logistic&n=200&d=3&model=logistic&sampler=rwmh&chains=16&warmup=0&draws=10000000&seed=1');
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 60000), 'error');
  const msg = await errorText(page);
  assert.match(msg, /draws: 16 chains × 10000000 iterations × 3 parameters would hold about [\d.]+ GB in this page \(limit 2\.0 GB\)/);
  // Said once, not once per chain.
  assert.equal(msg.split('would hold').length, 2, msg);
  assert.deepEqual(await page.evaluate(() => window.tallmc.chainStatus()), Array(16).fill('error'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a chain whose worker dies shows its error; the other chains finish', async () => {
  // Long enough (about a second per chain) that chain 2 is still running when the crash
  // message reaches it: with 20 000 draws a quiet machine once finished every chain between the
  // page seeing them all running and the message arriving.
  const { page } = await openPage(env,
    '?dataset=logistic&n=500&d=3&model=logistic&sampler=rwmh&chains=3&warmup=200&draws=200000&seed=1');
  await page.click('[data-testid=run-button]');
  await page.waitForFunction(() => window.tallmc.chainStatus().every((s) => s === 'running'), null, { timeout: 60000 });
  await page.evaluate(() => window.tallmc.crashChain(1));
  assert.equal(await waitForEnd(page, 120000), 'error');
  assert.deepEqual(await page.evaluate(() => window.tallmc.chainStatus()), ['done', 'error', 'done']);
  assert.match(await errorText(page), /^chain 2: .*crashed/);
  const iters = await page.evaluate(() => window.tallmc.iterations());
  assert.equal(iters[0], 200200);
  assert.equal(iters[2], 200200);
  // The diagnostics are those of the chains that finished.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=diagnostics-table] tbody tr').length > 0,
    null, { timeout: 60000 });
  const diag = await readDiagnostics(page);
  assert.deepEqual(Object.keys(diag), ['intercept', 'x1', 'x2']);
  for (const [k, r] of Object.entries(diag)) assert.ok(Number.isFinite(r.mean), `${k}: ${r.mean}`);
  await page.close();
});

test('a run the page can tell is too large is refused before any worker is created', async () => {
  const { page, errors } = await openPage(env,
    '?dataset=logistic&n=200&d=3&model=logistic&sampler=rwmh&chains=16&warmup=0&draws=10000000&seed=1');
  const workers = [];
  page.on('worker', (w) => workers.push(w.url()));
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 60000), 'error');
  const msg = await errorText(page);
  // The page's own estimate (3 parameters: x1, x2 and the intercept), as the ready check says it.
  assert.match(msg, /draws: 16 chains × 10000000 iterations × 3 parameters would hold about [\d.]+ GB in this page \(limit 2\.0 GB\)/);
  assert.equal(msg.split('would hold').length, 2, msg);
  assert.deepEqual(await page.evaluate(() => window.tallmc.chainStatus()), Array(16).fill('error'));
  // No chain, KSD or diagnostics worker was created for the run.
  assert.deepEqual(workers, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the run client refuses a plan over the limit without a worker (compare mode, embeds)', async () => {
  const { page, errors } = await openPage(env);
  const workers = [];
  page.on('worker', (w) => workers.push(w.url()));
  const r = await page.evaluate(async () => {
    const { ChainRun } = await import('./run-client.js');
    const seen = { started: 0, errors: [], ended: 0 };
    await new Promise((resolve) => {
      const run = new ChainRun({
        chains: 4,
        // d unknown before the worker (e.g. matrix factorisation): 1 is a lower bound.
        plan: { total: 1e8, dim: 1, exact: false },
        start: () => { seen.started += 1; return { msg: {} }; },
        onError: (ch, m) => seen.errors.push([ch.c, m]),
        onEnd: () => { seen.ended += 1; resolve(); },
      });
      seen.refused = run.refused;
      seen.status = () => run.chains.map((c) => c.status);
      seen.run = run;
    });
    return { ...seen, status: seen.status(), run: undefined };
  });
  assert.equal(r.started, 0);
  assert.equal(r.refused, true);
  assert.equal(r.ended, 1);
  assert.deepEqual(r.status, ['error', 'error', 'error', 'error']);
  assert.equal(r.errors.length, 4);
  assert.match(r.errors[0][1], /^draws: 4 chains × 100000000 iterations × at least 1 parameter would hold about 35\.2 GB in this page \(limit 2\.0 GB\)/);
  assert.deepEqual(workers, []);
  assert.deepEqual(errors, []);
  await page.close();
});
