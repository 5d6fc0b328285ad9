// Stop halts every worker within one second; pause holds the chains and resume continues them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, errorText, waitForEnd } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const sum = (a) => a.reduce((s, v) => s + v, 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function iterations(page) {
  return page.evaluate(() => window.tallmc.iterations());
}

test('pause, resume and stop', async () => {
  const { page, errors } = await openPage(
    env, '?dataset=logistic&n=100000&d=10&model=logistic&sampler=nuts&chains=4&warmup=100000&draws=100000&seed=2',
  );
  await page.click('[data-testid=run-button]');
  await page.waitForFunction(() => window.tallmc.iterations().length === 4 && window.tallmc.iterations().every((i) => i > 0),
    null, { timeout: 60000, polling: 100 });

  await page.click('[data-testid=pause-button]');
  await sleep(600); // at most one batch after the message
  const p1 = await iterations(page);
  await sleep(700);
  assert.deepEqual(await iterations(page), p1, 'chains moved while paused');
  await page.click('[data-testid=pause-button]');
  await page.waitForFunction((before) => window.tallmc.iterations().reduce((s, v) => s + v, 0) > before,
    sum(p1), { timeout: 10000, polling: 50 });

  const t0 = Date.now();
  await page.click('[data-testid=stop-button]');
  await page.waitForFunction(() => document.body.dataset.state === 'stopped', null, { timeout: 5000, polling: 20 });
  const dt = Date.now() - t0;
  assert.ok(dt < 1000, `stop took ${dt} ms`);
  const s1 = await iterations(page);
  await sleep(500);
  assert.deepEqual(await iterations(page), s1, 'chains moved after stop');
  assert.notEqual((await page.textContent('[data-testid=progress]')).trim(), 'done');
  assert.equal(await errorText(page), '');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad setting is reported by name and the page keeps working', async () => {
  const { page, errors } = await openPage(
    env, '?dataset=logistic&n=500&d=3&model=logistic&sampler=nuts&chains=2&warmup=50&draws=50&seed=1&set.target_accept=7',
  );
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 60000), 'error');
  assert.match(await errorText(page), /target_accept/);
  // Fix the setting in the form and run again.
  await page.fill('[data-setting=target_accept]', '0.85');
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  assert.equal(await errorText(page), '');
  assert.deepEqual(errors, []);
  await page.close();
});
