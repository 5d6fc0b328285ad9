// Interactive docs: "Run all" buttons per demo and read-out tables filled from each embedded run's
// result (`<td data-of="ELEMENT-ID" data-field="extraMeans.points">`), plus the shared navigation.
import '../embed.js';

const PAGES = [
  ['index.html', 'Overview'],
  ['hmc-ecs.html', 'HMC-ECS'],
  ['smh.html', 'Scalable MH'],
  ['minibatch-mh.html', 'Minibatch MH'],
  ['sgmcmc.html', 'SG-MCMC'],
  ['pf-sgld.html', 'Particle filters & PF-SGLD'],
  ['qnhmc.html', 'QNHMC'],
  ['../index.html', 'Playground'],
];

function nav() {
  const here = location.pathname.split('/').pop() || 'index.html';
  const el = document.createElement('nav');
  for (const [href, text] of PAGES) {
    const a = document.createElement('a');
    a.href = href;
    a.textContent = text;
    if (href === here) a.setAttribute('aria-current', 'page');
    el.append(a);
  }
  const header = document.createElement('header');
  header.className = 'site';
  header.append(el);
  document.body.prepend(header);
}

function fmt(v) {
  if (typeof v !== 'number') return v === undefined ? '–' : String(v);
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(3)));
}

/** `result` field by path: `extraMeans.points`, `sd.1` (parameter 1), `maxRhat`, ... */
function field(result, path) {
  if (path === 'maxRhat') return Math.max(...result.rhat);
  if (path === 'minEss') return Math.min(...result.essBulk);
  if (path === 'essPerSecond') return Math.min(...result.essBulk) / (result.wallMs / 1000);
  if (path === 'essPer1000Grad') return (1000 * Math.min(...result.essBulk)) / (result.gradEvalsPerIter * result.draws);
  return path.split('.').reduce((o, k) => (o === undefined || o === null ? undefined : o[k]), result);
}

// `data-relative-to="OTHER-ID"`: the field divided by the same field of another panel's run
// (e.g. the sd of an approximate sampler over the sd of the exact reference).
function fill(el) {
  const r = el.result;
  if (!r) return;
  const cells = [...document.querySelectorAll(`[data-of="${CSS.escape(el.id)}"]`),
    ...document.querySelectorAll(`[data-relative-to="${CSS.escape(el.id)}"]`)];
  for (const td of cells) {
    const own = document.getElementById(td.dataset.of)?.result;
    if (!own) continue;
    let v = field(own, td.dataset.field);
    if (td.dataset.relativeTo) {
      const ref = document.getElementById(td.dataset.relativeTo)?.result;
      v = ref ? v / field(ref, td.dataset.field) : undefined;
    }
    td.textContent = fmt(v);
    td.dataset.value = String(v);
  }
}

nav();
for (const el of document.querySelectorAll('tallmc-sampler')) {
  el.addEventListener('tallmc-done', () => fill(el));
}
for (const fig of document.querySelectorAll('figure.demo')) {
  const els = [...fig.querySelectorAll('tallmc-sampler')];
  if (els.length < 2) continue;
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'run-all';
  b.dataset.testid = 'run-all';
  b.textContent = `Run all ${els.length}`;
  b.addEventListener('click', () => { for (const el of els) if (el.dataset.state !== 'unavailable') el.start(); });
  fig.querySelector('figcaption')?.after(b);
}
for (const el of document.querySelectorAll('[data-pending-sampler]')) {
  // Notes shown only while a sampler has not landed in this build.
  customElements.whenDefined('tallmc-sampler').then(async () => {
    const { registry } = await import('../embed.js');
    const reg = await registry();
    el.hidden = reg.samplers.some((s) => s.name === el.dataset.pendingSampler);
  });
}
