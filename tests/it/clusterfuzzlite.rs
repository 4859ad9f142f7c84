//! ClusterFuzzLite's configuration (`.clusterfuzzlite/`, `.github/workflows/cflite_*.yml`,
//! docs/fuzzing.md): no container runs here, so the build script runs with stand-ins for
//! `cargo`, `rustc` and `zip` on a copy of `fuzz/`, and the workflows are read as text.

use hcpspec::suites::hcp::fuzz::targets::TARGETS;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `[[bin]]` names of fuzz/Cargo.toml (the cargo-fuzz targets): each section's `name`.
fn declared_targets() -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in read("fuzz/Cargo.toml").lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if let Some(v) = line.strip_prefix("name = ").filter(|_| in_bin) {
            names.push(v.trim_matches('"').to_string());
        }
    }
    names.sort();
    names
}

/// `TARGETS=(a b c)` of build.sh.
fn build_sh_targets() -> Vec<String> {
    let text = read(".clusterfuzzlite/build.sh");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("TARGETS=("))
        .expect("build.sh has a TARGETS=(...) line");
    let mut names: Vec<String> = line
        .trim_end_matches(')')
        .split_whitespace()
        .map(String::from)
        .collect();
    names.sort();
    names
}

#[test]
fn build_sh_names_every_target_fuzz_cargo_toml_declares() {
    let declared = declared_targets();
    assert_eq!(
        build_sh_targets(),
        declared,
        "build.sh against fuzz/Cargo.toml"
    );
    let mut library: Vec<String> = TARGETS.iter().map(|t| t.to_string()).collect();
    library.sort();
    assert_eq!(
        library, declared,
        "targets::TARGETS against fuzz/Cargo.toml"
    );
    for t in &declared {
        assert!(
            root().join(format!("fuzz/corpus/{t}")).is_dir(),
            "fuzz/corpus/{t}/: the seed corpus build.sh zips"
        );
    }
    let project = read(".clusterfuzzlite/project.yaml");
    assert!(project.lines().any(|l| l.trim() == "language: rust"));
    let docker = read(".clusterfuzzlite/Dockerfile");
    assert!(docker.contains("FROM gcr.io/oss-fuzz-base/base-builder-rust"));
    assert!(docker.contains("COPY .clusterfuzzlite/build.sh $SRC/"));
}

fn stub(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// build.sh on a copy of fuzz/ with stand-ins that log their arguments: every target lands in
/// $OUT with its dictionary and seed corpus, `SANITIZER=none` builds without one.
fn run_build_sh(fuzz_toml: &str, sanitizer: &str) -> (std::process::Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, out, bin) = (
        tmp.path().join("hcpspec"),
        tmp.path().join("out"),
        tmp.path().join("bin"),
    );
    for d in [&repo.join(".clusterfuzzlite"), &bin] {
        fs::create_dir_all(d).unwrap();
    }
    fs::copy(
        root().join(".clusterfuzzlite/build.sh"),
        repo.join(".clusterfuzzlite/build.sh"),
    )
    .unwrap();
    let fuzz = repo.join("fuzz");
    fs::create_dir_all(&fuzz).unwrap();
    fs::write(fuzz.join("Cargo.toml"), fuzz_toml).unwrap();
    fs::write(fuzz.join("json.dict"), "\"{\"\n").unwrap();
    for t in TARGETS {
        fs::create_dir_all(fuzz.join("corpus").join(t)).unwrap();
        fs::write(fuzz.join("corpus").join(t).join("seed-1"), "{}").unwrap();
    }
    let log = tmp.path().join("log");
    let release = "target/x86_64-unknown-linux-gnu/release";
    stub(
        &bin,
        "cargo",
        &format!(
            "echo \"cargo $*\" >> {log}\nmkdir -p {release}\nfor t in {}; do echo bin > {release}/$t; done",
            TARGETS.join(" "),
            log = log.display()
        ),
    );
    stub(&bin, "rustc", "echo 'host: x86_64-unknown-linux-gnu'");
    stub(
        &bin,
        "zip",
        &format!("echo \"zip $*\" >> {}\n: > \"$3\"", log.display()),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = Command::new("bash")
        .arg(repo.join(".clusterfuzzlite/build.sh"))
        .current_dir(&repo)
        .env("PATH", path)
        .env("OUT", &out)
        .env("SRC", tmp.path())
        .env("SANITIZER", sanitizer)
        .output()
        .unwrap();
    (output, tmp)
}

#[test]
fn build_sh_puts_every_target_with_its_seeds_and_dictionary_in_out() {
    let (output, tmp) = run_build_sh(&read("fuzz/Cargo.toml"), "none");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "build.sh failed: {stderr}");
    let log = fs::read_to_string(tmp.path().join("log")).unwrap();
    assert!(
        log.lines().any(|l| l == "cargo fuzz build -O -s none"),
        "SANITIZER=none builds without a sanitizer: {log}"
    );
    for t in TARGETS {
        let out = tmp.path().join("out");
        for file in [
            t.to_string(),
            format!("{t}.dict"),
            format!("{t}_seed_corpus.zip"),
        ] {
            assert!(out.join(&file).is_file(), "$OUT/{file} missing: {log}");
        }
        assert!(
            log.contains(&format!("corpus/{t}/seed-1")),
            "{t}'s seeds are zipped: {log}"
        );
    }
    // The container's default (address) is cargo-fuzz's own: no flag.
    let (output, tmp) = run_build_sh(&read("fuzz/Cargo.toml"), "address");
    assert!(output.status.success());
    let log = fs::read_to_string(tmp.path().join("log")).unwrap();
    assert!(log.lines().any(|l| l == "cargo fuzz build -O"), "{log}");
}

#[test]
fn build_sh_refuses_a_target_it_does_not_name() {
    let toml = format!(
        "{}\n[[bin]]\nname = \"new_target\"\npath = \"fuzz_targets/new_target.rs\"\n",
        read("fuzz/Cargo.toml")
    );
    let (output, tmp) = run_build_sh(&toml, "none");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("new_target"), "{stderr}");
    assert!(!tmp.path().join("log").exists(), "nothing built: {stderr}");
}

/// One step of a workflow: what it `uses` and its `with:` inputs, in its job.
#[derive(Debug)]
struct Step {
    job: String,
    uses: String,
    with: BTreeMap<String, String>,
}

/// The steps of a GitHub workflow, read as the indented text these files are (one job level,
/// `- name:`/`uses:`/`with:` steps, scalar inputs); comments dropped.
fn steps(path: &str) -> Vec<Step> {
    let text = read(path);
    let mut out: Vec<Step> = Vec::new();
    let (mut job, mut in_with) = (String::new(), false);
    for line in text.lines() {
        let l = line.split(" #").next().unwrap_or("").trim_end();
        let body = l.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = l.len() - body.len();
        if indent == 2 && body.ends_with(':') {
            job = body.trim_end_matches(':').to_string();
        }
        if body.starts_with("- ") && indent == 6 {
            out.push(Step {
                job: job.clone(),
                uses: String::new(),
                with: BTreeMap::new(),
            });
            in_with = false;
        }
        let body = body.trim_start_matches("- ");
        let Some(step) = out.last_mut().filter(|s| s.job == job) else {
            continue;
        };
        if let Some(u) = body.strip_prefix("uses: ") {
            step.uses = u.to_string();
        } else if body == "with:" {
            in_with = true;
        } else if in_with && indent >= 10 {
            if let Some((k, v)) = body.split_once(": ") {
                step.with
                    .insert(k.to_string(), v.trim_matches('"').to_string());
            }
        } else if indent <= 8 {
            in_with = false;
        }
    }
    out
}

const BUILD: &str = "google/clusterfuzzlite/actions/build_fuzzers@v1";
const RUN: &str = "google/clusterfuzzlite/actions/run_fuzzers@v1";

#[test]
fn the_workflows_build_rust_and_run_each_mode_with_one_storage_branch() {
    let mut storage: Option<[String; 3]> = None;
    for (file, modes, trigger) in [
        ("cflite_pr.yml", &["code-change"][..], "pull_request:"),
        ("cflite_batch.yml", &["batch"][..], "schedule:"),
        ("cflite_prune.yml", &["prune", "coverage"][..], "schedule:"),
    ] {
        let path = format!(".github/workflows/{file}");
        assert!(
            read(&path).lines().any(|l| l.trim() == trigger),
            "{file}: {trigger}"
        );
        let steps = steps(&path);
        let runs: Vec<&Step> = steps.iter().filter(|s| s.uses == RUN).collect();
        let found: Vec<&str> = runs.iter().map(|s| s.with["mode"].as_str()).collect();
        assert_eq!(found, modes, "{file}: run_fuzzers modes");
        for run in runs {
            let at = format!("{file}, job {}", run.job);
            // The build of the same job: same language as project.yaml, same sanitizer.
            let build = steps
                .iter()
                .find(|s| s.job == run.job && s.uses == BUILD)
                .unwrap_or_else(|| panic!("{at}: no build_fuzzers step"));
            assert_eq!(
                build.with.get("language").map(String::as_str),
                Some("rust"),
                "{at}"
            );
            let sanitizer = |s: &Step| s.with.get("sanitizer").cloned().unwrap_or("address".into());
            assert_eq!(sanitizer(build), sanitizer(run), "{at}: sanitizer");
            let seconds: u32 = run.with["fuzz-seconds"].parse().unwrap();
            match run.with["mode"].as_str() {
                // A pull request waits on it: minutes, not the batch's hour.
                "code-change" => assert!(seconds <= 600, "{at}: {seconds} s"),
                "batch" => assert!(seconds >= 1800, "{at}: {seconds} s"),
                _ => {}
            }
            assert!(run.with.contains_key("github-token"), "{at}: github-token");
            let keys = [
                "storage-repo",
                "storage-repo-branch",
                "storage-repo-branch-coverage",
            ];
            let these = keys.map(|k| {
                run.with
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| panic!("{at}: no {k}"))
            });
            assert_ne!(
                these[1], these[2],
                "{at}: corpus and coverage share a branch"
            );
            match &storage {
                None => storage = Some(these),
                Some(first) => assert_eq!(first, &these, "{at}: another storage"),
            }
        }
    }
}
