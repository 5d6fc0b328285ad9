// Types of `tallmc/embed`: the <tallmc-sampler> and <tallmc-chain> custom elements.
// Importing the module defines both elements (once per page) and fetches nothing until an element
// is attached; the wasm and the Web Workers are loaded from next to the module (import.meta.url).

/** `data-state` of a `<tallmc-sampler>` (read it as `el.dataset.state`). */
export type TallmcSamplerState =
  | 'idle'
  | 'starting'
  | 'running'
  | 'done'
  | 'stopped'
  | 'error'
  /** The sampler is not in this build's registry: the Run button is disabled. */
  | 'unavailable';

/**
 * The attributes of `<tallmc-sampler>`. Every value is a string (as in HTML); every attribute is
 * optional. Attributes not listed here are sampler or model settings, named like the setting
 * (case-insensitive, e.g. `step_size="0.05"`, `m="200"`, `temperature="10"`); an attribute that is
 * neither one of these nor a setting of the chosen sampler or model is refused with an error that
 * lists the settings. Global HTML attributes, `data-*`, `aria-*` and `on*` are never settings.
 */
export interface TallmcSamplerAttributes {
  /** Model name (`logistic`, `linear`, `robust`, `poisson`, `gmm`, `gaussian`, `pmf`, `lgssm`, `sv`, `garch`). Default: the built-in data set's model, else `logistic`. */
  model?: string;
  /** Sampler name (`nuts`, `hmc-ecs`, `sgld`, `mh-minibatch`, …; see `registry()`). Default `nuts`. */
  sampler?: string;
  /** `builtin:<model>` (simulated in each chain's worker) or a CSV URL on the page's own origin. Default `builtin:<model>`. */
  data?: string;
  /** Rows of the built-in data set: 10 to 5 000 000. Default `2000`. */
  n?: string;
  /** Columns of the built-in data set, intercept included: 1 to 200. Default `3`. */
  d?: string;
  /** Seed of the built-in data set. Default `1`. */
  'data-seed'?: string;
  /** Response column of a CSV. Default `y`. */
  response?: string;
  /** `false` drops the intercept. Default `true`. */
  intercept?: string;
  /** `true` standardises the feature columns. Default `false`. */
  standardize?: string;
  /** Chains, each in its own Web Worker: 1 to 8. Default `2`. */
  chains?: string;
  /** Warm-up iterations per chain: 0 to 10⁷. Default `500`. */
  warmup?: string;
  /** Kept draws per chain: 1 to 10⁷. Default `1000`. */
  draws?: string;
  /** Run seed, a whole number ≥ 0; chain c uses the stream (seed, c), as `tallmc run` does. Default `1`. */
  seed?: string;
  /** Parameter plotted first, by name or index. Default the first slope (index 1; 0 in one dimension). */
  param?: string;
  /** Sampler internal plotted per iteration (e.g. `batch_size`, `sign`). Default: the most telling one the sampler reports. */
  extra?: string;
  /** Sampler and model settings as a JSON object, e.g. `{"step_size":0.05}`; a key here wins over a setting attribute of the same name. */
  settings?: string;
  /** Present: run as soon as the element is attached (no click needed). */
  autostart?: string;
  /** The panel's title. Default `<sampler> · <model>`. */
  label?: string;
}

/** What a finished `<tallmc-sampler>` run exposes (`el.result`, the `tallmc-done` event's detail). */
export interface TallmcSamplerResult {
  sampler: string;
  model: string;
  /** Parameter names (`intercept` first when present), the order of every per-parameter array. */
  names: string[];
  /** Posterior mean per parameter (sign-weighted for signed samplers), over every chain's kept draws. */
  mean: number[];
  sd: number[];
  q5: number[];
  q95: number[];
  /** Bulk and tail effective sample sizes and rank-normalised split R-hat (tallmc's core, as the CLI). */
  essBulk: number[];
  essTail: number[];
  rhat: number[];
  /** Mean acceptance probability over the kept draws. */
  acceptance: number;
  /** Per-datum evaluations per iteration over the data size (1 = one full data pass per iteration). */
  dataFraction: number;
  likEvalsPerIter: number;
  gradEvalsPerIter: number;
  /** Mean per kept draw of each sampler internal (`batch_size`, …; `sign` for signed samplers). */
  extraMeans: Record<string, number>;
  /** Signed samplers: the fraction of positive signs; undefined otherwise. */
  tau: number | undefined;
  /** Iterations done per chain (warm-up included). */
  iterations: number[];
  /** Kept draws over every chain. */
  draws: number;
  /** Rows of the data set. */
  nData: number;
  wallMs: number;
  /** The CLI's convergence warnings (R-hat, ESS, divergences, stuck chains), one line each. */
  warnings: string[];
}

/** Detail of a `tallmc-error` event (also shown in the panel's status line). */
export interface TallmcErrorDetail {
  message: string;
}

/** Events of `<tallmc-sampler>` (dispatched on the element; they neither bubble nor cross the shadow root). */
export interface TallmcSamplerEventMap extends HTMLElementEventMap {
  /**
   * The run's final diagnostics are in: after it completes (`dataset.state` = `done`), or after it
   * was stopped with kept draws (`stopped`). `detail` is `el.result`.
   */
  'tallmc-done': CustomEvent<TallmcSamplerResult>;
  /** Bad attributes, data that cannot be read, or a chain that failed (`dataset.state` = `error`). */
  'tallmc-error': CustomEvent<TallmcErrorDetail>;
}

/**
 * `<tallmc-sampler>`: a live sampler panel (run/stop, trace, density, the sampler's internals per
 * iteration, a diagnostics table, the cost line) whose chains run in its own Web Workers. Its
 * shadow root exposes `part="button"`, `part="title"` and `part="warnings"` for `::part()` styling.
 */
export class TallmcSampler extends HTMLElement {
  /** Summary of the last finished run, or null (before one, or while one runs). */
  result: TallmcSamplerResult | null;
  /** Whether a run is in progress. */
  readonly running: boolean;
  /** Read the attributes and start a run (no-op while one runs); problems end in `tallmc-error`. */
  start(): Promise<void>;
  /** Stop the run: final diagnostics of the kept draws follow (`quiet`: none, no event). */
  stop(quiet?: boolean): void;
  addEventListener<K extends keyof TallmcSamplerEventMap>(
    type: K,
    listener: (this: TallmcSampler, ev: TallmcSamplerEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof TallmcSamplerEventMap>(
    type: K,
    listener: (this: TallmcSampler, ev: TallmcSamplerEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** The attributes of `<tallmc-chain>` (the older single-chain widget on a simulated data set). */
export interface TallmcChainAttributes {
  /** Model of the simulated data set. Default `logistic`. */
  model?: string;
  /** Default `nuts`. */
  sampler?: string;
  /** Rows and columns of the simulated data set. Defaults `2000`, `3`. */
  n?: string;
  d?: string;
  /** Seed of the simulated data set. Default `1`. */
  'data-seed'?: string;
  /** Defaults `500`, `1000`, `1`. */
  warmup?: string;
  draws?: string;
  seed?: string;
  /** Index of the parameter shown. Default `0`. */
  param?: string;
  /** Sampler and model settings as a JSON object. */
  settings?: string;
  /** Present: run on load. */
  autostart?: string;
}

/** Detail of `<tallmc-chain>`'s `tallmc-done`: the shown parameter over the kept draws. */
export interface TallmcChainResult {
  name: string;
  mean: number;
  sd: number;
  draws: number;
  /** Iterations done, warm-up included. */
  iterations: number;
}

export interface TallmcChainEventMap extends HTMLElementEventMap {
  /** The chain ran to its end (not fired when stopped). */
  'tallmc-done': CustomEvent<TallmcChainResult>;
  'tallmc-error': CustomEvent<TallmcErrorDetail>;
}

/** `<tallmc-chain>`: one chain, one parameter's trace and its mean ± sd. */
export class TallmcChain extends HTMLElement {
  start(): void;
  stop(): void;
  addEventListener<K extends keyof TallmcChainEventMap>(
    type: K,
    listener: (this: TallmcChain, ev: TallmcChainEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof TallmcChainEventMap>(
    type: K,
    listener: (this: TallmcChain, ev: TallmcChainEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** One sampler or model setting, as the registry describes it. */
export interface TallmcParamSpec {
  key: string;
  description: string;
  kind: 'real' | 'int' | 'choice' | 'bool';
  /** null: chosen automatically. */
  default: number | string | boolean | null;
  min?: number | null;
  max?: number | null;
  /** `real`: whether the bound itself is refused. */
  min_open?: boolean;
  max_open?: boolean;
  /** `choice`: the allowed values (the first is the default). */
  choices?: string[];
}

export interface TallmcSamplerInfo {
  name: string;
  description: string;
  /** Whether it targets the posterior exactly. */
  exact: boolean;
  /** Whether its draws carry signs (signed HMC-ECS). */
  signed: boolean;
  models: string[];
  /** The time-series models it runs on. */
  series_models: string[];
  /** Every model it runs on. */
  runs_on: string[];
  params: TallmcParamSpec[];
}

export interface TallmcModelInfo {
  name: string;
  description: string;
  regression: boolean;
  /** A time-series model (one column). */
  series: boolean;
  params: TallmcParamSpec[];
}

/** The sampler and model registries of this build (loads the wasm once per page). */
export function registry(): Promise<{ samplers: TallmcSamplerInfo[]; models: TallmcModelInfo[] }>;

declare global {
  interface HTMLElementTagNameMap {
    'tallmc-sampler': TallmcSampler;
    'tallmc-chain': TallmcChain;
  }
}
