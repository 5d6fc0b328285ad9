// Convergence warnings a user can act on: a short random-walk run on raw-scale data gets the
// same warning lines in the playground (`data-testid=warnings`) as `tallmc run` records in
// run.json and prints on stderr (R-hat > 1.01, ESS < 100, …); a converged run shows none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { setup, openPage, waitForEnd, errorText, ROOT } from './helpers.mjs';

const CLI = path.join(ROOT, 'target/release/tallmc');
let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

function csv(n) {
  let s = 20261125n;
  const u = () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return (Number(s >> 11n) + 0.5) / 2 ** 53;
  };
  const lines = ['y,age,female'];
  for (let i = 0; i < n; i++) {
    const age = 18 + 62 * u();
    const female = u() < 0.5 ? 1 : 0;
    const eta = -2 + 0.04 * age - 0.5 * female;
    lines.push(`${u() < 1 / (1 + Math.exp(-eta)) ? 1 : 0},${age.toFixed(1)},${female}`);
  }
  return lines.join('\n') + '\n';
}

async function both(sampler, warmup, draws) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-warn-'));
  const text = csv(500);
  fs.writeFileSync(path.join(dir, 'data.csv'), text);
  const args = ['run', '--data', path.join(dir, 'data.csv'), '--model', 'logistic', '--response', 'y',
    '--sampler', sampler, '--chains', '2', '--warmup', String(warmup), '--draws', String(draws), '--seed', '3',
    '--ksd-draws', '0', '--out', path.join(dir, 'out')];
  const cliRun = spawnSync(CLI, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  assert.equal(cliRun.status, 0, cliRun.stderr);
  const stderr = cliRun.stderr;
  const cli = JSON.parse(fs.readFileSync(path.join(dir, 'out/run.json'), 'utf8')).warnings;
  for (const w of cli) assert.ok(stderr.includes(`warning: ${w}`), `not printed: ${w}`);
  const q = `?dataset=csv&model=logistic&sampler=${sampler}&chains=2&warmup=${warmup}&draws=${draws}&seed=3&response=y&ksd=0`;
  const { page, errors } = await openPage(env, q);
  await page.setInputFiles('[data-testid=file-input]', { name: 'data.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
  await page.waitForFunction(() => /data\.csv: 500 rows/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  const web = await page.$$eval('[data-testid=warnings] li', (ls) => ls.map((l) => l.textContent));
  const hidden = await page.$eval('[data-testid=warnings]', (e) => e.hidden);
  assert.deepEqual(errors, []);
  await page.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { cli, web, hidden };
}

test('a short random-walk run: the page shows the warnings tallmc run prints', async () => {
  const { cli, web, hidden } = await both('rwmh', 20, 60);
  // 20 warm-up iterations leave a random walk poorly tuned: too few effective draws, or a chain
  // that (almost) never moved, whose ESS is then NaN (issue 19) and which is named as stuck.
  assert.ok(cli.some((w) => w.startsWith('effective sample size < 100') || / is stuck: /.test(w)), JSON.stringify(cli));
  assert.equal(hidden, false);
  assert.deepEqual(web, cli.map((w) => `Warning: ${w}`));
});

test('a converged run: no warnings', async () => {
  const { cli, web, hidden } = await both('nuts', 300, 600);
  assert.deepEqual(cli, []);
  assert.deepEqual(web, []);
  assert.equal(hidden, true);
});

// The embedded panel (<tallmc-sampler>) shows the same lines under its table and in `result.warnings`.
async function embed(sampler, warmup, draws) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-warn-embed-'));
  const text = csv(500);
  fs.writeFileSync(path.join(dir, 'data.csv'), text);
  const args = ['run', '--data', path.join(dir, 'data.csv'), '--model', 'logistic', '--response', 'y',
    '--sampler', sampler, '--chains', '2', '--warmup', String(warmup), '--draws', String(draws), '--seed', '3',
    '--ksd-draws', '0', '--out', path.join(dir, 'out')];
  const cliRun = spawnSync(CLI, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  assert.equal(cliRun.status, 0, cliRun.stderr);
  const cli = JSON.parse(fs.readFileSync(path.join(dir, 'out/run.json'), 'utf8')).warnings;
  fs.rmSync(dir, { recursive: true, force: true });
  const page = await env.browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>warnings</title>
<link rel="icon" href="data:,"><script type="module" src="/embed.js"></script></head><body>
<tallmc-sampler id="w" model="logistic" sampler="${sampler}" data="/__test__/warn.csv" response="y"
  chains="2" warmup="${warmup}" draws="${draws}" seed="3"></tallmc-sampler></body></html>`;
  await page.route(`${env.url}__test__/warn.html`, (r) => r.fulfill({ contentType: 'text/html', body: html }));
  await page.route(`${env.url}__test__/warn.csv`, (r) => r.fulfill({ contentType: 'text/csv', body: text }));
  await page.goto(`${env.url}__test__/warn.html`);
  await page.waitForFunction(() => document.getElementById('w').dataset.state === 'idle', null, { timeout: 30000 });
  await page.click('#w >> [data-testid=embed-run]');
  await page.waitForFunction(() => ['done', 'error', 'stopped'].includes(document.getElementById('w').dataset.state),
    null, { timeout: 120000, polling: 200 });
  const out = await page.evaluate(() => {
    const el = document.getElementById('w');
    const ul = el.shadowRoot.querySelector('[data-testid=embed-warnings]');
    return {
      state: el.dataset.state, result: el.result.warnings, hidden: ul.hidden,
      web: [...ul.querySelectorAll('li')].map((l) => l.textContent),
    };
  });
  assert.equal(out.state, 'done');
  assert.deepEqual(errors, []);
  await page.close();
  return { cli, ...out };
}

test('<tallmc-sampler>: a short random-walk run lists the warnings tallmc run prints', async () => {
  const { cli, result, web, hidden } = await embed('rwmh', 20, 60);
  // 20 warm-up iterations leave a random walk poorly tuned: too few effective draws, or a chain
  // that (almost) never moved, whose ESS is then NaN (issue 19) and which is named as stuck.
  assert.ok(cli.some((w) => w.startsWith('effective sample size < 100') || / is stuck: /.test(w)), JSON.stringify(cli));
  assert.deepEqual(result, cli);
  assert.equal(hidden, false);
  assert.deepEqual(web, cli.map((w) => `Warning: ${w}`));
});

test('<tallmc-sampler>: a converged run lists none', async () => {
  const { cli, result, web, hidden } = await embed('nuts', 300, 600);
  assert.deepEqual(cli, []);
  assert.deepEqual(result, []);
  assert.deepEqual(web, []);
  assert.equal(hidden, true);
});
