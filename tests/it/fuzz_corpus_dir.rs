//! `hcpspec fuzz --corpus DIR`: a run's findings are kept in DIR, and the next run replays them
//! on the runtime before any new case: one that still fails is a finding again (exit 1), one
//! that passes is reported as no longer reproducing, never fatal.

use std::path::Path;
use std::process::{Command, Output};

/// Found within a few cases from seed 1 (tests/it/fuzz_partition.rs).
const MUTANT: &str = "inproc:mutant:availability-optimistic";

fn fuzz(runtime: &str, corpus: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["fuzz", "--runtime", runtime, "--seed", "1", "--cases", "6"])
        .args([
            "--seconds",
            "600",
            "--shrink-budget",
            "40",
            "--color",
            "never",
        ])
        .arg("--corpus")
        .arg(corpus)
        .output()
        .expect("hcpspec fuzz")
}

fn json_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_finding_kept_in_the_corpus_is_replayed_first_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus");
    let first = fuzz(MUTANT, &corpus);
    let out1 = String::from_utf8_lossy(&first.stdout);
    assert_eq!(first.status.code(), Some(1), "run 1 finds: {out1}");
    let kept = json_files(&corpus);
    assert!(
        !kept.is_empty(),
        "run 1 keeps its findings in the corpus: {out1}"
    );
    assert!(
        !out1.contains("corpus:"),
        "an empty corpus replays nothing: {out1}"
    );

    // Run 2 on the same mutant: every kept case reproduces, before any new case is played.
    let second = fuzz(MUTANT, &corpus);
    let out2 = String::from_utf8_lossy(&second.stdout);
    assert_eq!(second.status.code(), Some(1), "{out2}");
    let lines: Vec<&str> = out2.lines().collect();
    for name in &kept {
        let at = lines
            .iter()
            .position(|l| l.starts_with("corpus: ") && l.contains(name.as_str()))
            .unwrap_or_else(|| panic!("{name} not replayed: {out2}"));
        assert!(lines[at].contains(": reproduces: "), "{}", lines[at]);
        let first_finding = lines.iter().position(|l| l.starts_with("finding: "));
        assert!(
            first_finding.is_none_or(|f| at < f),
            "replayed first: {out2}"
        );
    }
    assert!(
        out2.contains(&format!("corpus: {} cases replayed", kept.len())),
        "{out2}"
    );

    // On the reference the same corpus no longer reproduces: said, and not a failure.
    let fixed = fuzz("inproc:reference", &corpus);
    let out3 = String::from_utf8_lossy(&fixed.stdout);
    assert_eq!(
        fixed.status.code(),
        Some(0),
        "{out3}{}",
        String::from_utf8_lossy(&fixed.stderr)
    );
    for name in &kept {
        assert!(
            out3.lines()
                .any(|l| l.contains(name.as_str()) && l.contains("no longer reproduces")),
            "{name}: {out3}"
        );
    }
    assert!(out3.contains("0 reproduce"), "{out3}");
}

#[test]
fn a_corpus_file_that_is_not_a_case_is_skipped_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("broken.json"), "{not json").unwrap();
    let run = fuzz("inproc:reference", &corpus);
    let out = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{out}");
    assert!(out.contains("broken.json: not a case, skipped"), "{out}");
}
