// Uploaded CSV files: malformed ones show an error naming the line and leave the page working;
// a valid one gives draws and posterior means bit-identical to `tallmc run` on the same file,
// seed and settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { setup, openPage, waitForEnd, readDiagnostics, errorText, ROOT } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const CLI = path.join(ROOT, 'target/release/tallmc');

/** A logistic-regression CSV from a fixed linear congruential generator (no Math.random). */
function makeCsv(n) {
  let s = 12345n;
  const u = () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(s >> 11n) / 2 ** 53;
  };
  const lines = ['x1,x2,y'];
  for (let i = 0; i < n; i++) {
    const x1 = (u() * 4 - 2).toFixed(6);
    const x2 = (u() * 2 - 1).toFixed(6);
    const eta = 0.3 + 0.8 * x1 - 1.2 * x2;
    const y = u() < 1 / (1 + Math.exp(-eta)) ? 1 : 0;
    lines.push(`${x1},${x2},${y}`);
  }
  return lines.join('\n') + '\n';
}

function readCsv(file) {
  const [head, ...rows] = fs.readFileSync(file, 'utf8').trim().split('\n');
  const cols = head.split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((v, k) => [cols[k], v])));
}

async function upload(page, name, text) {
  await page.setInputFiles('[data-testid=file-input]', { name, mimeType: 'text/csv', buffer: Buffer.from(text) });
}

test('malformed CSV files show the line, and a following valid run succeeds', async () => {
  const { page, errors } = await openPage(env, '?dataset=csv&model=logistic&sampler=nuts&chains=2&warmup=100&draws=100&seed=1');
  const cases = [
    ['ragged.csv', 'x1,x2,y\n0.1,0.2,1\n0.3,0.4\n0.5,0.6,0\n', /ragged\.csv: line 3\b/],
    ['text.csv', 'x1,x2,y\n0.1,0.2,1\n0.3,0.4,0\n0.5,abc,1\n', /text\.csv: line 4, column "x2".*abc/],
    ['empty.csv', '', /empty\.csv.*empty/],
  ];
  for (const [name, text, re] of cases) {
    await upload(page, name, text);
    await page.waitForFunction(() => {
      const el = document.querySelector('[data-testid=error-message]');
      return el && !el.hidden && el.textContent.length > 0;
    }, null, { timeout: 20000 });
    const msg = await errorText(page);
    assert.match(msg, re, `${name}: ${msg}`);
    // Running now reports that no data is loaded, without breaking anything.
  }
  await upload(page, 'good.csv', makeCsv(300));
  await page.waitForFunction(() => /good\.csv: 300 rows/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  assert.equal(await errorText(page), '');
  const diag = await readDiagnostics(page);
  assert.deepEqual(Object.keys(diag), ['intercept', 'x1', 'x2']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad CSV after a good one: no stale columns, and Run keeps the parse error', async () => {
  const { page, errors } = await openPage(env, '?dataset=csv&model=logistic&sampler=nuts&chains=1&warmup=50&draws=50&seed=1');
  await upload(page, 'good.csv', makeCsv(100));
  await page.waitForFunction(() => /good\.csv: 100 rows/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  const columns = () => page.evaluate(() => ({
    response: [...document.querySelectorAll('#response option')].map((o) => o.value),
    features: [...document.querySelectorAll('#features input')].map((c) => c.value),
  }));
  assert.deepEqual((await columns()).response, ['x1', 'x2', 'y']);
  await upload(page, 'bad.csv', 'a,b,c\n1,2,3\n4,oops,6\n');
  await page.waitForFunction(() => /bad\.csv: not loaded/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  const parseError = await errorText(page);
  assert.match(parseError, /bad\.csv: line 3, column "b".*oops/);
  // The old file's columns are gone (neither the good file's nor a half-read one's).
  assert.deepEqual(await columns(), { response: [], features: [] });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 20000), 'error');
  assert.equal(await errorText(page), parseError);
  assert.deepEqual(errors, []);
  await page.close();
});

test('uploaded CSV: draws and means bit-identical to `tallmc run`', async () => {
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: run \`make build\` (cargo build --release -p tallmc) first`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-web-'));
  const data = path.join(dir, 'data.csv');
  const text = makeCsv(2000);
  fs.writeFileSync(data, text);
  const out = path.join(dir, 'out');
  execFileSync(CLI, ['run', '--data', data, '--model', 'logistic', '--response', 'y', '--sampler', 'nuts',
    '--chains', '2', '--warmup', '300', '--draws', '300', '--seed', '7', '--set', 'target_accept=0.85',
    '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const native = readCsv(path.join(out, 'summary.csv'));
  const nativeDraws = readCsv(path.join(out, 'draws.csv'));

  const { page, errors } = await openPage(env,
    '?dataset=csv&model=logistic&sampler=nuts&chains=2&warmup=300&draws=300&seed=7&response=y&set.target_accept=0.85');
  await upload(page, 'data.csv', text);
  await page.waitForFunction(() => /data\.csv: 2000 rows/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 300000), 'done', await errorText(page));

  // Every draw, compared as numbers (both sides print round-trip decimals).
  const webDraws = (await page.evaluate(() => window.tallmc.drawsCsv())).trim().split('\n');
  const cols = webDraws[0].split(',');
  assert.deepEqual(cols, Object.keys(nativeDraws[0]));
  assert.equal(webDraws.length - 1, nativeDraws.length);
  let mismatches = 0;
  webDraws.slice(1).forEach((line, r) => {
    line.split(',').forEach((v, k) => {
      if (Number(v) !== Number(nativeDraws[r][cols[k]])) mismatches++;
    });
  });
  assert.equal(mismatches, 0, 'draws differ between wasm and native');

  const diag = await readDiagnostics(page);
  for (const row of native) {
    assert.ok(diag[row.param], `missing ${row.param}`);
    assert.equal(diag[row.param].mean, Number(row.mean), `${row.param}: mean wasm ${diag[row.param].mean} native ${row.mean}`);
    assert.equal(diag[row.param].sd, Number(row.sd), `${row.param}: sd`);
  }
  assert.deepEqual(errors, []);
  fs.rmSync(dir, { recursive: true, force: true });
  await page.close();
});

test('an uploaded NumPy .npz (written by numpy.savez) gives the draws of `tallmc run` on it', async () => {
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: run \`make build\` first`);
  const npz = path.join(ROOT, 'cli/tests/fixtures/numpy/table.npz');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-web-npz-'));
  const out = path.join(dir, 'out');
  execFileSync(CLI, ['run', '--data', npz, '--model', 'logistic', '--response', 'y', '--sampler', 'nuts',
    '--chains', '1', '--warmup', '150', '--draws', '150', '--seed', '3', '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const nativeDraws = readCsv(path.join(out, 'draws.csv'));
  const { page, errors } = await openPage(env,
    '?dataset=csv&model=logistic&sampler=nuts&chains=1&warmup=150&draws=150&seed=3&response=y');
  await page.setInputFiles('[data-testid=file-input]',
    { name: 'table.npz', mimeType: 'application/octet-stream', buffer: fs.readFileSync(npz) });
  await page.waitForFunction(() => /table\.npz: 500 rows/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  const webDraws = (await page.evaluate(() => window.tallmc.drawsCsv())).trim().split('\n');
  const cols = webDraws[0].split(',');
  assert.deepEqual(cols, Object.keys(nativeDraws[0]));
  assert.deepEqual(cols.slice(2), ['intercept', 'age', 'flag', 'x1', 'x2']);
  assert.equal(webDraws.length - 1, nativeDraws.length);
  let mismatches = 0;
  webDraws.slice(1).forEach((line, r) => {
    line.split(',').forEach((v, k) => { if (Number(v) !== Number(nativeDraws[r][cols[k]])) mismatches++; });
  });
  assert.equal(mismatches, 0, 'draws differ between the page and the CLI');
  assert.deepEqual(errors, []);
  fs.rmSync(dir, { recursive: true, force: true });
  await page.close();
});
