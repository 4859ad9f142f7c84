//! Regression on stable: every seed of `fuzz/corpus/<target>/` and every past crash input of
//! `fuzz/regressions/<target>/` replayed through the cargo-fuzz target's body
//! (`hcpspec::suites::hcp::fuzz::targets`), one test each: `fuzz_corpus::pack_load::ledger.pack`.
//! No nightly and no libFuzzer needed; a target that panics fails its test.

use hcpspec::suites::hcp::fuzz::targets::{self, TARGETS};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    out.sort();
    out
}

fn main() {
    let args = Arguments::from_args();
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut trials = Vec::new();
    for &target in TARGETS {
        let seeds = files(&fuzz.join("corpus").join(target));
        let n = seeds.len();
        trials.push(Trial::test(
            format!("fuzz_corpus::{target}::has-seeds"),
            move || {
                if n == 0 {
                    return Err(Failed::from(format!("fuzz/corpus/{target}/ has no seed")));
                }
                Ok(())
            },
        ));
        for (kind, dir) in [("corpus", "corpus"), ("regression", "regressions")] {
            for file in files(&fuzz.join(dir).join(target)) {
                let name = file
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                let label = if kind == "corpus" {
                    name
                } else {
                    format!("regression::{name}")
                };
                trials.push(Trial::test(
                    format!("fuzz_corpus::{target}::{label}"),
                    move || {
                        let data =
                            std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
                        targets::run(target, &data);
                        Ok(())
                    },
                ));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
