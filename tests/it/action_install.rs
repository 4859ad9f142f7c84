//! How the GitHub Action (scripts/action.py) gets its hcpspec (`hcpspec-version`): a release
//! from PyPI, a wheel, or a build of the Action's own checkout when nothing is published; an
//! install that fails is one `::error` line, the outputs set and exit 2. Run as CI runs it:
//! the script with fake step files, RUNNER_TEMP a folder of the test's; pip kept offline
//! (PIP_NO_INDEX) and `cargo` a fake that records its arguments and "builds" by copying this
//! build's hcpspec, so nothing here needs the network or minutes.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The interpreter itself (not a shim such as pyenv's, which needs a PATH of its own): the
/// tests give the Action a PATH of their choosing.
fn python() -> String {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

struct Step {
    dir: tempfile::TempDir,
}

impl Step {
    fn new() -> Step {
        let step = Step {
            dir: tempfile::tempdir().unwrap(),
        };
        for d in ["temp", "bin", "no-index", "home"] {
            std::fs::create_dir(step.path(d)).unwrap();
        }
        step
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// A `cargo` in `bin/` that records its arguments in `cargo.args` and installs by copying
    /// this build's hcpspec into `--root`/bin, as `cargo install` would put the one it built.
    fn fake_cargo(&self) {
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n\
             while [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=\"$2\"; shift; done\n\
             /bin/mkdir -p \"$root/bin\" && /bin/cp '{}' \"$root/bin/hcpspec\"\n",
            self.path("cargo.args").display(),
            env!("CARGO_BIN_EXE_hcpspec"),
        );
        let cargo = self.path("bin/cargo");
        std::fs::write(&cargo, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The Action's run with `env` (its inputs and GitHub's variables), PATH only `bin/` and the
    /// system's (a `cargo` elsewhere, as in ~/.cargo/bin, is not found), pip offline: its exit
    /// code and its log (stdout and stderr, one pipe as the runner reads them).
    fn run(&self, env: &[(&str, &str)]) -> (Option<i32>, String) {
        let o = Command::new("/bin/sh")
            .args(["-c", "exec \"$0\" \"$1\" 2>&1", &python()])
            .arg(root().join("scripts/action.py"))
            .current_dir(self.dir.path())
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.path("bin").display()),
            )
            .env("HOME", self.path("home"))
            .env("RUNNER_TEMP", self.path("temp"))
            .env("GITHUB_OUTPUT", self.path("GITHUB_OUTPUT"))
            .env("GITHUB_STEP_SUMMARY", self.path("GITHUB_STEP_SUMMARY"))
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", self.path("no-index"))
            .env("INPUT_OUT", "out")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    }

    fn output(&self, name: &str) -> Option<String> {
        self.read("GITHUB_OUTPUT")
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")).map(String::from))
    }

    /// A failed install: exit 2, the whole log one `::error` titled `hcpspec install`, the
    /// outputs set (nothing ran: no result, no failures) and a step-summary line. Its text.
    fn failed_install(&self, code: Option<i32>, log: &str) -> String {
        assert_eq!(code, Some(2), "{log}");
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 1, "one line, no traceback: {log}");
        let text = lines[0]
            .strip_prefix("::error title=hcpspec install::")
            .unwrap_or_else(|| panic!("{log}"));
        assert_eq!(self.output("exit-code").as_deref(), Some("2"), "{log}");
        assert_eq!(self.output("failed").as_deref(), Some("0"));
        assert_eq!(self.output("out").as_deref(), Some("out"));
        assert_eq!(self.output("result-json").as_deref(), Some(""));
        let summary = self.read("GITHUB_STEP_SUMMARY");
        assert!(summary.contains("could not be installed"), "{summary}");
        text.to_string()
    }

    /// The fake cargo was run once, as `cargo install --locked --path CHECKOUT --root DIR`
    /// with DIR under RUNNER_TEMP.
    fn built_from_source(&self) {
        let args = self.read("cargo.args");
        let want = format!(
            "install --locked --path {} --root {}",
            root().display(),
            self.path("temp").display()
        );
        assert!(args.starts_with(&want), "{args:?}, not {want}");
        assert_eq!(args.lines().count(), 1, "{args}");
    }
}

const QUICK: [(&str, &str); 3] = [
    ("INPUT_SUITE", "host"),
    ("INPUT_SHARD", "1"),
    ("INPUT_SHARDS", "8"),
];

#[test]
fn a_wheel_file_that_does_not_exist_is_one_line_and_exit_2() {
    let step = Step::new();
    let wheel = step.path("hcpspec-0.1.0-py3-none-any.whl");
    let wheel = wheel.to_str().unwrap();
    let (code, log) = step.run(&[("INPUT_HCPSPEC_VERSION", wheel)]);
    let text = step.failed_install(code, &log);
    assert!(
        text.contains(wheel) && text.contains("does not exist"),
        "{text}"
    );
}

/// At a commit (no release tag), `action` builds the Action's checkout: a commit may differ
/// from every release. The run then goes on with what was built, and says which hcpspec it is.
#[test]
fn action_at_a_commit_builds_its_checkout_and_runs() {
    let step = Step::new();
    step.fake_cargo();
    let checkout = root();
    let mut env = vec![
        ("INPUT_HCPSPEC_VERSION", "action"),
        (
            "GITHUB_ACTION_REF",
            "0123456789abcdef0123456789abcdef01234567",
        ),
        ("GITHUB_ACTION_PATH", checkout.to_str().unwrap()),
    ];
    env.extend(QUICK);
    let (code, log) = step.run(&env);
    assert_eq!(code, Some(0), "{log}");
    step.built_from_source();
    let building: Vec<&str> = log.lines().filter(|l| l.contains("from source")).collect();
    assert_eq!(building.len(), 1, "one line says so: {log}");
    assert!(building[0].contains("minutes"), "{log}");
    let version = format!("hcpspec {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(step.output("version"), Some(version), "{log}");
    assert_eq!(step.output("exit-code").as_deref(), Some("0"));
    assert!(step.path("out/result.json").exists(), "{log}");
}

/// At its release tag, `action` asks PyPI for that release; when it is not published (here pip
/// is offline), it builds the checkout (outside GitHub: the folder holding scripts/).
#[test]
fn action_at_a_release_tag_not_on_pypi_builds_its_checkout() {
    let step = Step::new();
    step.fake_cargo();
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let mut env = vec![
        ("INPUT_HCPSPEC_VERSION", "action"),
        ("GITHUB_ACTION_REF", tag.as_str()),
    ];
    env.extend(QUICK);
    let (code, log) = step.run(&env);
    assert_eq!(code, Some(0), "{log}");
    step.built_from_source();
    // pip was asked for the tag's release first.
    let asked = format!("hcpspec=={}", env!("CARGO_PKG_VERSION"));
    let pip_log = std::fs::read_dir(step.path("temp"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap_or_default())
        .find(|t| t.contains(&asked));
    assert!(pip_log.is_some(), "pip never asked for {asked}: {log}");
    assert!(log.contains("PyPI") && log.contains("from source"), "{log}");
    assert!(step
        .output("version")
        .is_some_and(|v| v.starts_with("hcpspec ")));
}

/// Nothing published and no cargo: one line giving both reasons and how to get cargo; a
/// version that is not on PyPI says so.
#[test]
fn action_install_without_pypi_or_cargo_is_one_line_with_both_reasons() {
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let step = Step::new();
    let (code, log) = step.run(&[
        ("INPUT_HCPSPEC_VERSION", "action"),
        ("GITHUB_ACTION_REF", &tag),
        // PATH only the (empty) bin/: no cargo anywhere.
        ("PATH", step.path("bin").to_str().unwrap()),
    ]);
    let text = step.failed_install(code, &log);
    assert!(
        text.contains("PyPI") && text.contains(&tag[1..]),
        "the first reason: {text}"
    );
    assert!(
        text.contains("cargo") && text.contains("dtolnay/rust-toolchain"),
        "the second reason: {text}"
    );

    let step = Step::new();
    let (code, log) = step.run(&[("INPUT_HCPSPEC_VERSION", "9.9.9")]);
    let text = step.failed_install(code, &log);
    assert!(text.contains("no hcpspec 9.9.9 on PyPI"), "{text}");
}
