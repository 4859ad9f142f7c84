//! The process's budget of the bytes harnesses make hcpspec hold (docs/security.md): the
//! messages read off their sockets and kept, core's frames queued to them, gate bodies. Every
//! scenario's caps hold per scenario; this one holds for all the scenarios `--jobs` runs at once.
//!
//! Past the budget a scenario waits before it reads more (backpressure on the harness's socket),
//! and its wait is not charged: its clock, its silence drop and a gate body's deadline stand
//! still meanwhile, so a wait delays a verdict, never changes it. The oldest scenario running
//! never waits, so the waits always end: it ends on its own clock, and the next oldest goes on.
//! Peak: the budget, and what the oldest scenario holds within its own caps.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the scenarios of one process hold at once, past which all but the oldest wait: with
/// what the oldest holds within its own caps (256 MiB of messages and more), under 1 GiB.
pub const PROCESS_BYTES: u64 = 256 << 20;

/// How often a waiting reader looks at the budget again.
const RECHECK: Duration = Duration::from_millis(5);

struct Process {
    held: u64,
    /// The scenarios holding a share, by the order they began (the first is the oldest).
    open: BTreeSet<u64>,
    /// The scenarios waiting now, and how many of their readers: room goes to the oldest first.
    waiting: BTreeMap<u64, usize>,
    next: u64,
}

static PROCESS: Mutex<Process> = Mutex::new(Process {
    held: 0,
    open: BTreeSet::new(),
    waiting: BTreeMap::new(),
    next: 0,
});

impl Process {
    /// Whether the scenario `ticket` may hold more now (see [`Hold::room`]).
    fn room(&self, ticket: u64) -> bool {
        let older_waits = self.waiting.keys().next().is_some_and(|t| *t < ticket);
        (self.held < PROCESS_BYTES && !older_waits) || self.open.first() == Some(&ticket)
    }
}

fn process() -> std::sync::MutexGuard<'static, Process> {
    PROCESS.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the process holds now, of every scenario's share.
pub fn held() -> u64 {
    process().held
}

/// One scenario's share of the budget: what it holds (given back when it is dropped, after
/// its log is judged), and the time it waited.
pub struct Hold {
    /// None: a share that never waits and is not counted (core-api's reference core, whose
    /// client is hcpspec itself).
    ticket: Option<u64>,
    held: AtomicU64,
    wait: Mutex<Wait>,
}

#[derive(Default)]
struct Wait {
    /// Readers waiting now, since when, and the time waited before.
    waiters: usize,
    since: Option<Instant>,
    total: Duration,
    ended: Option<Instant>,
}

impl Hold {
    /// A share of the process's budget, the newest.
    pub fn new() -> Arc<Hold> {
        returned_when_freed();
        let mut p = process();
        let ticket = p.next;
        p.next += 1;
        p.open.insert(ticket);
        Arc::new(Hold {
            ticket: Some(ticket),
            held: AtomicU64::new(0),
            wait: Mutex::default(),
        })
    }

    /// A share that is not counted and never waits.
    pub fn unmetered() -> Arc<Hold> {
        Arc::new(Hold {
            ticket: None,
            held: AtomicU64::new(0),
            wait: Mutex::default(),
        })
    }

    /// Bytes held now (already in memory: never refused).
    pub fn take(&self, n: u64) {
        if self.ticket.is_some() && n > 0 {
            self.held.fetch_add(n, Ordering::Relaxed);
            process().held += n;
        }
    }

    /// Bytes no longer held.
    pub fn give(&self, n: u64) {
        if self.ticket.is_none() || n == 0 {
            return;
        }
        let mut p = process();
        let n = self
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                Some(h.saturating_sub(n))
            })
            .map_or(0, |h| h.min(n));
        p.held -= n.min(p.held);
    }

    /// May this scenario buffer more now: this is the oldest scenario running, or the process
    /// is within its budget and no older scenario waits (the oldest waiting goes on first, so
    /// that the scenarios waiting stand still rather than share the machine).
    pub fn room(&self) -> bool {
        match self.ticket {
            Some(ticket) => process().room(ticket),
            None => true,
        }
    }

    /// Take `n` bytes if there is [room](Hold::room), both at once (scenarios side by side see
    /// each other's): true if taken.
    fn take_if_room(&self, n: u64) -> bool {
        let Some(ticket) = self.ticket else {
            return true;
        };
        let mut p = process();
        if !p.room(ticket) {
            return false;
        }
        p.held += n;
        self.held.fetch_add(n, Ordering::Relaxed);
        true
    }

    /// Wait until there is room, then take `n` bytes: what handling a message already read
    /// will make hcpspec hold (core's answer, logged and queued, as big as what it echoes),
    /// taken before it is handled. Past the budget a younger scenario waits here as it waits
    /// before a read: the budget bounded only what was read, and sixteen scenarios each making
    /// the answer of one 8 MiB request past it held 1.41 GB. The wait is not charged.
    pub async fn reserve(self: &Arc<Hold>, n: u64) {
        if self.take_if_room(n) {
            return;
        }
        let _waiting = self.waiting();
        while !self.take_if_room(n) {
            tokio::time::sleep(RECHECK).await;
        }
    }

    /// Wait until [`Hold::room`]; the time waited is not charged to the scenario.
    pub async fn until_room(self: &Arc<Hold>) {
        if self.room() {
            return;
        }
        let _waiting = self.waiting();
        while !self.room() {
            tokio::time::sleep(RECHECK).await;
        }
    }

    /// A wait begun, ended when the guard is dropped.
    pub fn waiting(self: &Arc<Hold>) -> Waiting {
        if let Some(t) = self.ticket {
            *process().waiting.entry(t).or_default() += 1;
        }
        let mut w = self.lock_wait();
        if w.waiters == 0 {
            w.since = Some(Instant::now());
        }
        w.waiters += 1;
        Waiting {
            hold: self.clone(),
            _held_back: crate::run::held_back::begin(),
        }
    }

    fn lock_wait(&self) -> std::sync::MutexGuard<'_, Wait> {
        self.wait.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The time this scenario waited for the budget, so far (a wait of several readers at
    /// once counted once).
    pub fn waited(&self) -> Duration {
        let w = self.lock_wait();
        w.total + w.since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// How long since this scenario last waited (zero while it waits; forever if it never did):
    /// a harness is not silent while hcpspec does not read it.
    pub fn since_waiting(&self) -> Duration {
        let w = self.lock_wait();
        match (w.waiters, w.ended) {
            (0, None) => Duration::MAX,
            (0, Some(e)) => e.elapsed(),
            _ => Duration::ZERO,
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket {
            let mut p = process();
            let n = *self.held.get_mut();
            p.held -= n.min(p.held);
            p.open.remove(&ticket);
        }
    }
}

/// A reader waiting for the budget; its wait ends when this is dropped (and with it, the time
/// the run's guard does not count).
pub struct Waiting {
    hold: Arc<Hold>,
    _held_back: crate::run::held_back::Wait,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(t) = self.hold.ticket {
            let mut p = process();
            if let Some(n) = p.waiting.get_mut(&t) {
                *n -= 1;
                if *n == 0 {
                    p.waiting.remove(&t);
                }
            }
        }
        let mut w = self.hold.lock_wait();
        w.waiters -= 1;
        if w.waiters == 0 {
            if let Some(s) = w.since.take() {
                w.total += s.elapsed();
            }
            w.ended = Some(Instant::now());
        }
    }
}

/// A harness's socket, read within the budget: each read waits for [`Hold::room`] and what it
/// read is held (and counted in `read`, which the connection gives back once the message it
/// belongs to is kept or dropped).
pub struct Metered<S> {
    inner: S,
    hold: Arc<Hold>,
    pub read: Arc<AtomicU64>,
    sleep: Option<(Waiting, std::pin::Pin<Box<tokio::time::Sleep>>)>,
}

impl<S> Metered<S> {
    pub fn new(inner: S, hold: Arc<Hold>) -> Metered<S> {
        Metered {
            inner,
            hold,
            read: Arc::default(),
            sleep: None,
        }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Metered<S> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::future::Future;
        use std::task::Poll;
        let this = self.get_mut();
        while !this.hold.room() {
            let (_, sleep) = this.sleep.get_or_insert_with(|| {
                (this.hold.waiting(), Box::pin(tokio::time::sleep(RECHECK)))
            });
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            sleep.as_mut().reset(tokio::time::Instant::now() + RECHECK);
        }
        this.sleep = None;
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        this.hold.take(n);
        this.read.fetch_add(n, Ordering::Relaxed);
        polled
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Metered<S> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Big buffers mapped of their own and returned to the system when freed. glibc's threshold
/// otherwise rises to the largest block freed (up to 32 MiB), and 16 MiB messages then come
/// from each thread's arena and stay resident once freed: the budget counts what is held, and
/// this makes the process's resident memory follow it.
fn returned_when_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only sets an allocator parameter.
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the budget a younger scenario has no room until the bytes are given back; its wait
    /// is counted (once for readers waiting together) and ends with the guard.
    #[test]
    fn a_scenario_waits_past_the_budget_and_its_wait_is_counted() {
        let (older, younger) = (Hold::new(), Hold::new());
        older.take(PROCESS_BYTES);
        assert!(!younger.room(), "room past the budget");
        let (one, two) = (younger.waiting(), younger.waiting());
        assert_eq!(younger.since_waiting(), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(20));
        drop((one, two));
        let waited = younger.waited();
        assert!(waited >= Duration::from_millis(20), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "counted twice: {waited:?}");
        // A message's answer is reserved as a read is.
        assert!(!younger.take_if_room(8 << 20), "taken past the budget");
        drop(older);
        assert!(younger.room(), "no room once the bytes are given back");
        assert!(younger.take_if_room(8 << 20), "not taken within the budget");
        younger.give(8 << 20);
        let unmetered = Hold::unmetered();
        unmetered.take(1 << 40);
        assert!(younger.room(), "an unmetered share is not counted");
    }
}
