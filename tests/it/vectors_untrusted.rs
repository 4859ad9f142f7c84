//! A vectors folder and a result file are input hcpspec does not trust (docs/security.md): a
//! FIFO where a ledger or a pack's file should be, a file of gigabytes beside the cases, patches
//! chained along ever deeper pointers, a hand-edited result whose numbers overflow a sum and
//! whose report-level members hold a secret. Each is a line naming what is wrong or a verdict,
//! within bounded time and memory: never a hang, an abort or a panic (a hostile pass found each).

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// hcpspec run to its end within `limit` (the test fails, and kills it, past that), its peak
/// RSS under the bound.
fn hcpspec<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(
    args: &[S],
    envs: &[(&str, &str)],
    limit: Duration,
) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hcpspec"));
    cmd.args(args)
        .envs(envs.iter().copied())
        .current_dir(root());
    let start = std::time::Instant::now();
    let (o, peak) = common::output_and_peak_rss(cmd.arg("--color").arg("never"));
    assert!(
        start.elapsed() < limit,
        "hcpspec {args:?} took {:?}",
        start.elapsed()
    );
    assert!(
        peak < common::RSS_BOUND,
        "hcpspec {args:?}: peak RSS {} MiB",
        peak >> 20
    );
    o
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A copy of the checkout's vectors.
fn vectors(dir: &Path) -> PathBuf {
    let v = dir.join("v");
    common::copy_dir(&root().join("vectors"), &v);
    v
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// `run --suite contract --filter FILTER --out OUT`, then `extra` (`--vectors DIR` …).
fn run_contract(filter: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let out = out.to_str().unwrap();
    [
        "run", "--suite", "contract", "--filter", filter, "--out", out,
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

/// A one-case contract run's result.json in `dir/name`.
fn result_of(dir: &Path, name: &str, filter: &str) -> PathBuf {
    let out = dir.join(name);
    let o = hcpspec(
        &run_contract(filter, &out, &[]),
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    out.join("result.json")
}

/// A ledger the suite lists that is a FIFO: `diff` said nothing and waited for a writer.
#[test]
fn a_ledger_that_is_a_fifo_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let v = vectors(dir.path());
    mkfifo(&v.join("COVERAGE.md"));
    let r = result_of(
        dir.path(),
        "o",
        "contract::01-load::duplicate-pack-id-rejected",
    );
    let r = r.to_str().unwrap();
    // Killed, and the test failed, past the limit: it waited for a writer forever.
    let (o, _) = common::hcpspec_within(
        &["diff", "--vectors", v.to_str().unwrap(), r, r],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("COVERAGE.md: cannot read: not a regular file (a FIFO)"),
        "{}",
        text(&o)
    );
}

/// A pack's file that is a FIFO: the copy into the case's packs waited for a writer, and the run
/// with it (an error verdict now, naming the file).
#[test]
fn a_fixture_packs_file_that_is_a_fifo_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let v = vectors(dir.path());
    mkfifo(&v.join("packs/transit/surface.json"));
    let out = dir.path().join("o");
    let args = run_contract(
        "*get-pack-answers*",
        &out,
        &["--vectors", v.to_str().unwrap()],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, _) = common::hcpspec_within(&args, Duration::from_secs(60));
    assert!(
        text(&o).contains("surface.json is not a regular file"),
        "{}",
        text(&o)
    );
}

/// A file of 1.1 GB beside the cases (sparse: it takes no disk): the folder's hash read it
/// whole (1.15 GB peak), where it is now read in pieces.
#[test]
fn a_file_of_gigabytes_in_the_vectors_is_hashed_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let v = vectors(dir.path());
    std::fs::File::create(v.join("README.md"))
        .unwrap()
        .set_len(1100 << 20)
        .unwrap();
    let out = dir.path().join("o");
    let filter = "contract::01-load::duplicate-pack-id-rejected";
    let args = run_contract(filter, &out, &["--vectors", v.to_str().unwrap()]);
    let o = hcpspec(&args, &[], Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Patches chained along ever deeper pointers (each 100 levels under the last) built a pack
/// file 12 000 levels deep, and printing it overflowed the case's stack: the whole run aborted.
#[test]
fn patches_past_the_pointer_bound_are_refused_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let v = vectors(dir.path());
    let file = v.join("contract/01-load/surface-missing-pack-id-rejected.json");
    let mut case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut deep = serde_json::json!({});
    for _ in 0..100 {
        deep = serde_json::json!({ "x": deep });
    }
    let patches: serde_json::Map<String, serde_json::Value> = (1..121)
        .map(|i| ("/x".repeat(1 + 101 * (i - 1)), deep.clone()))
        .collect();
    case["setup"]["packs"][0]["patch"] = serde_json::json!({ "surface.json": patches });
    std::fs::write(&file, case.to_string()).unwrap();
    let out = dir.path().join("o");
    let extra = ["--vectors", v.to_str().unwrap(), "--jobs", "1"];
    let args = run_contract("*surface-missing-pack-id*", &out, &extra);
    let o = hcpspec(&args, &[], Duration::from_secs(60));
    assert!(matches!(o.status.code(), Some(1 | 2)), "{}", text(&o));
    assert!(text(&o).contains("(at most 64)"), "{}", text(&o));
}

/// A hand-edited result: a case's `micros` at u64's largest beside another case (their sum
/// overflowed: `report`, `verify` and `diff` panicked), and a secret in the report's own
/// members (`vectors[].origin`, `hcpspec_version`), which were not contained.
#[test]
fn a_result_that_overflows_a_sum_and_holds_a_secret_in_its_own_members() {
    const SECRET: &str = "zq9SECRETvalue77xk";
    let dir = tempfile::tempdir().unwrap();
    let live = result_of(dir.path(), "o", "contract::01-load::*");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&live).unwrap()).unwrap();
    assert!(
        r["suites"][0]["runtimes"][0]["cases"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    r["suites"][0]["runtimes"][0]["cases"][0]["micros"] = serde_json::json!(u64::MAX);
    r["vectors"][0]["origin"] = serde_json::json!(SECRET);
    r["hcpspec_version"] = serde_json::json!(SECRET);
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, r.to_string()).unwrap();
    let (e, l) = (edited.to_str().unwrap(), live.to_str().unwrap());
    let published = dir.path().join("published");
    let env = [("MY_API_TOKEN", SECRET)];
    let mut all = String::new();
    for args in [
        vec!["report", e, "--out", published.to_str().unwrap()],
        vec!["verify", e],
        vec!["diff", e, l],
    ] {
        let o = hcpspec(&args, &env, Duration::from_secs(60));
        // Whatever each concludes of an edited file: never a panic (101) nor a signal.
        assert!(
            o.status.code().is_some_and(|c| c != 101),
            "{args:?}: {}",
            text(&o)
        );
        all += &text(&o);
    }
    for f in std::fs::read_dir(&published).unwrap().flatten() {
        all += &std::fs::read_to_string(f.path()).unwrap_or_default();
    }
    assert!(!all.contains(SECRET), "the secret leaked: {all}");
}

/// An output in a reused `--out` that is a symbolic link out of it (`result.json`, `badges`,
/// a suite's badges folder): `run` and `report` overwrote the file it named, and wrote badges
/// into the folder it named. Refused now, the files outside untouched.
#[test]
fn no_output_is_written_through_a_link_out_of_the_out_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim.json"), "ORIG").unwrap();
    let live = result_of(
        dir.path(),
        "live",
        "contract::01-load::duplicate-pack-id-rejected",
    );
    let link = |at: &Path, to: &Path| {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(to, at).unwrap();
    };
    let (o, o2, o3) = (
        dir.path().join("o"),
        dir.path().join("o2"),
        dir.path().join("o3"),
    );
    link(&o.join("result.json"), &outside.join("victim.json"));
    link(&o2.join("badges"), &outside);
    link(&o3.join("badges/contract"), &outside);
    let run = |out: &Path| {
        let filter = "contract::01-load::duplicate-pack-id-rejected";
        hcpspec(
            &run_contract(filter, out, &[]),
            &[],
            Duration::from_secs(60),
        )
    };
    let report = |out: &Path| {
        let args = [
            "report",
            live.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        hcpspec(&args, &[], Duration::from_secs(60))
    };
    for (what, o) in [
        ("run, result.json", run(&o)),
        ("report, badges", report(&o2)),
        ("run, badges/contract", run(&o3)),
    ] {
        assert_ne!(o.status.code(), Some(0), "{what}: {}", text(&o));
        assert!(text(&o).contains("symbolic link"), "{what}: {}", text(&o));
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.json")).unwrap(),
        "ORIG"
    );
    let left: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("victim.json")]);
}

/// A case of 1 500 regexes each slow to compile (`\w{150}`: 46 ms each at the default limits,
/// a 37 KB file past 60 s to load): refused at load, within the compile bound, naming the first.
#[test]
fn a_regex_past_its_compile_bound_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let v = vectors(dir.path());
    let file = v.join("contract/01-load/duplicate-pack-id-rejected.json");
    let mut case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let slow: Vec<_> = (0..1500)
        .map(|_| serde_json::json!({ "$regex": "\\w{150}" }))
        .collect();
    case["steps"][0]["expect"] = serde_json::json!({ "$anyOf": slow });
    std::fs::write(&file, case.to_string()).unwrap();
    let (o, _) = common::hcpspec_within(
        &[
            "list",
            "--vectors",
            v.to_str().unwrap(),
            "--suite",
            "contract",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("/steps/0/expect/$anyOf/0/$regex: bad regex"),
        "{}",
        text(&o)
    );
}

/// An expectations file within its 8 MiB of 40 000 globs: each compiled to a matcher of some
/// 36 KiB, 1.4 GB in all. Past 1 024 globs it is refused naming the entry; names are compared
/// as they are, any number of them.
#[test]
fn an_expectations_file_of_too_many_globs_is_refused_and_names_are_not_compiled() {
    let dir = tempfile::tempdir().unwrap();
    let entries = |glob: bool| -> Vec<serde_json::Value> {
        (0..40_000)
            .map(|i| {
                let case = match glob {
                    true => format!("contract::*{i}*e*e*e*Z"),
                    false => format!("contract::01-load::no-such-case-{i}"),
                };
                serde_json::json!({ "case": case, "expect": "fail", "reason": "x" })
            })
            .collect()
    };
    for glob in [true, false] {
        let file = dir.path().join(format!("expectations-{glob}.json"));
        std::fs::write(
            &file,
            serde_json::json!({ "expectations": entries(glob) }).to_string(),
        )
        .unwrap();
        let out = dir.path().join(format!("o-{glob}"));
        let filter = "contract::01-load::duplicate-pack-id-rejected";
        let args = run_contract(filter, &out, &["--expectations", file.to_str().unwrap()]);
        let o = hcpspec(&args, &[], Duration::from_secs(60));
        match glob {
            true => {
                assert_eq!(o.status.code(), Some(2), "{}", text(&o));
                assert!(
                    text(&o).contains("/expectations/1024/case: more than 1024 globs"),
                    "{}",
                    text(&o)
                );
            }
            // Entries naming no case of the run: it passes, and says they are stale or unused.
            false => assert_ne!(o.status.code(), Some(2), "{}", text(&o)),
        }
    }
}
