//! `stdio:CMD ARGS`: a shim as a child process, one JSON-RPC message per line on its stdin and
//! stdout, its stderr kept as its log (the last lines go into every transport error).
//!
//! One process serves many runtimes (by `runtime_id`), so processes are pooled: a case checks
//! one out (spawning and initialising a new one when none is idle) and gives it back when it
//! ends, unless the process broke the transport; then it is killed and the next case gets a
//! fresh one. With `--jobs N` there are at most N processes.
//!
//! Each process is contained (`reap`): started in a process group of its own with a token of
//! its own in its environment ([`SHIM_TOKEN`]), and at its end (killed, dropped, the pool's
//! end, hcpspec's exit) every process it started is killed and reaped with it, whatever its
//! group or session.

use super::reap::{self, Tree};
use super::rpc::{excerpt, secs, size, Client, Link};
use super::sched;
use super::{Adapter, CallError, Options};
use crate::error::BadInput;
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The variable naming each shim process's token in its environment (the rest of hcpspec's
/// environment is inherited): how an orphan of the process's is known for its own.
pub const SHIM_TOKEN: &str = "HCPSPEC_SHIM_TOKEN";

/// Lines of the shim's stderr kept, and the length each is cut to.
const TAIL_LINES: usize = 12;
const TAIL_WIDTH: usize = 300;

#[derive(Default)]
struct Tail {
    /// Each line's first bytes, held past the cut: redacted, then cut, when they are shown.
    lines: VecDeque<Vec<u8>>,
    closed: bool,
}

/// One shim process: its pipes, and a thread keeping the tail of its stderr.
pub(crate) struct Proc {
    child: Child,
    /// None once closed (or lost to a write that never finished).
    stdin: Option<ChildStdin>,
    /// Read on the calling thread, with poll(2) for the deadline: no thread hop per answer.
    stdout: ChildStdout,
    /// What was read past the last answer (nothing, for a shim that keeps to the protocol).
    pending: Vec<u8>,
    /// What a read fills, made once (a 64 KiB array on the stack was zeroed on every call).
    chunk: Box<[u8]>,
    stderr: Arc<Mutex<Tail>>,
    command: String,
    /// Every process it started, killed with it.
    tree: Tree,
    /// When the call under way began: its deadline does not charge what the machine made the
    /// shim, or hcpspec, wait for a CPU since (`sched`).
    call: Option<Instant>,
    /// The call under way is the shim's first: its deadline has [`START_ALLOWANCE`] besides,
    /// and when the shim was first seen to have read its request (charged time into the call).
    first: bool,
    read_at: Option<Duration>,
    /// The waits for a CPU as last read, when, and on which thread (its own wait is read on
    /// it): read again at a call's start only when older than [`WAITS_EVERY`] or made on
    /// another thread, so a call mostly costs no reads of /proc.
    waits: Option<(Instant, std::thread::ThreadId, sched::Waits)>,
    /// What its stdout showed, for the hint a transport error carries (`diagnose`).
    seen: Seen,
}

/// What a shim's stdout showed: for the hint after a failure, never for a verdict.
#[derive(Default)]
struct Seen {
    /// A byte was ever read.
    any: bool,
    /// A line was no JSON-RPC message (a log line on stdout).
    stray: bool,
    /// A deadline passed.
    late: bool,
}

/// How old the waits read before a call may be. Waits in that span before the call are not
/// charged to it either: a deadline is at most this much more lenient, never stricter.
pub(crate) const WAITS_EVERY: Duration = Duration::from_millis(100);

/// What a shim's first call (`initialize`, `core.describe`, `host.describe`) may take besides
/// its deadline, in the same charged time, until the shim reads that request: its start-up (an
/// interpreter importing its modules on a loaded machine) is not judged, as harness-api does
/// not judge a harness's (`harness_api::CONNECT_ALLOWANCE_MS`). A shim that reads the request
/// and stays silent is unreachable at its deadline; one that never reads it, this much later.
pub const START_ALLOWANCE: Duration = Duration::from_secs(30);

impl Proc {
    pub(crate) fn spawn(argv: &[String]) -> Result<Proc, String> {
        let command = shell_words::join(argv);
        let (program, args) = argv.split_first().ok_or("stdio: empty command")?;
        reap::become_subreaper();
        let token = reap::token("hcpspec-st-");
        let mut child = Command::new(program)
            .args(args)
            .env(SHIM_TOKEN, &token)
            // Its own group, so that the group is killed with it and never hcpspec's.
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match super::hints::spawn(program, &e) {
                Some(hint) => format!("stdio: cannot start `{command}`: {e}; {hint}"),
                None => format!("stdio: cannot start `{command}`: {e}"),
            })?;
        let tree = Tree::watch(child.id(), format!("{SHIM_TOKEN}={token}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let tail = Arc::new(Mutex::new(Tail::default()));
        let t = tail.clone();
        std::thread::spawn(move || read_log(stderr, t));
        Ok(Proc {
            child,
            stdin: Some(stdin),
            stdout,
            pending: Vec::new(),
            chunk: vec![0; 64 << 10].into_boxed_slice(),
            stderr: tail,
            command,
            tree,
            call: None,
            first: true,
            read_at: None,
            waits: None,
            seen: Seen::default(),
        })
    }

    /// The process's exit, waiting up to `patience` for it.
    fn exit_status(&mut self, patience: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + patience;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    /// The shim and every process of its tree (a core it started, whatever its group or
    /// session: the tree the reaper keeps, no scan of /proc of its own).
    pub(crate) fn whose(&self) -> sched::Whose {
        sched::Whose {
            pids: vec![self.child.id() as i32],
            trees: vec![self.tree.clone()],
            tids: vec![],
        }
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL to the process, its group and every process of its tree, and reap them; never
    /// blocks past [`reap::KILL_WAIT`].
    fn kill(&mut self) {
        let child = &mut self.child;
        let mut gone = false;
        self.tree.kill_all(|| {
            gone = gone || !matches!(child.try_wait(), Ok(None));
            gone
        });
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // Killed, not let exit: its tree is snapshot while it still holds its children (one
        // that exits first re-parents them, and a dead one among them is then no longer known).
        self.kill();
    }
}

/// Keep the last lines of the shim's stderr, each cut to a width.
fn read_log(stderr: impl Read, tail: Arc<Mutex<Tail>>) {
    let mut r = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut buf = [0u8; 8192];
    // A line is held past its cut, to be redacted before it is cut (`line_cut`).
    let push = |line: &mut Vec<u8>| {
        let held = std::mem::take(line);
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        t.lines.push_back(held);
        while t.lines.len() > TAIL_LINES {
            t.lines.pop_front();
        }
    };
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                push(&mut line);
            } else if line.len() < TAIL_WIDTH + crate::snapshot::CUT_LOOKAHEAD {
                line.push(b);
            }
        }
    }
    if !line.is_empty() {
        push(&mut line);
    }
    tail.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
}

impl Link for Proc {
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String> {
        let end = end_of(Instant::now(), deadline);
        let mut bytes = frame.as_bytes().to_vec();
        bytes.push(b'\n');
        self.write(bytes, deadline)?;
        self.read_line(end, deadline, cap)
    }

    fn diagnose(&mut self) -> String {
        // Let the log reader catch up: until stderr closes when the process has ended (it
        // closes with it), a moment for lines still in flight when it runs on.
        if self.alive() {
            std::thread::sleep(Duration::from_millis(50));
        } else {
            let until = Instant::now() + Duration::from_millis(500);
            while !self.stderr.lock().map(|t| t.closed).unwrap_or(true) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        // The hint first: the stderr lines that follow take lines of their own.
        let hint = match &self.seen {
            s if s.stray => format!("{}; ", super::hints::STRAY),
            s if s.late && !s.any => format!("{}; ", super::hints::FLUSH),
            _ => String::new(),
        };
        let t = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        if t.lines.is_empty() {
            format!("{hint}`{}` wrote nothing to stderr", self.command)
        } else {
            format!(
                "{hint}last stderr lines of `{}`:\n    {}",
                self.command,
                t.lines
                    .iter()
                    .map(|l| crate::snapshot::line_cut(l, TAIL_WIDTH)
                        .trim_end()
                        .to_string())
                    .collect::<Vec<_>>()
                    .join("\n    ")
            )
        }
    }
}

/// `start + deadline`, or a year from `start` for a deadline past what an Instant can hold
/// (as good as none; the CLI bounds it).
pub(crate) fn end_of(start: Instant, deadline: Duration) -> Instant {
    start
        .checked_add(deadline)
        .unwrap_or_else(|| start + Duration::from_secs(86400 * 365))
}

/// Whether `fd` has something to read (data, or the end) within `within`.
fn readable(fd: &impl AsRawFd, within: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = within.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
    loop {
        // SAFETY: one valid pollfd for the length of the call.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // POLLHUP and POLLERR count as readable: the read then says what happened.
            return n > 0;
        }
    }
}

/// [`Proc::started`]'s rule: `read_at` is when the request was first seen read (set here), and
/// `unread` whether it is still in the pipe, None where that cannot be seen: then the shim is
/// taken to be starting until the allowance is spent (at worst its start-up and its first
/// answer share the allowance; the start-up is never judged).
fn first_deadline(
    read_at: &mut Option<Duration>,
    unread: Option<bool>,
    charged: Duration,
    deadline: Duration,
) -> Duration {
    if read_at.is_none() && unread == Some(false) {
        *read_at = Some(charged.min(START_ALLOWANCE));
    }
    match *read_at {
        Some(at) => at + deadline,
        None => (charged + deadline).min(START_ALLOWANCE + deadline),
    }
}

/// Whether what was written to a pipe is still in it, unread, seen from its write end (None
/// where that cannot be seen). On Linux FIONREAD counts a pipe's bytes from either end. On
/// macOS FIONREAD on the write end counts that end's own buffer, always empty, but its `fstat`
/// size is the bytes in the pipe (xnu's `pipe_stat` reports the read end's count for it).
fn unread_in(stdin: &impl AsRawFd) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int.
        let r = unsafe { libc::ioctl(stdin.as_raw_fd(), libc::FIONREAD, &mut n) };
        Some(r == 0 && n > 0)
    }
    #[cfg(target_os = "macos")]
    {
        // SAFETY: a plain C struct, all zeros valid; fstat fills it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::fstat(stdin.as_raw_fd(), &mut st) };
        Some(r == 0 && st.st_size > 0)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = stdin;
        None
    }
}

/// A write this small never blocks on an empty pipe (a pipe holds at least one page), and the
/// pipe is empty between calls: the shim read the last request before answering it.
const DIRECT_WRITE: usize = 4096;

impl Proc {
    /// The next line the shim writes (without its newline), by `end`: a line over `cap` bytes
    /// is an error as soon as `cap` is passed (what was read of it is kept, never more than
    /// `cap` and a chunk), and so is `end` (`deadline` is how long that was, for the message).
    pub(crate) fn read_line(
        &mut self,
        mut end: Instant,
        deadline: Duration,
        cap: usize,
    ) -> Result<Vec<u8>, String> {
        let mut scanned = 0;
        loop {
            let newline = memchr::memchr(b'\n', &self.pending[scanned..]).map(|i| scanned + i);
            scanned = self.pending.len();
            if let Some(i) = newline {
                let rest = self.pending.split_off(i + 1);
                let mut line = std::mem::replace(&mut self.pending, rest);
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.seen.stray |= !super::hints::jsonrpc_like(&line);
                if line.len() > cap {
                    return Err(format!(
                        "the answer is over the size cap of {} ({} bytes)",
                        size(cap),
                        line.len()
                    ));
                }
                return Ok(line);
            }
            if self.pending.len() > cap {
                return Err(format!(
                    "the answer is over the size cap of {} ({} bytes so far without a newline)",
                    size(cap),
                    self.pending.len()
                ));
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() || !readable(&self.stdout, left) {
                if let Some(more) = self.unwaited(deadline) {
                    end = end_of(Instant::now(), more);
                    continue;
                }
                self.seen.late = true;
                let got = if self.pending.is_empty() {
                    "nothing".to_string()
                } else {
                    format!(
                        "{} bytes without a newline: {}",
                        self.pending.len(),
                        excerpt(&self.pending)
                    )
                };
                let allowance = match self.first && self.read_at.is_none() {
                    true => format!(
                        " and the start-up allowance of {} ({})",
                        secs(START_ALLOWANCE),
                        match cfg!(any(target_os = "linux", target_os = "macos")) {
                            true => "the shim never read the request",
                            false => "whether the shim read the request cannot be seen here",
                        }
                    ),
                    false => String::new(),
                };
                return Err(format!(
                    "no answer within {}{allowance} (received {got})",
                    secs(deadline)
                ));
            }
            match self.stdout.read(&mut self.chunk) {
                Ok(0) => {
                    let rest = if self.pending.is_empty() {
                        String::new()
                    } else {
                        format!(" after {} without a newline", excerpt(&self.pending))
                    };
                    return Err(format!(
                        "the shim closed its stdout mid-call{rest}; {}",
                        self.exited()
                    ));
                }
                Ok(n) => {
                    self.seen.any = true;
                    self.pending.extend_from_slice(&self.chunk[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("reading the shim's stdout failed: {e}")),
            }
        }
    }

    /// Write one frame to the shim's stdin within `deadline`. A small frame is written here; a
    /// larger one on a thread, since a shim that stops reading fills the pipe and would block
    /// the write past any deadline (killing the process unblocks it).
    /// What is left of the call's `deadline` when the time the machine made the shim's threads
    /// or this thread wait for a CPU since the call began is not charged; None when nothing is.
    fn unwaited(&mut self, deadline: Duration) -> Option<Duration> {
        let start = self.call?;
        let waited = self.waits.as_ref()?.2.since(&self.whose());
        let charged = sched::charged(start.elapsed(), waited);
        let deadline = match self.first {
            true => self.started(charged, deadline),
            false => deadline,
        };
        deadline.checked_sub(charged).filter(|d| !d.is_zero())
    }

    /// The first call's deadline, `charged` into it: while the shim has not read its request
    /// (it is still in the pipe: the shim is starting), at most [`START_ALLOWANCE`] besides;
    /// once it has, `deadline` from when that was first seen (at most one `deadline` late).
    fn started(&mut self, charged: Duration, deadline: Duration) -> Duration {
        let unread = match &self.stdin {
            Some(stdin) => unread_in(stdin),
            None => Some(false),
        };
        first_deadline(&mut self.read_at, unread, charged, deadline)
    }

    /// Write a call's request: the call begins now.
    pub(crate) fn write(&mut self, bytes: Vec<u8>, deadline: Duration) -> Result<(), String> {
        let now = Instant::now();
        self.first = self.call.is_none();
        self.call = Some(now);
        let me = std::thread::current().id();
        if self
            .waits
            .as_ref()
            .is_none_or(|(at, on, _)| now - *at > WAITS_EVERY || *on != me)
        {
            self.waits = Some((now, me, sched::Waits::of(&self.whose())));
        }
        let Some(mut stdin) = self.stdin.take() else {
            return Err(format!("the shim's stdin is closed; {}", self.exited()));
        };
        let written = if bytes.len() <= DIRECT_WRITE {
            let r = stdin.write_all(&bytes).and_then(|_| stdin.flush());
            self.stdin = Some(stdin);
            r
        } else {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let r = stdin.write_all(&bytes).and_then(|_| stdin.flush());
                let _ = tx.send((r, stdin));
            });
            match rx.recv_timeout(deadline) {
                Ok((r, stdin)) => {
                    self.stdin = Some(stdin);
                    r
                }
                Err(_) => {
                    return Err(format!(
                        "the shim did not read its stdin within {}",
                        secs(deadline)
                    ))
                }
            }
        };
        written.map_err(|e| format!("cannot write to the shim's stdin ({e}); {}", self.exited()))
    }

    /// "the shim exited with status 3" or "the shim is still running".
    fn exited(&mut self) -> String {
        match self.exit_status(Duration::from_millis(300)) {
            Some(s) => match s.code() {
                Some(c) => format!("the shim exited with status {c}"),
                None => format!("the shim was ended by a signal ({s})"),
            },
            None => "the shim is still running".into(),
        }
    }
}

/// The processes of one `stdio:` spec: idle ones wait here between cases.
pub(crate) struct Pool {
    argv: Vec<String>,
    opts: Options,
    /// Idle processes, each with its answer to the one `initialize` it was sent.
    idle: Mutex<Vec<(Client<Proc>, Value)>>,
}

impl Pool {
    pub fn new(argv: Vec<String>, opts: Options) -> Arc<Pool> {
        Arc::new(Pool {
            argv,
            opts,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// An initialised process for one case.
    pub fn checkout(self: &Arc<Self>) -> Result<Pooled, BadInput> {
        loop {
            let Some((mut c, handshake)) =
                self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop()
            else {
                break;
            };
            if c.link.alive() {
                return Ok(Pooled {
                    client: Some(c),
                    handshake,
                    pool: self.clone(),
                });
            }
        }
        let proc = Proc::spawn(&self.argv)?;
        let mut client = Client::new(proc, self.opts.clone());
        let mut unanswered = false;
        let handshake = super::check_call("initialize", crate::shim::greeting(), |p| {
            let r = client.call("initialize", p);
            unanswered = r.as_ref().is_err_and(CallError::not_implemented);
            r
        })
        .map_err(|e| {
            // A shim of another suite answers its own first method, not `initialize`.
            let hint = unanswered
                .then(|| super::hints::other_suite("initialize", &mut |m, p| client.call(m, p)))
                .flatten()
                .map_or(String::new(), |h| format!("; {h}"));
            format!(
                "stdio: `{}` failed the handshake: {e}{hint}",
                shell_words::join(&self.argv)
            )
        })?;
        Ok(Pooled {
            client: Some(client),
            handshake,
            pool: self.clone(),
        })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Shut the idle processes down politely (each answers `shutdown` and exits), then reap.
        let mut idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for (c, _) in &mut idle {
            // Its tree as it stands while it lives: its exit re-parents its children.
            c.link.tree.look();
            c.opts.timeout = Duration::from_secs(1);
            let _ = c.call("shutdown", Value::Object(Default::default()));
            c.link.stdin = None;
        }
        for (c, _) in &mut idle {
            c.link.exit_status(Duration::from_secs(1));
        }
    }
}

/// A process checked out for one case; it goes back to the pool unless it broke.
pub struct Pooled {
    client: Option<Client<Proc>>,
    /// The process's answer to its one `initialize`.
    handshake: Value,
    pool: Arc<Pool>,
}

impl Adapter for Pooled {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        // A process is sent `initialize` once, when it starts (docs/shim-protocol.md); asking
        // again gets the answer it gave then.
        if method == "initialize" {
            crate::trace::note(
                method,
                &format!(
                    "not sent again: the process answered it when it started: {}",
                    self.handshake
                ),
            );
            return Ok(self.handshake.clone());
        }
        self.client
            .as_mut()
            .expect("present until drop")
            .call(method, params)
    }

    fn whose(&self) -> sched::Whose {
        self.client
            .as_ref()
            .map(|c| c.link.whose())
            .unwrap_or_default()
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            if c.broken.is_none() {
                self.pool
                    .idle
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((c, std::mem::take(&mut self.handshake)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_still_in_the_pipe_is_seen_from_its_write_end_on_linux_and_macos() {
        let (mut r, mut w) = std::io::pipe().unwrap();
        w.write_all(b"{\"id\":1}\n").unwrap();
        let seen = cfg!(any(target_os = "linux", target_os = "macos"));
        assert_eq!(unread_in(&w), seen.then_some(true));
        let mut buf = [0u8; 64];
        let _ = r.read(&mut buf).unwrap();
        assert_eq!(unread_in(&w), seen.then_some(false));
    }

    #[test]
    fn where_a_read_request_cannot_be_seen_the_first_call_keeps_its_start_up_allowance() {
        let (s, deadline) = (Duration::from_secs(1), Duration::from_secs(5));
        // Unseen (neither Linux nor macOS): starting, until the allowance is spent; never taken
        // for read at once, which would judge the start-up.
        let mut read_at = None;
        assert_eq!(
            first_deadline(&mut read_at, None, 3 * s, deadline),
            3 * s + deadline
        );
        let late = START_ALLOWANCE + 9 * s;
        assert_eq!(
            first_deadline(&mut read_at, None, late, deadline),
            START_ALLOWANCE + deadline
        );
        assert_eq!(read_at, None);
        // Seen read: the call has its deadline from then on.
        assert_eq!(
            first_deadline(&mut read_at, Some(true), 3 * s, deadline),
            3 * s + deadline
        );
        assert_eq!(
            first_deadline(&mut read_at, Some(false), 4 * s, deadline),
            4 * s + deadline
        );
        assert_eq!(
            first_deadline(&mut read_at, Some(true), 7 * s, deadline),
            4 * s + deadline
        );
    }
}
