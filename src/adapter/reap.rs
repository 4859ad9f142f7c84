//! Containment of every process hcpspec starts and does not own the code of (docs/security.md,
//! "No process outlives its scenario"): a launched harness (harness-api) and a `stdio:` shim (the
//! contract, core-api and host suites). Every process it starts is found and killed at its stop,
//! whatever its process group or session.
//!
//! On Linux hcpspec makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`, once per
//! process), so an orphan of a watched process's (a double-forked daemon, a child whose parent
//! was killed) is re-parented to hcpspec, not to init. A watched process's tree is then:
//!
//! - the descendants of its pid, by the parent links of `/proc/*/stat`, snapshot every
//!   [`EVERY`] while it runs and again at the stop;
//! - every process seen in such a snapshot earlier (same pid and start time), wherever it is
//!   now;
//! - every orphan re-parented to hcpspec whose environment carries this process's token (each
//!   has its own: `NYLORUN_HARNESS_TOKEN` for a harness, `HCPSPEC_SHIM_TOKEN` for a shim), and
//!   the descendants of those.
//!
//! Only those are signalled and only those are waited for (`waitpid` on their own pids), so
//! another tree, or another child of hcpspec's, is never touched. [`end_all`] stops every tree
//! still running when hcpspec exits.
//!
//! On macOS there is no subreaper and no `/proc`: the processes are read with libproc
//! (`proc_listallpids`, `proc_pidinfo`) and an environment with `sysctl(KERN_PROCARGS2)`, and an
//! orphan is re-parented to launchd (pid 1): one started since the watched process that carries
//! its token is found there, but it is launchd's to reap (docs/platforms.md). Elsewhere the
//! process group is all that is killed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the tree of a running process is snapshot.
pub const EVERY: Duration = Duration::from_millis(50);
/// How long the stop keeps killing and reaping after SIGKILL before it gives up (a process in
/// uninterruptible sleep); the stop never blocks longer.
pub const KILL_WAIT: Duration = Duration::from_secs(2);

/// The pids of every watched process hcpspec runs now: never another tree's process.
static ROOTS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn roots() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    ROOTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The process groups of the roots not reaped yet, for [`kill_groups`]: atomics, since a signal
/// handler reads them. [`GROUP_SLOTS`] at most; a root past them is still contained by its
/// tree, only not by a second Ctrl-C.
static GROUPS: [AtomicI32; GROUP_SLOTS] = [const { AtomicI32::new(0) }; GROUP_SLOTS];
pub const GROUP_SLOTS: usize = 256;

fn hold_group(g: i32) {
    let _ = GROUPS.iter().find(|s| {
        s.compare_exchange(0, g, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
}

fn drop_group(g: i32) {
    let _ = GROUPS.iter().find(|s| {
        s.compare_exchange(g, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
}

/// SIGKILL to the process group of every running shim and harness: for a second Ctrl-C, which
/// exits at once. Async-signal-safe (atomic loads and kill(2)); what left its group is not
/// reached (the stop that finds it has no time to run).
pub fn kill_groups() {
    let own = unsafe { libc::getpgid(0) };
    for s in &GROUPS {
        let g = s.load(Ordering::SeqCst);
        if g > 0 && g != own {
            unsafe { libc::kill(-g, libc::SIGKILL) };
        }
    }
}

/// Every tree not stopped yet, for [`end_all`].
static LIVE: Mutex<Vec<Tree>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<Tree>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A token no other process of this run holds: `PREFIX` and 128 random bits.
pub fn token(prefix: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let random = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{prefix}{:016x}{:016x}-{n}", random(), random())
}

/// Stop every tree still running: SIGKILL to each watched process and all of its tree, and
/// reap them. For hcpspec's exit, whatever still holds a process then (a case past the
/// watchdog, a pool not dropped).
pub fn end_all() {
    let trees: Vec<Tree> = live().clone();
    for t in trees {
        let root = t.root;
        t.kill_all(|| {
            if t.reaped.load(Ordering::Relaxed) {
                return true;
            }
            // Its own process: reaped here (pid), still running (0), or already reaped by its
            // owner (-1, ECHILD: then its pid may name another process, never signalled).
            let r = unsafe { libc::waitpid(root, std::ptr::null_mut(), libc::WNOHANG) };
            r != 0
        });
    }
    // hcpspec exits next: nobody waits for a child's status any more, so every zombie whose
    // parent it is gets reaped, among them a process of a tree that died before the tree was
    // ever seen and was re-parented here (nothing attributes such a zombie to its tree).
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

/// Start the one thread that snapshots every running tree every [`EVERY`] (once per process):
/// one read of `/proc` for all of them, however many shims and harnesses run at once.
fn watcher() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::thread::spawn(|| loop {
            let trees: Vec<Tree> = live()
                .iter()
                .filter(|t| !t.stop.load(Ordering::Relaxed))
                .cloned()
                .collect();
            if !trees.is_empty() {
                let procs = table();
                for t in trees {
                    t.add(&procs);
                }
            }
            std::thread::sleep(EVERY);
        });
    });
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

/// One process of `/proc`: its parent, its process group, its start time (clock ticks since
/// boot: with the pid, what names a process, since pids are reused) and whether it is a zombie.
#[derive(Debug, Clone, Copy)]
struct Proc {
    ppid: i32,
    pgrp: i32,
    start: u64,
    zombie: bool,
}

#[cfg(not(target_os = "macos"))]
fn stat(pid: i32) -> Option<Proc> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm may hold spaces and parentheses: the fields start after the last `)`.
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        zombie: f.first() == Some(&"Z"),
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

#[cfg(not(target_os = "macos"))]
fn table() -> BTreeMap<i32, Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .collect()
}

/// Whether a process's environment holds `needle` (`NAME=VALUE`), reading at most 1 MiB.
#[cfg(not(target_os = "macos"))]
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

/// One process of libproc's (macOS): its start time is in µs since the epoch (a zombie libproc
/// no longer lists counts as gone).
#[cfg(target_os = "macos")]
fn stat(pid: i32) -> Option<Proc> {
    // SAFETY: a plain C struct, all zeros valid.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `info`.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    (n == size).then(|| Proc {
        ppid: info.pbi_ppid as i32,
        pgrp: info.pbi_pgid as i32,
        start: info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec,
        zombie: info.pbi_status == libc::SZOMB,
    })
}

#[cfg(target_os = "macos")]
fn table() -> BTreeMap<i32, Proc> {
    // SAFETY: with no buffer, proc_listallpids only counts.
    let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    if n <= 0 {
        return BTreeMap::new();
    }
    // Room for the processes started since the count.
    let mut pids: Vec<libc::c_int> = vec![0; n as usize + 64];
    let bytes = std::mem::size_of_val(pids.as_slice()) as libc::c_int;
    // SAFETY: the buffer holds `bytes` bytes; the count written is at most what fits.
    let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
    pids.truncate(n.clamp(0, pids.len() as libc::c_int) as usize);
    pids.into_iter()
        .filter(|pid| *pid > 0)
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .collect()
}

/// Whether a process's environment holds `needle`, from `sysctl(KERN_PROCARGS2)` (macOS: the
/// environment it was started with, readable for a process of the same user; at most
/// `kern.argmax`, 1 MiB). None when it cannot be read (now).
#[cfg(target_os = "macos")]
fn procargs_environ_has(pid: i32, needle: &[u8]) -> Option<bool> {
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut size: libc::size_t = 0;
    let null = std::ptr::null_mut();
    // SAFETY: with no buffer, sysctl only says the size.
    if unsafe { libc::sysctl(mib.as_mut_ptr(), 3, null, &mut size, null, 0) } != 0 {
        return None;
    }
    let mut buf = vec![0u8; size.min(1 << 20)];
    let mut len = buf.len();
    // SAFETY: the buffer holds `len` bytes; sysctl writes at most that and says how many.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            3,
            buf.as_mut_ptr().cast(),
            &mut len,
            null,
            0,
        )
    };
    if r != 0 {
        return None;
    }
    buf.truncate(len);
    Some(procargs_has(&buf, needle))
}

/// Whether the environment in a `KERN_PROCARGS2` buffer holds `needle`: the buffer is argc,
/// the executable's path, NUL padding, the argc arguments, then the environment up to an empty
/// string, each NUL-terminated (what follows is not the environment).
#[cfg(any(test, target_os = "macos"))]
fn procargs_has(buf: &[u8], needle: &[u8]) -> bool {
    let Some(argc) = buf
        .get(..4)
        .and_then(|b| Some(i32::from_ne_bytes(b.try_into().ok()?)))
    else {
        return false;
    };
    let mut fields = buf[4..].split(|b| *b == 0);
    let _path = fields.next();
    let mut fields = fields.skip_while(|f| f.is_empty());
    for _ in 0..argc.max(0) {
        if fields.next().is_none() {
            return false;
        }
    }
    fields.take_while(|f| !f.is_empty()).any(|v| v == needle)
}

/// The processes attributed to one watched process (a harness, a shim): pid → start time. The
/// watched process itself (hcpspec's child, reaped through its `Child`) is not among them.
#[derive(Clone)]
pub struct Tree {
    root: i32,
    mark: Arc<Vec<u8>>,
    seen: Arc<Mutex<BTreeMap<i32, u64>>>,
    stop: Arc<AtomicBool>,
    /// Once the root is reaped its pid may name another process: no longer a root.
    reaped: Arc<AtomicBool>,
    /// The root's start time (macOS only, else 0): an orphan of launchd's started before it is
    /// not of its tree.
    born: u64,
    /// launchd's orphans (pid, start time) whose environment was read without the token
    /// (macOS): launchd adopts every orphan of the machine's, and none is read twice.
    #[cfg(target_os = "macos")]
    unmarked: Arc<Mutex<BTreeSet<(i32, u64)>>>,
}

impl Tree {
    /// Watch `root`, whose environment holds `mark` (`NYLORUN_HARNESS_TOKEN=…`,
    /// `HCPSPEC_SHIM_TOKEN=…`); hcpspec must be a subreaper ([`become_subreaper`]) for its
    /// orphans to be found.
    pub fn watch(root: u32, mark: String) -> Tree {
        let t = Tree {
            root: root as i32,
            mark: Arc::new(mark.into_bytes()),
            seen: Arc::new(Mutex::new(BTreeMap::new())),
            stop: Arc::new(AtomicBool::new(false)),
            reaped: Arc::new(AtomicBool::new(false)),
            born: match cfg!(target_os = "macos") {
                true => stat(root as i32).map_or(0, |p| p.start),
                false => 0,
            },
            #[cfg(target_os = "macos")]
            unmarked: Arc::new(Mutex::new(BTreeSet::new())),
        };
        roots().insert(t.root);
        hold_group(t.root);
        live().push(t.clone());
        if cfg!(any(target_os = "linux", target_os = "macos")) {
            watcher();
        }
        t
    }

    /// Whether no process of the tree's is left running (zombies aside).
    pub fn empty(&self) -> bool {
        let procs = self.snapshot();
        self.seen()
            .keys()
            .all(|pid| procs.get(pid).is_none_or(|p| p.zombie))
    }

    /// The processes of the tree's seen so far (its root aside), as last snapshot.
    pub fn pids(&self) -> Vec<i32> {
        self.seen().keys().copied().collect()
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, BTreeMap<i32, u64>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add every process of the tree's now: descendants of its root, of the processes seen
    /// before, and of hcpspec's orphans that carry the root's token.
    fn snapshot(&self) -> BTreeMap<i32, Proc> {
        let procs = table();
        self.add(&procs);
        procs
    }

    fn add(&self, procs: &BTreeMap<i32, Proc>) {
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
                    // An orphan in the root's own group (a zombie has no environment left to
                    // read), or carrying its token. Other roots first: reading an environment
                    // costs more than a lookup.
                    self.adopted(p, me)
                        && **pid != self.root
                        && !others.contains(pid)
                        && !seen.contains_key(pid)
                        && (p.pgrp == self.root || self.carries(**pid, p))
                })
                .map(|(pid, _)| *pid),
        );
        let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
        for (pid, p) in procs {
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
    }

    /// Whether `p` is an orphan that may be of this tree: re-parented to hcpspec, a subreaper
    /// (Linux); elsewhere to launchd (pid 1), and started since the root.
    fn adopted(&self, p: &Proc, me: i32) -> bool {
        match cfg!(target_os = "linux") {
            true => p.ppid == me,
            false => p.ppid == 1 && p.start >= self.born,
        }
    }

    /// Whether the orphan `pid`'s environment holds the root's token.
    fn carries(&self, pid: i32, p: &Proc) -> bool {
        #[cfg(target_os = "macos")]
        {
            let key = (pid, p.start);
            let mut unmarked = self.unmarked.lock().unwrap_or_else(|p| p.into_inner());
            if unmarked.contains(&key) {
                return false;
            }
            // Bounded: past it, what was read is read again.
            if unmarked.len() >= 4096 {
                unmarked.clear();
            }
            // Unreadable now (a process in the middle of its exec): read again next time.
            let has = procargs_environ_has(pid, &self.mark);
            if has == Some(false) {
                unmarked.insert(key);
            }
            has == Some(true)
        }
        #[cfg(not(target_os = "macos"))]
        {
            let _ = p;
            environ_has(pid, &self.mark)
        }
    }

    /// Stop snapshotting; SIGKILL the root, its process group (the root was started as the
    /// leader of its own) and every process of its tree, and reap those re-parented to hcpspec,
    /// until none is left or [`KILL_WAIT`]. `root_gone` says whether the root itself has been
    /// reaped (then its pid may name another process or group: neither is signalled). Returns
    /// how many processes were still there at the end.
    pub fn kill_all(&self, mut root_gone: impl FnMut() -> bool) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let me = std::process::id() as i32;
        let until = Instant::now() + KILL_WAIT;
        let mut pause = Duration::from_millis(1);
        // The tree as it stands before any kill: a process killed now re-parents its children,
        // and one that dies before it is seen leaves a zombie with no token to find it by.
        self.snapshot();
        if !root_gone() && self.root != unsafe { libc::getpgid(0) } {
            unsafe { libc::kill(-self.root, libc::SIGKILL) };
        }
        loop {
            let gone = root_gone();
            if gone {
                if !self.reaped.swap(true, Ordering::Relaxed) {
                    roots().remove(&self.root);
                    drop_group(self.root);
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
                    // Only a pid attributed to this tree, never another child's status.
                    if p.ppid == me {
                        unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) };
                    }
                } else {
                    unsafe { libc::kill(*pid, libc::SIGKILL) };
                }
            }
            if (gone && left.is_empty()) || Instant::now() >= until {
                live().retain(|t| !Arc::ptr_eq(&t.stop, &self.stop));
                return left.len();
            }
            // A killed process is usually gone within a millisecond: look again soon at first.
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// Take a snapshot now: before the root is let exit, so that its children, a dead one
    /// among them, are known by their parent link.
    pub fn look(&self) {
        self.snapshot();
    }

    /// SIGTERM to every process of the tree's seen so far (the root is sent its own by the
    /// caller).
    pub fn terminate(&self) {
        self.snapshot();
        for pid in self.seen().keys() {
            unsafe { libc::kill(*pid, libc::SIGTERM) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `KERN_PROCARGS2` buffer as macOS lays it out: argc, the executable's path, NUL
    /// padding, the arguments, then the environment up to an empty string.
    fn procargs(args: &[&str], env: &[&str]) -> Vec<u8> {
        let mut b = (args.len() as i32).to_ne_bytes().to_vec();
        b.extend_from_slice(b"/usr/bin/python3\0\0\0\0");
        for s in args.iter().chain(env) {
            b.extend_from_slice(s.as_bytes());
            b.push(0);
        }
        b.extend_from_slice(b"\0junk=after-the-end\0");
        b
    }

    #[test]
    fn a_token_is_read_from_the_environment_of_procargs_never_from_the_arguments() {
        let token = b"HCPSPEC_SHIM_TOKEN=t-1";
        let b = procargs(
            &["python3", "shim.py"],
            &["PATH=/bin", "HCPSPEC_SHIM_TOKEN=t-1"],
        );
        assert!(procargs_has(&b, token));
        assert!(!procargs_has(&b, b"PATH=/usr"));
        // An argument that spells the token is not the environment.
        let b = procargs(&["sh", "HCPSPEC_SHIM_TOKEN=t-1"], &["PATH=/bin"]);
        assert!(!procargs_has(&b, token));
        assert!(!procargs_has(&procargs(&["a"], &[]), b"junk=after-the-end"));
        // Cut short, or an argc past what it holds: nothing is read from it.
        assert!(!procargs_has(&b[..2], token));
        let mut lying = procargs(&["a"], &["HCPSPEC_SHIM_TOKEN=t-1"]);
        lying[..4].copy_from_slice(&9i32.to_ne_bytes());
        assert!(!procargs_has(&lying, token));
    }
}
