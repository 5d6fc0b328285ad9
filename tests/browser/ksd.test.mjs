// The playground shows the kernel Stein discrepancy of the kept draws (computed in its own
// worker from exact scores) as a value and a plot against the iteration; a crude SGLD chain
// gets a clearly larger KSD than NUTS on the same data; on the page test's run the long tasks with
// and without the panel, and the panel's own main-thread time, are printed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, waitForEnd, errorText } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/** Run a configuration to the end and return the final KSD panel state. */
async function runKsd(query) {
  const { page, errors, foreign } = await openPage(env, query);
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page, 300000), 'done', await errorText(page));
  await page.waitForSelector('[data-testid=ksd-value][data-final=true]', { timeout: 120000 });
  const r = await page.evaluate(() => {
    const v = document.querySelector('[data-testid=ksd-value]');
    const p = document.querySelector('[data-testid=ksd-plot]');
    return {
      joint: Number(v.dataset.value),
      thesis: Number(v.dataset.thesis),
      draws: Number(v.dataset.draws),
      points: Number(p.dataset.points),
      canvas: p.querySelectorAll('canvas').length,
      visible: !document.getElementById('ksd-fig').hidden,
      text: v.textContent,
    };
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
  return r;
}

test('KSD value and plot against the run', async () => {
  const base = '?dataset=logistic&n=2000&d=3&model=logistic&chains=2&warmup=200&draws=400&seed=3';
  const nuts = await runKsd(`${base}&sampler=nuts`);
  assert.ok(nuts.visible, 'KSD figure hidden');
  assert.ok(Number.isFinite(nuts.joint) && nuts.joint > 0, nuts.text);
  assert.ok(nuts.thesis >= nuts.joint, nuts.text);
  assert.equal(nuts.draws, 800, 'every kept draw of both chains (≤ 1000) is used');
  assert.equal(nuts.points, nuts.draws, 'one trace point per stored draw');
  assert.ok(nuts.canvas > 0, 'KSD plot not drawn');
  const sgld = await runKsd(`${base}&sampler=sgld&set.batch_size=1&set.step_size=0.02`);
  assert.ok(sgld.joint > 2 * nuts.joint, `crude SGLD ${sgld.joint} vs NUTS ${nuts.joint}`);
});

/** Run the page test's configuration and return the main thread's long tasks (ms, ≥ 50 ms). */
async function longTasks(query) {
  const { page, errors, foreign } = await openPage(env, query);
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.click('[data-testid=run-button]');
  assert.equal(await waitForEnd(page), 'done', await errorText(page));
  const panel = await page.evaluate(() => !!document.getElementById('ksd-fig') && !document.getElementById('ksd-fig').hidden);
  if (panel) await page.waitForSelector('[data-testid=ksd-value][data-final=true]', { timeout: 120000 });
  const r = await page.evaluate(() => {
    const fig = document.getElementById('ksd-fig');
    return {
      tasks: window.__longTasks,
      mainMs: Number(fig?.dataset.mainMs ?? 0),
      mainMaxMs: Number(fig?.dataset.mainMaxMs ?? 0),
      byKind: fig?.dataset.mainByKind ?? '{}',
      draws: Number(document.querySelector('[data-testid=ksd-value]')?.dataset.draws ?? 0),
    };
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
  return { ...r, panel };
}

test('the KSD panel on the page test configuration: main-thread cost and long tasks', async () => {
  // The configuration of page.test.mjs, without the KSD panel (?ksd=0) and with it, in one run.
  // Main-thread timings depend on the machine's load (page.test.mjs asserts < 200 ms per task),
  // so they are printed here, not asserted; the panel's own main-thread time is measured by
  // the panel (data-main-ms, data-main-max-ms on its figure).
  const q = '?dataset=logistic&n=10000&d=10&model=logistic&sampler=nuts&chains=4&warmup=1000&draws=1000&seed=1';
  const off = await longTasks(`${q}&ksd=0`);
  const on = await longTasks(q);
  assert.equal(off.panel, false, '?ksd=0 still shows the KSD panel');
  assert.equal(on.panel, true, 'no KSD panel');
  assert.equal(on.draws, 1000, 'final KSD over 1000 thinned draws');
  const summary = (t) => `${t.length} long tasks (≥ 50 ms), ${t.filter((d) => d >= 200).length} ≥ 200 ms, max ${Math.max(0, ...t)} ms`;
  console.log(`without the KSD panel: ${summary(off.tasks)}`);
  console.log(`with the KSD panel:    ${summary(on.tasks)}; the panel's own main-thread time ${on.mainMs} ms in all, longest call ${on.mainMaxMs} ms (${on.byKind})`);
});
