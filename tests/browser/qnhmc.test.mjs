// QNHMC's exactness depends on its settings: the default (adapt=freeze) is exact, the paper's
// continuous adaptation is not, and the playground labels the running configuration.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, errorText } from './helpers.mjs';

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
