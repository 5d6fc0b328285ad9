// The playground's reparametrisation checkbox (model setting `reparam`): checked by default
// (`auto`, the exact whitening), unchecked gives `set.reparam=none` in the link and in the run,
// a URL with `set.reparam=none` unchecks it, and either way the draws are bit-identical to
// `tallmc run` with the same setting, on the user's scale.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { setup, openPage, waitForEnd, errorText, ROOT } from './helpers.mjs';

const CLI = path.join(ROOT, 'target/release/tallmc');
let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

// Raw scales: age in years, income in thousands, a dummy.
function rawCsv(n) {
  let s = 20241124n;
  const u = () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return (Number(s >> 11n) + 0.5) / 2 ** 53;
  };
  const lines = ['y,age,income,female'];
  for (let i = 0; i < n; i++) {
    const age = 18 + 62 * u();
    const income = 30 + 0.8 * age + 15 * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
    const female = u() < 0.5 ? 1 : 0;
    const eta = -4 + 0.05 * age + 0.01 * income - 0.3 * female;
    lines.push(`${u() < 1 / (1 + Math.exp(-eta)) ? 1 : 0},${age.toFixed(1)},${income.toFixed(2)},${female}`);
  }
  return lines.join('\n') + '\n';
}

function readDraws(file) {
  return fs.readFileSync(file, 'utf8').trim().split('\n');
}

async function compare(reparam) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tallmc-reparam-'));
  const text = rawCsv(1000);
  fs.writeFileSync(path.join(dir, 'data.csv'), text);
  const args = ['run', '--data', path.join(dir, 'data.csv'), '--model', 'logistic', '--response', 'y',
    '--sampler', 'mala', '--chains', '1', '--warmup', '200', '--draws', '200', '--seed', '5', '--ksd-draws', '0',
    '--out', path.join(dir, 'out')];
  if (reparam === 'none') args.push('--set', 'reparam=none');
  execFileSync(CLI, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const native = readDraws(path.join(dir, 'out/draws.csv'));
  const q = `?dataset=csv&model=logistic&sampler=mala&chains=1&warmup=200&draws=200&seed=5&response=y&ksd=0${reparam === 'none' ? '&set.reparam=none' : ''}`;
  const { page, errors } = await openPage(env, q);
  const box = page.locator('[data-testid=reparam-checkbox]');
  assert.equal(await box.isChecked(), reparam !== 'none');
  await page.setInputFiles('[data-testid=file-input]', { name: 'data.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
  await page.waitForFunction(() => /data\.csv: 1000 rows/.test(document.querySelector('[data-testid=data-info]').textContent),
    null, { timeout: 20000 });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 120000), 'done', await errorText(page));
  const web = (await page.evaluate(() => window.tallmc.drawsCsv())).trim().split('\n');
  assert.equal(web.length, native.length);
  let mismatches = 0;
  web.forEach((line, r) => line.split(',').forEach((v, k) => {
    const w = native[r].split(',')[k];
    if (r === 0 ? v !== w : Number(v) !== Number(w)) mismatches++;
  }));
  assert.equal(mismatches, 0, `reparam=${reparam}: draws differ between the page and tallmc run`);
  assert.deepEqual(errors, []);
  fs.rmSync(dir, { recursive: true, force: true });
  return page;
}

test('reparam checkbox: on by default, draws bit-identical to tallmc run', async () => {
  const page = await compare('auto');
  // Unchecking it puts set.reparam=none in the link to this configuration.
  await page.locator('[data-testid=reparam-checkbox]').uncheck();
  assert.match(await page.getAttribute('[data-testid=share-link]', 'href') ?? '', /set\.reparam=none/);
  await page.close();
});

test('reparam=none from the URL: unchecked, draws bit-identical to tallmc run --set reparam=none', async () => {
  const page = await compare('none');
  await page.close();
});
