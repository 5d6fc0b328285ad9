//! Golden draws: for a fixed seed, every sampler's draws, step statistics and resolved settings
//! on small real tables are bit-identical to the recorded ones (`tests/fixtures/golden/draws.txt`).
//!
//! This guards refactors that must not change what a sampler computes (issue 18: one driver,
//! one registry). Each case is a (model, sampler) pair the registry accepts, built exactly as
//! `tallmc run` builds it (the CLI's CSV parser, default design, default settings, the
//! reported-scale chain), run for 150 warm-up and 100 kept iterations from seed 7, chain 0.
//! Three FNV-1a hashes are compared: every position (warm-up included), every step's
//! statistics (acceptance, costs, step size, energy, sign, extras), and the chain's metadata
//! (names, extras' names, resolved settings, set-up cost). NaNs are hashed as one value.
//!
//! A change of draws that is wanted (a bug fixed) is recorded by re-blessing:
//! `TALLMC_BLESS=1 cargo test -p tallmc-tests --release --test all golden_draws::`, and the commit says
//! why. Every sampler of the registry must appear in at least one case.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use tallmc_core::chain::{run_chain, Phase};
use tallmc_core::data::DesignSpec;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_model, build_reported_chain, samplers, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_tests::realdata::{load, runs_on};

const WARMUP: usize = 150;
const DRAWS: usize = 100;
const SEED: u64 = 7;

/// (table, response, model): small real tables, several models.
const CASES: [(&str, &str, &str); 7] = [
    ("hmda", "deny", "logistic"),
    ("rwm1984", "docvis", "poisson"),
    ("cps1985", "wage", "robust"),
    ("cps1985", "wage", "linear"),
    ("dax", "dax", "sv"),
    ("dax", "dax", "lgssm"),
    ("dax", "dax", "garch"),
];

struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(if v.is_nan() {
            0x7ff8_0000_0000_0000
        } else {
            v.to_bits()
        });
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

fn model(table: &str, response: &str, model: &str) -> Arc<dyn DataModel> {
    let rt = load(table);
    let spec = DesignSpec {
        response: response.into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    build_model(model, &rt.table, &spec, &Settings::new()).expect("build model")
}

/// Non-default settings whose code paths the defaults do not reach (on hmda/logistic).
const VARIANTS: [(&str, &[&str]); 8] = [
    ("qnhmc", &["store=lbfgs"]),
    ("qnhmc", &["adapt=continuous"]),
    ("hmc-ecs", &["trajectory=nuts"]),
    ("smh-2", &["proposal=pcn"]),
    ("nuts", &["metric=dense"]),
    ("sgld", &["schedule=decreasing", "batch_size=50"]),
    ("austere-mh", &["design=conservative"]),
    ("mh-minibatch", &["control=none"]),
];

/// One line of the golden file for (model, sampler) with `key=value` settings.
fn record(label: &str, m: &Arc<dyn DataModel>, sampler: &str, kv: &[&str]) -> String {
    let mut s = Settings::new();
    for pair in kv {
        s.insert_pair(pair).unwrap();
    }
    let config = ChainConfig {
        sampler,
        warmup: WARMUP,
        settings: &s,
    };
    let mut rng = chain_rng(SEED, 0);
    let mut chain = match build_reported_chain(&config, m.clone(), &mut rng) {
        Ok(c) => c,
        Err(e) => return format!("{label} {sampler} error {e}"),
    };
    let (mut hd, mut hs, mut hm) = (Fnv::new(), Fnv::new(), Fnv::new());
    let mut last = Vec::new();
    run_chain(chain.as_mut(), &mut rng, DRAWS, |ph, k, th, info| {
        hd.u64(u64::from(ph == Phase::Sampling));
        hd.u64(k as u64);
        for &x in th {
            hd.f64(x);
        }
        hs.f64(info.accept_prob);
        hs.u64(u64::from(info.accepted));
        hs.u64(u64::from(info.divergent));
        hs.u64(info.lik_evals);
        hs.u64(info.grad_evals);
        hs.u64(u64::from(info.n_leapfrog));
        hs.f64(info.step_size);
        hs.f64(info.energy);
        hs.f64(info.sign);
        for &x in &info.extra {
            hs.f64(x);
        }
        last = th.to_vec();
    });
    for n in chain.param_names() {
        hm.str(&n);
    }
    for n in chain.extra_names() {
        hm.str(n);
    }
    for (k, v) in chain.resolved() {
        hm.str(k);
        hm.f64(v);
    }
    let setup = chain.setup_cost();
    hm.u64(setup.lik_evals);
    hm.u64(setup.grad_evals);
    hm.u64(u64::from(chain.signed()));
    hm.u64(u64::from(chain.exact()));
    let name = if kv.is_empty() {
        sampler.to_string()
    } else {
        format!("{sampler}[{}]", kv.join(","))
    };
    let mut line = format!(
        "{label} {name} draws={:016x} stats={:016x} meta={:016x} last=",
        hd.0, hs.0, hm.0
    );
    for (j, x) in last.iter().enumerate() {
        if j > 0 {
            line.push(',');
        }
        write!(line, "{x:.6e}").unwrap();
    }
    line
}

/// The posterior mode by L-BFGS (`optim`), hashed: the shared two-loop recursion's bits.
fn lbfgs_mode(label: &str, m: &Arc<dyn DataModel>) -> String {
    use tallmc_core::optim::{find_mode, ModeMethod, ModeOptions};
    let opts = ModeOptions {
        method: ModeMethod::Lbfgs,
        ..ModeOptions::default()
    };
    let r = find_mode(m.as_ref(), &vec![0.0; m.dim()], &opts).expect("mode");
    let mut h = Fnv::new();
    for &x in r.mode.iter().chain(&r.grad).chain(&r.neg_hessian) {
        h.f64(x);
    }
    h.u64(r.iterations as u64);
    let c = r.cost();
    h.u64(c.lik_evals);
    h.u64(c.grad_evals);
    format!("{label} mode[lbfgs] draws={:016x}", h.0)
}

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/golden/draws.txt")
}

/// The golden lines of one (table, response, model) case: every sampler that runs on the model,
/// then on logistic the variants and the L-BFGS mode.
fn case_lines(table: &str, response: &str, name: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let m = model(table, response, name);
    let label = format!("{table}/{name}");
    for info in samplers() {
        if runs_on(info.name, name) {
            lines.push(record(&label, &m, info.name, &[]));
        }
    }
    if name == "logistic" {
        for (sampler, kv) in VARIANTS {
            lines.push(record(&label, &m, sampler, kv));
        }
        lines.push(lbfgs_mode(&label, &m));
    }
    lines
}

#[test]
fn every_sampler_draws_as_recorded() {
    // One thread per table/model case (the chains are independent; the lines keep CASES' order).
    let lines: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = CASES
            .iter()
            .map(|&(table, response, name)| scope.spawn(move || case_lines(table, response, name)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("golden case thread"))
            .collect()
    });
    for info in samplers() {
        assert!(
            lines
                .iter()
                .any(|l| l.split(' ').nth(1) == Some(info.name) && !l.contains(" error ")),
            "sampler {} has no golden case",
            info.name
        );
    }
    let path = golden_path();
    if std::env::var_os("TALLMC_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        eprintln!("wrote {} cases to {}", lines.len(), path.display());
        return;
    }
    let want = std::fs::read_to_string(&path)
        .expect("tests/fixtures/golden/draws.txt (TALLMC_BLESS=1 records it)");
    let want: Vec<&str> = want.lines().collect();
    let mut bad = Vec::new();
    for (i, got) in lines.iter().enumerate() {
        let key: Vec<&str> = got.splitn(3, ' ').take(2).collect();
        match want.iter().find(|w| {
            let k: Vec<&str> = w.splitn(3, ' ').take(2).collect();
            k == key
        }) {
            Some(w) if *w == got => {}
            Some(w) => bad.push(format!("case {i}\n  want {w}\n  got  {got}")),
            None => bad.push(format!("case {i} not recorded: {got}")),
        }
    }
    if want.len() != lines.len() {
        bad.push(format!(
            "{} cases recorded, {} run",
            want.len(),
            lines.len()
        ));
    }
    assert!(
        bad.is_empty(),
        "{} of {} cases differ from the recorded draws:\n{}",
        bad.len(),
        lines.len(),
        bad.join("\n")
    );
    eprintln!("{} cases bit-identical", lines.len());
}
