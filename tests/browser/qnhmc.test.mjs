// QNHMC's exactness depends on its settings: the default (adapt=freeze) is exact, the paper's
// continuous adaptation is not, and the playground labels the running configuration.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, errorText, readDiagnostics } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

for (const [adapt, exact] of [['freeze', true], ['continuous', false]]) {
  test(`qnhmc adapt=${adapt} is labelled ${exact ? 'exact' : 'not exact'}`, async () => {
    const { page, errors } = await openPage(env,
      `?dataset=logistic&n=500&d=3&model=logistic&sampler=qnhmc&chains=1&warmup=50&draws=50&seed=1&set.adapt=${adapt}`);
    await page.click('[data-testid=run-button]');
    assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
    const desc = await page.textContent('#sampler-desc');
    assert.equal(/not exact with these settings/.test(desc), !exact, desc);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('simulated pmf ratings run with qnhmc (L-BFGS)', async () => {
  const { page, errors } = await openPage(env,
    '?dataset=pmf&n=1500&d=2&model=pmf&sampler=qnhmc&chains=2&warmup=100&draws=100&seed=4&set.rank=2&set.store=lbfgs');
  assert.equal(await page.inputValue('[data-testid=model-select]'), 'pmf');
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  const diag = await readDiagnostics(page);
  assert.equal(Object.keys(diag).length, (50 + 40) * 2);
  for (const [k, r] of Object.entries(diag)) assert.ok(Number.isFinite(r.mean), `${k}: mean ${r.mean}`);
  assert.deepEqual(errors, []);
  await page.close();
});
