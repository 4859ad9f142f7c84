//! The launch contract (docs/harness-api.md § 1): a harness program started once per scenario
//! with `NYLORUN_CORE_URL`, `NYLORUN_HARNESS_TOKEN`, `NYLORUN_GATES_URL` and `HARNESS_NAME`,
//! stopped with SIGTERM, a grace period, then SIGKILL of its process group. Its last stderr
//! lines are kept as evidence. Embedded harnesses run as tasks on the scenario's runtime.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a harness is given: in a module of its own, since the reference harness takes it too
/// and this module starts the reference harness.
pub use super::env::LaunchEnv;

/// How much stderr is kept as evidence.
pub const STDERR_LINES: usize = 40;
pub const GRACE: Duration = Duration::from_millis(500);

/// The variables of hcpspec's environment a launched harness keeps (docs/harness-api.md § 1):
/// what a program, Node and Python need to start, and nothing a CI job keeps secrets in. `NAME*`
/// is a prefix. Everything else of hcpspec's environment is cleared.
pub const MINIMAL_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
];

/// Whether a variable of hcpspec's environment is one of [`MINIMAL_ENV`].
pub fn kept(name: &str) -> bool {
    MINIMAL_ENV.iter().any(|k| match k.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *k,
    })
}

/// The whole environment of a launched harness: [`MINIMAL_ENV`] from hcpspec's, then the
/// launch contract's variables.
pub fn harness_env(env: &LaunchEnv) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut out: Vec<_> = std::env::vars_os()
        .filter(|(k, _)| k.to_str().is_some_and(kept))
        .collect();
    out.extend(env.vars().into_iter().map(|(k, v)| (k.into(), v.into())));
    out
}

/// A running harness.
pub enum Running {
    Process {
        child: Child,
        stderr: Arc<Mutex<VecDeque<String>>>,
    },
    Task(tokio::task::JoinHandle<()>),
}

/// The harness under test: a command, or an embedded reference with its knobs.
#[derive(Debug, Clone)]
pub enum Harness {
    Exec(Vec<String>),
    Embedded(super::reference::Knobs),
}

impl Harness {
    /// `exec:CMD ARGS`, `inproc:reference`, `inproc:mutant:NAME`, `inproc:variant:NAME`.
    pub fn parse(spec: &str) -> Result<Harness, String> {
        if let Some(cmd) = spec.strip_prefix("exec:") {
            let argv = shell_words::split(cmd).map_err(|e| format!("--runtime {spec}: {e}"))?;
            if argv.is_empty() {
                return Err(format!("--runtime {spec}: no command after exec:"));
            }
            return Ok(Harness::Exec(argv));
        }
        if let Some(name) = spec.strip_prefix("inproc:") {
            return super::reference::Knobs::named(name).map(Harness::Embedded).ok_or_else(|| {
                format!(
                    "--runtime {spec}: no embedded harness `{name}` (reference, mutant:NAME, variant:NAME; see `hcpspec list --suite harness-api --mutants`)"
                )
            });
        }
        Err(format!(
            "--runtime {spec}: a harness is started as exec:'CMD ARGS' (or inproc:reference)"
        ))
    }

    /// Start it; must be called on the scenario's runtime.
    pub fn start(&self, env: &LaunchEnv) -> Result<Running, String> {
        match self {
            Harness::Embedded(k) => Ok(Running::Task(tokio::spawn(super::reference::run(
                env.clone(),
                *k,
            )))),
            Harness::Exec(argv) => {
                // hcpspec's own working directory, so that relative paths in CMD work; its
                // environment cleared but for the minimal set and the contract's variables.
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..])
                    .env_clear()
                    .envs(harness_env(env))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .process_group(0);
                let mut child = cmd
                    .spawn()
                    .map_err(|e| format!("cannot start `{}`: {e}", argv[0]))?;
                let stderr = Arc::new(Mutex::new(VecDeque::new()));
                if let Some(err) = child.stderr.take() {
                    let keep = stderr.clone();
                    std::thread::spawn(move || {
                        for line in BufReader::new(err).lines().map_while(Result::ok) {
                            let mut k = keep.lock().unwrap_or_else(|p| p.into_inner());
                            if k.len() == STDERR_LINES {
                                k.pop_front();
                            }
                            k.push_back(line.chars().take(400).collect());
                        }
                    });
                }
                Ok(Running::Process { child, stderr })
            }
        }
    }
}

impl Running {
    /// Stop it (SIGTERM, grace, SIGKILL of the group) and return its last stderr lines.
    pub fn stop(self, kill_now: bool) -> Vec<String> {
        match self {
            Running::Task(t) => {
                t.abort();
                vec![]
            }
            Running::Process { mut child, stderr } => {
                let pgid = child.id() as i32;
                let signal = |s| unsafe { libc::kill(-pgid, s) };
                if !kill_now {
                    signal(libc::SIGTERM);
                    let until = Instant::now() + GRACE;
                    while Instant::now() < until {
                        if matches!(child.try_wait(), Ok(Some(_))) {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                // The group too: a harness's own children never outlive the scenario.
                signal(libc::SIGKILL);
                let status = child.wait().ok();
                // The reader thread ends at EOF; give it a moment to take the last lines.
                std::thread::sleep(Duration::from_millis(20));
                let mut lines: Vec<String> = stderr
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .cloned()
                    .collect();
                if let Some(s) = status {
                    if !s.success() && s.code().is_some() {
                        lines.push(format!("[hcpspec] the harness exited with {s}"));
                    }
                }
                lines
            }
        }
    }
}
