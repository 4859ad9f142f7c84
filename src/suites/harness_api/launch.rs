//! The launch contract (docs/harness-api.md § 1): a harness program started once per scenario
//! with `NYLORUN_CORE_URL`, `NYLORUN_HARNESS_TOKEN`, `NYLORUN_GATES_URL` and `HARNESS_NAME`,
//! stopped with SIGTERM, a grace period, then SIGKILL of everything it started, whatever its
//! group or session (`reap`). Its last stderr lines are kept as evidence, read in bounded
//! chunks. Embedded harnesses run as tasks on the scenario's runtime.

/// The launch contract's newest version (docs/CHANGELOG.md), `hcpspec-launch/2` in a suite's
/// suite.json (`requirements`). A harness states none: it is launched, and judged by the newest unless
/// `--launch-contract` names the one it is written to.
pub const VERSION: &str = "2";

use crate::adapter::reap::{self, Tree};
use crate::error::BadInput;
use crate::spec::{Scheme, Spec, SpecError};
use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a harness is given: in a module of its own, since the reference harness takes it too
/// and this module starts the reference harness.
pub use super::env::{LaunchEnv, PodEnv};

/// How much stderr is kept as evidence: the last 40 lines, each of at most 400 bytes (a longer
/// line is cut, marked with its full size; its rest is read and dropped, never held).
pub const STDERR_LINES: usize = 40;
pub const STDERR_LINE_BYTES: usize = 400;
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
        stderr: Arc<Mutex<Stderr>>,
        tree: Tree,
    },
    Task(tokio::task::JoinHandle<()>),
}

/// The harness under test: a command, or an embedded reference with its knobs.
#[derive(Debug, Clone)]
pub enum Harness {
    Exec(Vec<String>),
    Embedded(super::reference::Knobs),
}

/// A harness whose command would not start (not found, not executable …).
#[derive(Debug, thiserror::Error)]
#[error("cannot start `{program}`: {source}")]
pub struct CannotStart {
    program: String,
    source: std::io::Error,
}

impl Harness {
    /// `exec:CMD ARGS`, `inproc:reference`, `inproc:mutant:NAME`, `inproc:variant:NAME`.
    pub fn parse(spec: &str) -> Result<Harness, BadInput> {
        match spec.parse::<Spec>() {
            Ok(Spec::Exec(cmd)) => Ok(Harness::Exec(cmd.argv)),
            Err(e @ SpecError::Command {
                scheme: Scheme::Exec,
                ..
            }) => Err(e.into()),
            Ok(Spec::Inproc(name)) => super::reference::Knobs::named(&name)
                .map(Harness::Embedded)
                .ok_or_else(|| {
                    format!(
                        "--runtime {spec}: no embedded harness `{name}` (reference, mutant:NAME, variant:NAME; see `hcpspec list --suite harness-api --mutants`)"
                    )
                    .into()
                }),
            _ => Err(format!(
                "--runtime {spec}: a harness is started as exec:'CMD ARGS' (or inproc:reference)"
            )
            .into()),
        }
    }

    /// Whether its command can be started at all: a program named by a path is an executable
    /// file, a bare name is one on `PATH`. Checked once before any scenario, so a harness that
    /// cannot start is unreachable (exit 3, one line), as a shim of another suite is, not an
    /// error verdict per scenario.
    pub fn startable(&self) -> Result<(), CannotStart> {
        use std::os::unix::fs::PermissionsExt;
        let Harness::Exec(argv) = self else {
            return Ok(());
        };
        let Some(program) = argv.first() else {
            return Ok(());
        };
        let runs = |p: &std::path::Path| {
            std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        let fail = |source| {
            Err(CannotStart {
                program: program.clone(),
                source,
            })
        };
        if program.contains('/') {
            return match runs(std::path::Path::new(program)) {
                Ok(true) => Ok(()),
                Ok(false) => fail(std::io::Error::other("not an executable file")),
                Err(e) => fail(e),
            };
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        if std::env::split_paths(&path).any(|d| runs(&d.join(program)).unwrap_or(false)) {
            Ok(())
        } else {
            fail(std::io::Error::other("not found on PATH"))
        }
    }

    /// Start it; must be called on the scenario's runtime.
    pub fn start(&self, env: &LaunchEnv) -> Result<Running, CannotStart> {
        match self {
            Harness::Embedded(k) => Ok(Running::Task(tokio::spawn(super::reference::run(
                env.clone(),
                *k,
            )))),
            Harness::Exec(argv) => {
                // hcpspec's own working directory, so that relative paths in CMD work; its
                // environment cleared but for the minimal set and the contract's variables.
                reap::become_subreaper();
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..])
                    .env_clear()
                    .envs(harness_env(env))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .process_group(0);
                let mut child = cmd.spawn().map_err(|source| CannotStart {
                    program: argv[0].clone(),
                    source,
                })?;
                let stderr = Arc::new(Mutex::new(Stderr::default()));
                if let Some(err) = child.stderr.take() {
                    let keep = stderr.clone();
                    std::thread::spawn(move || read_stderr(err, &keep));
                }
                let tree = Tree::watch(child.id(), env.marker());
                Ok(Running::Process {
                    child,
                    stderr,
                    tree,
                })
            }
        }
    }
}

impl Running {
    /// Whether the harness has exited, with every process it started: then it will not
    /// connect, and its allowance to connect is not waited out.
    pub fn exited(&mut self) -> bool {
        match self {
            Running::Task(t) => t.is_finished(),
            Running::Process { child, tree, .. } => {
                matches!(child.try_wait(), Ok(Some(_))) && tree.empty()
            }
        }
    }

    /// Its processes now, as far as they are known (none for an embedded harness, which runs
    /// on the scenario's thread): whose waits for a CPU scenario time does not charge.
    pub fn pids(&mut self) -> Vec<i32> {
        match self {
            Running::Task(_) => vec![],
            Running::Process { child, tree, .. } => {
                let mut pids = tree.pids();
                // Once reaped, its pid may name another process.
                if matches!(child.try_wait(), Ok(None)) {
                    pids.push(child.id() as i32);
                }
                pids
            }
        }
    }

    /// Stop it: SIGTERM to the harness, its group and every process of its tree, a grace
    /// period, then SIGKILL of all of them, whatever their group or session (`reap`); never
    /// blocks past the grace and [`reap::KILL_WAIT`]. Returns its last stderr lines.
    pub fn stop(self, kill_now: bool) -> Vec<String> {
        match self {
            Running::Task(t) => {
                t.abort();
                vec![]
            }
            Running::Process {
                mut child,
                stderr,
                tree,
            } => {
                let pid = child.id() as i32;
                // Its group, unless it joined hcpspec's own (never signal that).
                let own = unsafe { libc::getpgid(0) };
                let group = |s| {
                    if pid != own {
                        unsafe { libc::kill(-pid, s) };
                    }
                };
                let mut status = None;
                if !kill_now {
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    group(libc::SIGTERM);
                    tree.terminate();
                    let until = Instant::now() + GRACE;
                    while Instant::now() < until {
                        if let Ok(Some(s)) = child.try_wait() {
                            status = Some(s);
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                // The harness, its group and every process it started, wherever it went.
                let left = tree.kill_all(|| {
                    if status.is_none() {
                        status = child.try_wait().ok().flatten();
                    }
                    status.is_some()
                });
                // The reader thread ends at EOF; give it a moment to take the last lines.
                std::thread::sleep(Duration::from_millis(20));
                let mut lines = stderr.lock().unwrap_or_else(|p| p.into_inner()).lines();
                if let Some(s) = status {
                    if !s.success() && s.code().is_some() {
                        lines.push(format!("[hcpspec] the harness exited with {s}"));
                    }
                }
                if left > 0 {
                    lines.push(format!(
                        "[hcpspec] {left} process(es) of the harness still there {} ms after SIGKILL",
                        reap::KILL_WAIT.as_millis()
                    ));
                }
                lines
            }
        }
    }
}

/// The harness's last stderr lines, and the line being read.
#[derive(Default)]
pub struct Stderr {
    /// Each line's first bytes (held past the cut) and its full size: redacted, then cut, when
    /// they are shown.
    kept: VecDeque<(Vec<u8>, u64)>,
    line: Vec<u8>,
    /// The full size of the line being read (its bytes past the cap are dropped).
    len: u64,
}

impl Stderr {
    fn push(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let (part, ends) = match chunk.strip_suffix(b"\n") {
                Some(p) => (p, true),
                None => (chunk, false),
            };
            // Held past the cut, and redacted before it is cut (`line_cut`).
            let room = (STDERR_LINE_BYTES + crate::snapshot::CUT_LOOKAHEAD)
                .saturating_sub(self.line.len());
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            self.len += part.len() as u64;
            if ends {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        if self.kept.len() == STDERR_LINES {
            self.kept.pop_front();
        }
        self.kept
            .push_back((std::mem::take(&mut self.line), self.len));
        self.len = 0;
    }

    /// The kept lines, the one being read last.
    fn lines(&self) -> Vec<String> {
        let mut s = Stderr {
            kept: self.kept.clone(),
            line: self.line.clone(),
            len: self.len,
        };
        if s.len > 0 {
            s.end_line();
        }
        s.kept
            .iter()
            .map(|(held, len)| {
                let mut text = crate::snapshot::line_cut(held, STDERR_LINE_BYTES);
                if *len > STDERR_LINE_BYTES as u64 {
                    text.push_str(&format!("…[cut: {len} bytes in all]"));
                }
                text
            })
            .collect()
    }
}

/// Read a harness's stderr in bounded chunks to its end.
fn read_stderr(mut err: impl Read, keep: &Mutex<Stderr>) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match err.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => keep
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}
