// Compare mode: NUTS (the reference) and hmc-ecs on a built-in logistic data set; both rows show
// every posterior mean within 0.15 reference sd of the reference run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('compare mode: nuts and hmc-ecs agree within 0.15 sd on logistic data', async () => {
  const { page, errors, foreign } = await openPage(env,
    '?dataset=logistic&n=5000&d=4&model=logistic&sampler=nuts&chains=2&warmup=500&draws=1000&seed=1&compare=nuts;hmc-ecs');
  assert.equal(await page.inputValue('[data-testid=compare-reference]'), '0');
  await page.click('[data-testid=compare-run]');
  await page.waitForFunction(() => ['done', 'error', 'stopped'].includes(document.body.dataset.compare), null, { timeout: 180000, polling: 250 });
  const status = await page.textContent('[data-testid=compare-status]');
  assert.equal(await page.evaluate(() => document.body.dataset.compare), 'done', status);
  const rows = await page.$$eval('[data-testid=compare-table] tbody tr', (trs) => trs.map((tr) => {
    const o = { label: tr.querySelector('th').textContent };
    for (const td of tr.querySelectorAll('td[data-col]')) o[td.dataset.col] = Number(td.dataset.value);
    return o;
  }));
  assert.equal(rows.length, 2);
  assert.match(rows[0].label, /nuts \(reference\)/);
  assert.match(rows[1].label, /hmc-ecs/);
  for (const r of rows) {
    assert.ok(r.mean_dev < 0.15, `${r.label}: max |Δmean|/sd ${r.mean_dev}`);
    assert.ok(r.ess_per_s > 0 && r.ess_per_1000_grad > 0, `${r.label}: ESS rates ${r.ess_per_s}, ${r.ess_per_1000_grad}`);
    assert.ok(r.data_fraction > 0, `${r.label}: data fraction ${r.data_fraction}`);
    assert.ok(r.ksd > 0 && Number.isFinite(r.ksd), `${r.label}: KSD ${r.ksd}`);
  }
  // NUTS touches every datum per gradient (many times per iteration); hmc-ecs a small fraction.
  assert.ok(rows[0].data_fraction > 1, `nuts data fraction ${rows[0].data_fraction}`);
  assert.ok(rows[1].data_fraction < 0.5, `hmc-ecs data fraction ${rows[1].data_fraction}`);
  const st = await page.evaluate(() => window.tallmc.compare());
  console.log(JSON.stringify(st.results.map((r) => ({ meanDev: r.metrics.meanDev, sdDev: r.metrics.sdDev, minEss: r.metrics.minEss, frac: r.metrics.dataFraction }))), rows.map((r) => r.ksd));
  // One density curve per configuration, and a detail table per configuration.
  assert.ok(await page.locator('[data-testid=compare-density] canvas').count() > 0, 'density plot not drawn');
  assert.equal(await page.locator('[data-testid=compare-detail]').count(), 2);
  // The share link keeps the comparison; the form's sampler and settings can be added to it.
  assert.match(await page.getAttribute('[data-testid=share-link]', 'href'), /compare=nuts%3Bhmc-ecs/);
  await page.click('[data-testid=compare-clear]');
  await page.selectOption('[data-testid=sampler-select]', 'sgld');
  await page.fill('[data-setting=batch_size]', '50');
  await page.click('[data-testid=compare-add]');
  assert.deepEqual((await page.evaluate(() => window.tallmc.compare())).configs, ['sgld:batch_size=50']);
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
});

test('compare mode: a not-exact configuration (qnhmc adapt=continuous) is not the default reference', async () => {
  const { page, errors, foreign } = await openPage(env,
    '?dataset=logistic&n=500&d=2&model=logistic&sampler=nuts&chains=1&warmup=50&draws=50&seed=1&compare=qnhmc:adapt=continuous;qnhmc;nuts');
  await page.waitForFunction(() => {
    const sel = document.querySelector('[data-testid=compare-reference]');
    return sel && sel.options.length === 3 && sel.value !== '';
  }, null, { timeout: 30000 });
  assert.equal(await page.inputValue('[data-testid=compare-reference]'), '1');
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
});
