//! Containment of a launched harness (docs/security.md, "No process outlives its scenario"):
//! every process it starts is found and killed at the stop, whatever its process group or
//! session.
//!
//! On Linux hcpspec makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`, once per
//! process), so an orphan of a harness's (a double-forked daemon, a child whose parent was
//! killed) is re-parented to hcpspec, not to init. A harness's processes are then:
//!
//! - the descendants of its pid, by the parent links of `/proc/*/stat`, snapshot every
//!   [`EVERY`] while the scenario runs and again at the stop;
//! - every process seen in such a snapshot earlier (same pid and start time), wherever it is
//!   now;
//! - every orphan re-parented to hcpspec whose environment carries this harness's token (each
//!   scenario has its own: `NYLORUN_HARNESS_TOKEN`), and the descendants of those.
//!
//! Only those are signalled and only those are waited for (`waitpid` on their own pids), so
//! another scenario's harness, or another child of hcpspec's, is never touched. Elsewhere than
//! Linux there is no `/proc`: the process group is all that is killed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the tree of a running harness is snapshot.
pub const EVERY: Duration = Duration::from_millis(50);
/// How long the stop keeps killing and reaping after SIGKILL before it gives up (a process in
/// uninterruptible sleep); the stop never blocks longer.
pub const KILL_WAIT: Duration = Duration::from_secs(2);

/// The pids of every harness hcpspec runs now: never another harness's process.
static ROOTS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn roots() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    ROOTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Make hcpspec the child subreaper of its descendants (Linux; once per process).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        });
    }
}

/// One process of `/proc`: its parent, its start time (clock ticks since boot: with the pid,
/// what names a process, since pids are reused) and whether it is a zombie.
#[derive(Debug, Clone, Copy)]
struct Proc {
    ppid: i32,
    start: u64,
    zombie: bool,
}

fn stat(pid: i32) -> Option<Proc> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm may hold spaces and parentheses: the fields start after the last `)`.
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        zombie: f.first() == Some(&"Z"),
        ppid: f.get(1)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn table() -> BTreeMap<i32, Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .collect()
}

/// Whether a process's environment holds `needle` (`NAME=VALUE`), reading at most 1 MiB.
fn environ_has(pid: i32, needle: &[u8]) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let mut buf = Vec::new();
    if f.take(1 << 20).read_to_end(&mut buf).is_err() {
        return false;
    }
    buf.split(|b| *b == 0).any(|v| v == needle)
}

/// The processes attributed to one harness: pid → start time. The harness itself (hcpspec's
/// child, reaped through its `Child`) is not among them.
#[derive(Clone)]
pub struct Tree {
    root: i32,
    mark: Arc<Vec<u8>>,
    seen: Arc<Mutex<BTreeMap<i32, u64>>>,
    stop: Arc<AtomicBool>,
    /// Once the harness is reaped its pid may name another process: no longer a root.
    reaped: Arc<AtomicBool>,
}

impl Tree {
    /// Watch the harness `root`, whose environment holds `mark` (`NYLORUN_HARNESS_TOKEN=…`).
    pub fn watch(root: u32, mark: String) -> Tree {
        let t = Tree {
            root: root as i32,
            mark: Arc::new(mark.into_bytes()),
            seen: Arc::new(Mutex::new(BTreeMap::new())),
            stop: Arc::new(AtomicBool::new(false)),
            reaped: Arc::new(AtomicBool::new(false)),
        };
        roots().insert(t.root);
        if cfg!(target_os = "linux") {
            let w = t.clone();
            std::thread::spawn(move || {
                while !w.stop.load(Ordering::Relaxed) {
                    w.snapshot();
                    std::thread::sleep(EVERY);
                }
            });
        }
        t
    }

    /// Whether no process of the harness's is left running (zombies aside).
    pub fn empty(&self) -> bool {
        let procs = self.snapshot();
        self.seen()
            .keys()
            .all(|pid| procs.get(pid).is_none_or(|p| p.zombie))
    }

    /// The processes of the harness's seen so far (the harness itself aside), as last snapshot.
    pub fn pids(&self) -> Vec<i32> {
        self.seen().keys().copied().collect()
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, BTreeMap<i32, u64>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add every process of the harness's now: descendants of the harness, of the processes
    /// seen before, and of hcpspec's orphans that carry the harness's token.
    fn snapshot(&self) -> BTreeMap<i32, Proc> {
        let procs = table();
        let me = std::process::id() as i32;
        let others: BTreeSet<i32> = roots()
            .iter()
            .copied()
            .filter(|r| *r != self.root)
            .collect();
        let mut seen = self.seen();
        // What was seen and is gone (or whose pid now names another process) is forgotten.
        seen.retain(|pid, start| procs.get(pid).is_some_and(|p| p.start == *start));
        let mut from: Vec<i32> = Vec::new();
        if !self.reaped.load(Ordering::Relaxed) {
            from.push(self.root);
        }
        from.extend(seen.keys().copied());
        from.extend(
            procs
                .iter()
                .filter(|(pid, p)| {
                    p.ppid == me
                        && **pid != self.root
                        && !seen.contains_key(pid)
                        && environ_has(**pid, &self.mark)
                })
                .map(|(pid, _)| *pid),
        );
        let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
        for (pid, p) in &procs {
            children.entry(p.ppid).or_default().push(*pid);
        }
        let mut found = BTreeSet::new();
        while let Some(pid) = from.pop() {
            if others.contains(&pid) {
                continue;
            }
            if pid != self.root && pid != me && !found.insert(pid) {
                continue;
            }
            if let Some(c) = children.get(&pid) {
                from.extend(c.iter().copied().filter(|c| !found.contains(c)));
            }
        }
        for pid in found {
            if let Some(p) = procs.get(&pid) {
                seen.insert(pid, p.start);
            }
        }
        procs
    }

    /// Stop snapshotting; SIGKILL every process of the harness's and reap those re-parented to
    /// hcpspec, until none is left or [`KILL_WAIT`]. `root_gone` says whether the harness
    /// itself has been reaped (then its pid may name another process: it is not signalled).
    /// Returns how many processes were still there at the end.
    pub fn kill_all(&self, mut root_gone: impl FnMut() -> bool) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let me = std::process::id() as i32;
        let until = Instant::now() + KILL_WAIT;
        loop {
            let gone = root_gone();
            if gone {
                if !self.reaped.swap(true, Ordering::Relaxed) {
                    roots().remove(&self.root);
                }
            } else {
                unsafe { libc::kill(self.root, libc::SIGKILL) };
            }
            let procs = self.snapshot();
            let left: Vec<(i32, Proc)> = self
                .seen()
                .keys()
                .filter_map(|pid| procs.get(pid).map(|p| (*pid, *p)))
                .collect();
            for (pid, p) in &left {
                if p.zombie {
                    // Only a pid attributed to this harness, never another child's status.
                    if p.ppid == me {
                        unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) };
                    }
                } else {
                    unsafe { libc::kill(*pid, libc::SIGKILL) };
                }
            }
            if (gone && left.is_empty()) || Instant::now() >= until {
                return left.len();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGTERM to every process of the harness's seen so far (the harness itself is sent its
    /// own by the caller).
    pub fn terminate(&self) {
        self.snapshot();
        for pid in self.seen().keys() {
            unsafe { libc::kill(*pid, libc::SIGTERM) };
        }
    }
}
