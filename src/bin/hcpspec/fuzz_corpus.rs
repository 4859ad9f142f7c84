//! `hcpspec fuzz --corpus DIR`: the findings of earlier runs, kept in DIR (a storage branch in
//! CI), replayed on the runtime before any new case, and this run's added to them.

use hcpspec::exit;
use hcpspec::run::Verdict;
use hcpspec::suites::hcp::{Contract, RunEnv};
use hcpspec::suites::{Context, Suite as _};
use std::path::{Path, PathBuf};

/// The case files of the corpus, in name order (a missing folder is an empty corpus).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Replay every case of the corpus on the runtime, one line each: a case that still fails is
/// a finding again (counted in the exit code); one that passes, or cannot be played, no longer
/// reproduces, which is reported and never fatal (the runtime was fixed, or the case is stale).
/// Returns how many reproduced.
pub fn replay(dir: &Path, runtime: &str, vectors: &Path) -> Result<usize, exit::Error> {
    let files = entries(dir);
    if files.is_empty() {
        return Ok(0);
    }
    let denials = hcpspec::case::load_denials(vectors)
        .map_err(|e| hcpspec::error::BadInput(e.to_string()))?;
    let ctx = Context::new(vectors, &RunEnv::self_probe());
    let target = Contract
        .target(runtime, &ctx)
        .map_err(hcpspec::error::BadInput)?;
    // Reads the runtime's claims (its denial map) as `hcpspec run` does before its cases.
    let _ = target.describe();
    let mut reproduced = 0;
    for file in &files {
        let shown = file.display();
        // Capped as every case file is (docs/security.md, `MAX_CASE`).
        let case = hcpspec::input::read_capped(file, hcpspec::input::MAX_CASE)
            .map_err(|e| e.0)
            .and_then(|text| {
                hcpspec::case::parse_case(file, &text, "found", &Contract, &denials)
                    .map_err(|e| e.to_string())
            });
        let case = match case {
            Ok(c) => c,
            Err(e) => {
                println!("corpus: {shown}: not a case, skipped: {e}");
                continue;
            }
        };
        match target.run_case(&case).verdict {
            Verdict::Fail(f) => {
                reproduced += 1;
                println!(
                    "corpus: {shown}: reproduces: step {} ({}): {}",
                    f.step,
                    f.action,
                    f.message.lines().next().unwrap_or_default()
                );
            }
            Verdict::Pass => println!("corpus: {shown}: no longer reproduces (the case passes)"),
            Verdict::Skip { reason: why }
            | Verdict::Unimplemented { reason: why }
            | Verdict::Error { message: why } => println!(
                "corpus: {shown}: no longer reproduces (the case could not be judged: {})",
                why.lines().next().unwrap_or_default()
            ),
        }
    }
    println!(
        "corpus: {} cases replayed from {}, {reproduced} reproduce",
        files.len(),
        dir.display()
    );
    Ok(reproduced)
}

/// Add this run's findings to the corpus (a copy when they were written elsewhere, `--out`).
pub fn keep(dir: &Path, findings: &[(String, String, Option<PathBuf>)]) {
    for path in findings.iter().filter_map(|(_, _, p)| p.as_ref()) {
        let (Some(name), Ok(())) = (path.file_name(), std::fs::create_dir_all(dir)) else {
            continue;
        };
        let to = dir.join(name);
        if to != *path {
            if let Err(e) = std::fs::copy(path, &to) {
                eprintln!("warning: --corpus: {} not kept: {e}", to.display());
            }
        }
    }
}
