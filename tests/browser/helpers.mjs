// Shared set-up for the browser tests: a static server for www/ on a free port and headless
// Chromium (playwright-core, system Chromium) with console errors and off-origin requests recorded.
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WWW = path.join(ROOT, 'www');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

export function checkBuilt() {
  for (const f of ['pkg/tallmc_web.js', 'pkg/tallmc_web_bg.wasm', 'vendor/uPlot.esm.js']) {
    if (!fs.existsSync(path.join(WWW, f))) {
      throw new Error(`www/${f} is missing: run \`make build\` first`);
    }
  }
}

/** Start the server and the browser; returns { url, browser, server, close() }. */
export async function setup() {
  checkBuilt();
  const { server, url } = await startServer({ root: WWW, host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  return {
    url,
    browser,
    server,
    async close() {
      await browser.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A new page that records console errors, page errors and requests leaving the origin. */
export async function openPage(env, query = '') {
  const page = await env.browser.newPage();
  const origin = new URL(env.url).origin;
  const errors = [];
  const foreign = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => {
    const u = r.url();
    if (u.startsWith('data:') || u.startsWith('blob:')) return;
    if (new URL(u).origin !== origin) foreign.push(u);
  });
  await page.goto(`${env.url}index.html${query}`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
  return { page, errors, foreign };
}

/** Wait until the run finishes ("done", "stopped" or "error"); returns the final state. */
export async function waitForEnd(page, timeout = 600000) {
  await page.waitForFunction(
    () => ['done', 'stopped', 'error'].includes(document.body.dataset.state),
    null,
    { timeout, polling: 200 },
  );
  return page.evaluate(() => document.body.dataset.state);
}

/** The diagnostics table as { param: { mean, sd, ess_bulk, ess_tail, rhat, ... } } (full precision). */
export async function readDiagnostics(page) {
  return page.evaluate(() => {
    const out = {};
    for (const tr of document.querySelectorAll('[data-testid=diagnostics-table] tbody tr')) {
      const name = tr.querySelector('th').textContent;
      const row = {};
      for (const td of tr.querySelectorAll('td[data-col]')) row[td.dataset.col] = Number(td.dataset.value);
      out[name] = row;
    }
    return out;
  });
}

/** Error text shown on the page ('' when none). */
export async function errorText(page) {
  return page.evaluate(() => {
    const el = document.querySelector('[data-testid=error-message]');
    return el && !el.hidden ? el.textContent : '';
  });
}
