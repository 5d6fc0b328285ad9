// Interactive docs: every page under www/docs/ loads without errors, links back to the playground,
// and each embedded run completes. Every sampler exists, so a panel whose sampler (or model) is
// unavailable in this build fails the test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, WWW } from './helpers.mjs';

const PAGES = fs.readdirSync(path.join(WWW, 'docs')).filter((f) => f.endsWith('.html')).sort();

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('the playground links to the docs', async () => {
  const page = await env.browser.newPage();
  await page.goto(`${env.url}index.html`);
  assert.equal(await page.getAttribute('[data-testid=docs-link]', 'href'), 'docs/index.html');
  await page.close();
});

for (const file of PAGES) {
  test(`docs/${file}: loads without errors and every embedded run completes`, async () => {
    const page = await env.browser.newPage();
    const origin = new URL(env.url).origin;
    const errors = [];
    const foreign = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
    page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.url()}`); });
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin) foreign.push(u);
    });
    await page.goto(`${env.url}docs/${file}`);
    // Every panel settles into idle (ready to run) or unavailable (a failure, asserted below).
    await page.waitForFunction(() => [...document.querySelectorAll('tallmc-sampler')]
      .every((el) => ['idle', 'unavailable'].includes(el.dataset.state)), null, { timeout: 30000 });
    assert.ok(await page.locator('header.site nav a[href="../index.html"]').count() === 1, 'no link to the playground');
    const panels = await page.$$eval('tallmc-sampler', (els) => els.map((el) => ({
      id: el.id, sampler: el.getAttribute('sampler'), state: el.dataset.state,
    })));
    for (const p of panels) {
      assert.ok(p.id, `${file}: every panel has an id`);
      assert.notEqual(p.state, 'unavailable', `${file}#${p.id}: sampler ${p.sampler} is unavailable in this build`);
    }
    const runnable = panels.map((p) => p.id);
    // Run the panels of the page two at a time (two cores).
    for (let i = 0; i < runnable.length; i += 2) {
      const ids = runnable.slice(i, i + 2);
      await page.evaluate((xs) => { for (const id of xs) document.getElementById(id).start(); }, ids);
      try {
        await page.waitForFunction((xs) => xs.every((id) => ['done', 'error', 'stopped'].includes(document.getElementById(id).dataset.state)),
          ids, { timeout: 240000, polling: 200 });
      } catch (e) {
        const st = await page.evaluate((xs) => xs.map((id) => `${id}: ${document.getElementById(id).dataset.state} (${document.getElementById(id).shadowRoot.querySelector('[data-testid=embed-status]').textContent})`), ids);
        throw new Error(`${file}: runs did not finish: ${st.join('; ')}`, { cause: e });
      }
      for (const id of ids) {
        const r = await page.$eval(`#${id}`, (el) => ({
          state: el.dataset.state,
          status: el.shadowRoot.querySelector('[data-testid=embed-status]').textContent,
          mean: el.result?.mean,
        }));
        assert.equal(r.state, 'done', `${file}#${id}: ${r.status}`);
        assert.ok(r.mean.every(Number.isFinite), `${file}#${id}: means ${r.mean}`);
      }
    }
    assert.deepEqual(errors, []);
    assert.deepEqual(foreign, []);
    await page.close();
  });
}
