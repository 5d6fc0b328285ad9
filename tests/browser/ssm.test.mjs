// Time series in the playground: the built-in simulated lgssm series runs with pf-sgld (the
// filter window and its ESS are drawn, the window start and filter ESS are per-iteration
// extras), pmmh on sv draws the full-series ESS, and a sampler that does not apply to time
// series is not offered for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, readDiagnostics, errorText } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('pf-sgld on the built-in lgssm series shows the filter window and ESS', async () => {
  const { page: p, errors } = await openPage(env,
    '?dataset=lgssm&n=1000&model=lgssm&sampler=pf-sgld&chains=2&warmup=100&draws=300&seed=2&set.particles=50');
  assert.equal(await p.inputValue('[data-testid=sampler-select]'), 'pf-sgld');
  const offered = await p.$$eval('[data-testid=sampler-select] option', (os) => os.map((o) => o.value));
  assert.ok(offered.includes('pmmh') && !offered.includes('sgld'), `offered on lgssm: ${offered}`);
  await p.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(p, 300000), 'done', await errorText(p));
  const diag = await readDiagnostics(p);
  for (const k of ['phi', 'sigma', 'tau']) assert.ok(Number.isFinite(diag[k]?.mean), `${k}: ${JSON.stringify(diag[k])}`);
  assert.ok(diag.phi.mean > 0.5 && diag.phi.mean < 1.0, `phi mean ${diag.phi.mean}`);
  // natural scale (DESIGN.md): sigma and tau, not their logs
  assert.ok(diag.sigma.mean > 0 && diag.tau.mean > 0, `sigma ${diag.sigma.mean}, tau ${diag.tau.mean}`);
  assert.ok(await p.isVisible('[data-testid=window-plot]'), 'window plot hidden');
  const extras = await p.$$eval('[data-testid=extra-select] option', (os) => os.map((o) => o.textContent));
  for (const e of ['window_start', 'ess_min', 'ess_mean']) assert.ok(extras.includes(e), `extras: ${extras}`);
  // the canvas has been drawn on (some non-transparent pixels)
  const drawn = await p.$eval('#window-canvas', (c) => c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 3 && v > 0));
  assert.ok(drawn, 'window canvas is blank');
  assert.deepEqual(errors, []);
  await p.close();
});

test('pmmh on the built-in sv series, and an i.i.d. model hides the window plot', async () => {
  const { page: p, errors } = await openPage(env,
    '?dataset=sv&n=300&model=sv&sampler=pmmh&chains=1&warmup=100&draws=100&seed=2&set.particles=30');
  await p.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(p, 300000), 'done', await errorText(p));
  assert.ok(await p.isVisible('[data-testid=window-plot]'), 'window plot hidden for pmmh');
  await p.close();
  const { page: q } = await openPage(env, '?dataset=logistic&n=200&d=2&model=logistic&sampler=rwmh&chains=1&warmup=50&draws=50');
  const offered = await q.$$eval('[data-testid=sampler-select] option', (os) => os.map((o) => o.value));
  assert.ok(!offered.includes('pf-sgld') && !offered.includes('pmmh'), `offered on logistic: ${offered}`);
  await q.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(q, 300000), 'done', await errorText(q));
  assert.equal(await q.isVisible('[data-testid=window-plot]'), false, 'window plot shown for rwmh');
  assert.deepEqual(errors, []);
  await q.close();
});
