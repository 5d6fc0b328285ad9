use std::time::Instant;
use tallmc_core::data::DesignSpec;
use tallmc_core::estimator::ControlVariates;
use tallmc_core::settings::Settings;
fn main() {
    let (n, d) = (1_000_000, 30);
    let table = tallmc_core::simulate::simulate("logistic", n, d, 7, &Settings::new()).unwrap();
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let model =
        tallmc_core::registry::build_model("logistic", &table, &spec, &Settings::new()).unwrap();
    let theta = vec![0.01; model.dim()];
    for pass in ["avx2", "base"] {
        if pass == "base" {
            tallmc_core::cpu::disable_avx2();
        }
        let mut best = [f64::MAX; 2];
        let mut chk = 0.0;
        for _ in 0..5 {
            let t = Instant::now();
            let cv = ControlVariates::new(&*model, &theta, 2).unwrap();
            best[0] = best[0].min(t.elapsed().as_secs_f64());
            chk += cv.sum_hess()[7];
            let mut g = vec![0.0; model.dim()];
            let t = Instant::now();
            let v = model.log_lik_grad_all(&theta, &mut g);
            best[1] = best[1].min(t.elapsed().as_secs_f64());
            chk += v + g[3];
        }
        println!(
            "{pass} (avx2 on: {}): CV::new {:.1} ms, full gradient {:.1} ms, check {chk:e}",
            tallmc_core::cpu::has_avx2(),
            best[0] * 1e3,
            best[1] * 1e3
        );
    }
}
