//! draws.csv, summary.csv and stats.csv.

use super::*;

pub(super) fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, CliError> {
    std::fs::File::create(path)
        .map(|f| std::io::BufWriter::with_capacity(1 << 16, f))
        .map_err(|e| CliError::input(format!("--out {}: {}", path.display(), io_msg(&e))))
}

pub(super) fn write_err(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |e| CliError::input(format!("cannot write {}: {}", path.display(), io_msg(&e)))
}

/// `draws.csv`: chain, draw, every parameter, then `sign` for signed samplers.
pub(super) fn write_draws(
    dir: &Path,
    names: &[String],
    signed: bool,
    outputs: &[ChainOutput],
) -> Result<(), CliError> {
    let path = dir.join("draws.csv");
    let mut w = create(&path)?;
    let mut header: Vec<&str> = vec!["chain", "draw"];
    header.extend(names.iter().map(|s| s.as_str()));
    if signed {
        header.push("sign");
    }
    write_header(&mut w, &header).map_err(write_err(&path))?;
    let mut line = String::new();
    for (c, o) in outputs.iter().enumerate() {
        for k in 0..o.signs.len() {
            line.clear();
            line.push_str(&format!("{c},{k}"));
            for col in &o.draws {
                line.push(',');
                push_f64(&mut line, col[k]);
            }
            if signed {
                line.push(',');
                push_f64(&mut line, o.signs[k]);
            }
            line.push('\n');
            w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        }
    }
    w.flush().map_err(write_err(&path))
}

/// `summary.csv`: one row per parameter.
pub(super) fn write_summary(
    dir: &Path,
    names: &[String],
    signed: bool,
    outputs: &[ChainOutput],
) -> Result<Vec<diag::Summary>, CliError> {
    let path = dir.join("summary.csv");
    let mut w = create(&path)?;
    let header: Vec<&str> = core::iter::once("param")
        .chain(diag::Summary::COLUMNS)
        .collect();
    write_header(&mut w, &header).map_err(write_err(&path))?;
    let signs: Vec<&[f64]> = outputs.iter().map(|o| o.signs.as_slice()).collect();
    let mut all = Vec::with_capacity(names.len());
    for (j, name) in names.iter().enumerate() {
        let chains: Vec<&[f64]> = outputs.iter().map(|o| o.draws[j].as_slice()).collect();
        let s = if signed {
            diag::summarize_signed(&chains, &signs)
        } else {
            diag::summarize(&chains)
        };
        let mut line = String::new();
        push_field(&mut line, name);
        for v in s.values() {
            line.push(',');
            push_f64(&mut line, v);
        }
        line.push('\n');
        w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        all.push(s);
    }
    w.flush().map_err(write_err(&path))?;
    Ok(all)
}

/// `stats.csv`: one row per kept draw.
pub(super) fn write_stats(
    dir: &Path,
    extras: &[&str],
    outputs: &[ChainOutput],
) -> Result<(), CliError> {
    let path = dir.join("stats.csv");
    let mut w = create(&path)?;
    let mut header = vec![
        "chain",
        "draw",
        "accept_prob",
        "divergent",
        "lik_evals",
        "grad_evals",
        "n_leapfrog",
        "step_size",
        "energy",
    ];
    header.extend_from_slice(extras);
    write_header(&mut w, &header).map_err(write_err(&path))?;
    let mut line = String::new();
    for (c, o) in outputs.iter().enumerate() {
        for (k, s) in o.stats.iter().enumerate() {
            line.clear();
            line.push_str(&format!("{c},{k},"));
            push_f64(&mut line, s.accept_prob);
            line.push_str(&format!(
                ",{},{},{},{},",
                u8::from(s.divergent),
                s.lik_evals,
                s.grad_evals,
                s.n_leapfrog
            ));
            push_f64(&mut line, s.step_size);
            line.push(',');
            push_f64(&mut line, s.energy);
            for e in s.extra.iter().take(extras.len()) {
                line.push(',');
                push_f64(&mut line, *e);
            }
            line.push('\n');
            w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        }
    }
    w.flush().map_err(write_err(&path))
}
