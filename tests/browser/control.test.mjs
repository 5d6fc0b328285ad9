// Pause holds the chains and resume continues them; stop → state `stopped` → no chain moves again.
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

  // Pause: each worker acknowledges at a batch boundary; from then on its chain does not move.
  await page.click('[data-testid=pause-button]');
  await page.waitForFunction(() => window.tallmc.pausedAt().every((i) => i !== null), null,
    { timeout: 60000, polling: 50 });
  const p1 = await iterations(page);
  assert.deepEqual(await page.evaluate(() => window.tallmc.pausedAt()), p1, 'draws arrived after the pause acknowledgement');
  await sleep(1000); // several batches' worth: a chain still running would have moved
  assert.deepEqual(await iterations(page), p1, 'chains moved while paused');
  await page.click('[data-testid=pause-button]');
  await page.waitForFunction((before) => window.tallmc.iterations().reduce((s, v) => s + v, 0) > before,
    sum(p1), { timeout: 10000, polling: 50 });

  // Stop: the order of events, not their timing (the stop latency is measured by `make bench`).
  // Every chain's iteration count is frozen once the state reads `stopped`, and stays frozen.
  await page.click('[data-testid=stop-button]');
  await page.waitForFunction(() => document.body.dataset.state === 'stopped', null, { timeout: 60000, polling: 20 });
  const s1 = await iterations(page);
  assert.equal(s1.length, 4);
  assert.ok(sum(s1) >= sum(p1), 'iterations went backwards');
  await sleep(1000); // several batches' worth: a chain still running would have moved
  assert.deepEqual(await iterations(page), s1, 'chains moved after stop');
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'stopped');
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
