// Every sampler of the registry can be selected and run on a suitable built-in data set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, readDiagnostics, errorText } from './helpers.mjs';

const BUILTIN = ['logistic', 'linear', 'robust', 'poisson', 'gmm', 'lgssm', 'sv', 'garch'];

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('every registry sampler runs', async (t) => {
  const { page, errors, foreign } = await openPage(env);
  const samplers = await page.evaluate(() => window.tallmc.registry.samplers.map((s) => ({ name: s.name, models: s.models })));
  await page.close();
  if (samplers.length === 0) {
    t.skip('the sampler registry is empty');
    return;
  }
  for (const s of samplers) {
    const dataset = s.models.length ? s.models.find((m) => BUILTIN.includes(m)) : 'logistic';
    assert.ok(dataset, `${s.name}: no built-in data set for models ${s.models}`);
    // PMMH runs a particle filter over the whole series per iteration with N growing with its
    // length (automatic `particles`), so its cost per iteration grows as T²: at T = 2 000 this
    // one case took 128 s of the suite's 333 s (2026-11-26); 300 points keep it a smoke test.
    const n = s.name === 'pmmh' ? 300 : 2000;
    await t.test(`${s.name} on ${dataset}`, async () => {
      const { page: p, errors: errs } = await openPage(env,
        `?dataset=${dataset}&n=${n}&d=3&model=${dataset}&sampler=${s.name}&chains=2&warmup=200&draws=200&seed=3`);
      assert.equal(await p.inputValue('[data-testid=sampler-select]'), s.name);
      await p.click('[data-testid=run-button]');
      assert.equal(await waitForEnd(p, 300000), 'done', await errorText(p));
      const diag = await readDiagnostics(p);
      assert.ok(Object.keys(diag).length > 0, 'empty diagnostics table');
      for (const [k, r] of Object.entries(diag)) assert.ok(Number.isFinite(r.mean), `${k}: mean ${r.mean}`);
      // HMC-ECS samplers show the per-iteration data fraction (and σ̂² for the perturbed one).
      const ecs = s.name.startsWith('hmc-ecs');
      assert.equal(await p.isVisible('[data-testid=data-fraction-plot]'), ecs, `${s.name}: data-fraction plot`);
      if (ecs) {
        assert.ok(await p.locator('[data-testid=data-fraction-plot] canvas').count() > 0, 'data-fraction plot not drawn');
        const cost = await p.textContent('[data-testid=cost-panel]');
        assert.match(cost, /mean subsample fraction per iteration/);
        assert.equal(await p.isVisible('[data-testid=sigma2-plot]'), s.name === 'hmc-ecs', `${s.name}: σ̂² plot`);
      }
      // Generic per-iteration diagnostics plot of the sampler's extras (hidden when it has none).
      const extras = await p.$$eval('[data-testid=extra-select] option', (os) => os.map((o) => o.textContent));
      assert.equal(await p.isVisible('[data-testid=extra-plot]'), extras.length > 0, `${s.name}: extra plot`);
      if (extras.length > 0) assert.ok(await p.locator('[data-testid=extra-plot] canvas').count() > 0, 'extra plot not drawn');
      const selected = () => p.$eval('[data-testid=extra-select]', (e) => e.selectedOptions[0]?.textContent);
      if (s.name === 'rwmh') assert.equal(await p.isVisible('[data-testid=extra-plot]'), false, 'rwmh: extra plot shown');
      if (s.name === 'mh-minibatch') {
        assert.ok(extras.includes('batch_size'), `mh-minibatch extras: ${extras}`);
        assert.equal(await selected(), 'batch_size');
        await p.selectOption('[data-testid=extra-select]', { label: extras[extras.length - 1] });
        assert.ok(await p.locator('[data-testid=extra-plot] canvas').count() > 0, 'extra plot not drawn after select');
      }
      // Signed HMC-ECS: the sign per iteration is the internal shown first, τ̂ in the cost panel.
      if (s.name === 'hmc-ecs-signed') {
        assert.ok(extras.includes('sign'), `hmc-ecs-signed extras: ${extras}`);
        assert.equal(await selected(), 'sign');
        assert.match(await p.textContent('[data-testid=cost-panel]'), /fraction of positive signs τ̂/);
      }
      // Particle methods: the filter's ESS.
      if (s.name === 'pf-sgld' || s.name === 'pmmh') {
        assert.ok(extras.includes('ess_min'), `${s.name} extras: ${extras}`);
        assert.equal(await selected(), 'ess_min');
      }
      if (s.name === 'smh-2') {
        assert.ok(extras.includes('points'), `smh-2 extras: ${extras}`);
        assert.equal(await selected(), 'points');
      }
      assert.deepEqual(errs, []);
      await p.close();
    });
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
});
