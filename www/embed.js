// <tallmc-chain>: a live sampler for documentation pages. One chain in a Web Worker on a simulated
// data set, a trace of one parameter and its running mean ± sd.
//
//   <script type="module" src="embed.js"></script>
//   <tallmc-chain model="logistic" sampler="nuts" n="2000" d="3" warmup="500" draws="1000"
//                 seed="1" param="1"></tallmc-chain>
//
// Attributes: model, sampler, n, d (simulated data set), warmup, draws, seed, param (index),
// settings (JSON object of sampler/model settings), autostart (present: run on load).
const WORKER = new URL('./chain-worker.js', import.meta.url);

class TallmcChain extends HTMLElement {
  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: 'open' });
    root.innerHTML = `<style>
      :host { display: inline-block; font: 13px system-ui, sans-serif; border: 1px solid #dde2ea;
              border-radius: 6px; padding: 6px; background: #fff; }
      canvas { display: block; }
      .row { display: flex; gap: 8px; align-items: center; margin-top: 4px; }
      .err { color: #b42318; }
    </style>
    <canvas width="360" height="120"></canvas>
    <div class="row"><button type="button">Run</button><span class="out"></span></div>`;
    this.canvas = root.querySelector('canvas');
    this.out = root.querySelector('.out');
    this.button = root.querySelector('button');
    this.button.addEventListener('click', () => (this.worker ? this.stop() : this.start()));
    if (this.hasAttribute('autostart')) this.start();
  }

  disconnectedCallback() {
    this.stop();
  }

  attr(name, dflt) {
    return this.getAttribute(name) ?? dflt;
  }

  start() {
    const model = this.attr('model', 'logistic');
    let settings = {};
    try {
      settings = JSON.parse(this.attr('settings', '{}'));
    } catch {
      this.fail('settings: not valid JSON');
      return;
    }
    const config = {
      model, sampler: this.attr('sampler', 'nuts'), response: 'y', features: null, intercept: true,
      standardize: false, warmup: Number(this.attr('warmup', '500')), settings, seed: this.attr('seed', '1'), chain: 0,
    };
    this.values = [];
    this.param = Number(this.attr('param', '0'));
    this.worker = new Worker(WORKER, { type: 'module' });
    this.worker.onmessage = (ev) => this.onMessage(ev.data);
    this.worker.postMessage({
      type: 'start', config, draws: Number(this.attr('draws', '1000')),
      simulate: { model, n: Number(this.attr('n', '2000')), d: Number(this.attr('d', '3')), seed: this.attr('data-seed', '1') },
    });
    this.button.textContent = 'Stop';
    this.out.className = 'out';
    this.out.textContent = 'starting…';
  }

  stop() {
    if (!this.worker) return;
    this.worker.terminate();
    this.worker = null;
    this.button.textContent = 'Run';
  }

  fail(msg) {
    this.stop();
    this.out.className = 'out err';
    this.out.textContent = msg;
  }

  onMessage(m) {
    if (m.type === 'error') return this.fail(m.message);
    if (m.type === 'ready') {
      this.d = m.dim;
      this.name = m.paramNames[Math.min(this.param, m.dim - 1)];
      this.warmup = m.warmup;
      return undefined;
    }
    if (m.type === 'batch') {
      const b = m.batch;
      const j = Math.min(this.param, b.d - 1);
      for (let i = 0; i < b.n; i++) this.values.push(b.draws[i * b.d + j]);
      this.draw(m.iteration);
    } else if (m.type === 'done' || m.type === 'stopped') {
      this.draw(m.iteration, true);
      this.stop();
    }
    return undefined;
  }

  draw(iteration, final = false) {
    const ctx = this.canvas.getContext('2d');
    const { width: W, height: H } = this.canvas;
    ctx.clearRect(0, 0, W, H);
    const v = this.values;
    if (!v.length) return;
    let lo = Infinity, hi = -Infinity;
    for (const x of v) { if (x < lo) lo = x; if (x > hi) hi = x; }
    if (hi === lo) hi = lo + 1e-9;
    const stride = Math.max(1, Math.ceil(v.length / W));
    ctx.fillStyle = 'rgba(0,0,0,0.05)';
    ctx.fillRect(0, 0, (Math.min(this.warmup, v.length) / Math.max(v.length, 1)) * W, H);
    ctx.strokeStyle = '#2b6cb0';
    ctx.beginPath();
    for (let i = 0; i < v.length; i += stride) {
      const x = (i / v.length) * W;
      const y = H - 4 - ((v[i] - lo) / (hi - lo)) * (H - 8);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    }
    ctx.stroke();
    const post = v.slice(this.warmup);
    if (post.length > 1) {
      const mean = post.reduce((a, x) => a + x, 0) / post.length;
      const sd = Math.sqrt(post.reduce((a, x) => a + (x - mean) ** 2, 0) / (post.length - 1));
      this.out.textContent = `${this.name}: ${mean.toPrecision(4)} ± ${sd.toPrecision(3)} (${post.length} draws${final ? '' : ', running'})`;
    } else {
      this.out.textContent = `${this.name}: warm-up ${iteration}/${this.warmup}`;
    }
  }
}

if (!customElements.get('tallmc-chain')) customElements.define('tallmc-chain', TallmcChain);
