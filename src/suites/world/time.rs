//! Scenario time: the clock a harness-api scenario's deadlines, triggers, silences and log
//! times are read on. It is wall time less the time the machine made the scenario wait: the
//! time the harness's threads, or the thread of hcpspec that plays the scenario, were ready to
//! run but waited for a CPU (Linux's per-thread `schedstat`, its runqueue wait). A deadline
//! judges the implementation, never the machine's load (docs/harness-api.md § 1).
//!
//! It advances at least at [`LEAST_SHARE`] of wall time, whatever the waits, so that a harness
//! that hangs on a machine that never lets it run still ends. Where there is no `schedstat`
//! (elsewhere than Linux) it is wall time. A World no scenario meters (the core-api suite's
//! reference core) keeps wall time.

use crate::adapter::sched::{self, own_wait, thread_waits};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Scenario time runs at least at 1/`LEAST_SHARE` of wall time: a scenario that the machine
/// never lets run is over within `LEAST_SHARE` times its deadline of wall time.
pub const LEAST_SHARE: u64 = sched::LEAST_SHARE as u64;

/// The scenario time charged for `wall` ns of wall time during which a thread of the scenario
/// waited `waited` ns on a runqueue (the most any one thread waited: concurrent waits of
/// several threads are the same time, not a sum): [`sched::charged`], in ns.
pub fn charged(wall: u64, waited: u64) -> u64 {
    use std::time::Duration;
    sched::charged(Duration::from_nanos(wall), Duration::from_nanos(waited)).as_nanos() as u64
}

/// A scenario's time, shared by its World (log times, silences) and its player (deadline,
/// triggers), all on the scenario's thread.
#[derive(Clone, Debug)]
pub struct SceneTime(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    t0: Instant,
    /// Set once a [`Meter`] drives it; until then it is wall time.
    metered: AtomicBool,
    ns: AtomicU64,
}

impl SceneTime {
    /// Starting now, on wall time until a [`Meter`] drives it.
    pub fn new() -> SceneTime {
        SceneTime(Arc::new(Inner {
            t0: Instant::now(),
            metered: AtomicBool::new(false),
            ns: AtomicU64::new(0),
        }))
    }

    /// Scenario time since it started, in ms.
    pub fn now_ms(&self) -> u64 {
        if self.0.metered.load(Ordering::Relaxed) {
            self.0.ns.load(Ordering::Relaxed) / 1_000_000
        } else {
            self.0.t0.elapsed().as_millis() as u64
        }
    }
}

impl SceneTime {
    /// Sleep `ms` of scenario time (a gate's hold: how long a harness has to cancel a call is
    /// not shortened by the machine's load). At least `ms` of wall time, as scenario time never
    /// runs ahead of it.
    pub async fn sleep(&self, ms: u64) {
        let until = self.now_ms() + ms;
        let mut left = ms;
        while left > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(left)).await;
            left = until.saturating_sub(self.now_ms());
        }
    }
}

impl Default for SceneTime {
    fn default() -> Self {
        SceneTime::new()
    }
}

/// What drives a [`SceneTime`]: on each look, the wall time since the last one, less the most
/// any thread of the scenario waited on a runqueue meanwhile. Made and used on the thread that
/// plays the scenario (its own wait is read from `/proc/thread-self`).
#[derive(Debug)]
pub struct Meter {
    time: SceneTime,
    last: Instant,
    /// The scenario's thread's wait, and each (pid, tid) seen's.
    own: Option<Wait>,
    threads: HashMap<(i32, i32), Wait>,
    /// When the harness's threads were last read (every [`THREADS_EVERY`], or when asked).
    threads_read: Instant,
}

/// How often a look reads the harness's threads' waits (its own thread's, one read, it reads
/// at every look): their waits come in at most this late, and a deadline is read afresh.
pub const THREADS_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// A thread's runqueue wait: so far (as `schedstat` says), and not yet taken off scenario
/// time. Linux counts a wait when the thread gets a CPU again, in one piece, which may be
/// longer than the wall time since the last look: the rest is taken off at the next ones.
#[derive(Debug, Clone, Copy)]
struct Wait {
    so_far: u64,
    owed: u64,
}

impl Wait {
    /// First seen: counted from now.
    fn from(so_far: u64) -> Wait {
        Wait { so_far, owed: 0 }
    }

    fn read(self, so_far: u64) -> Wait {
        Wait {
            so_far,
            owed: self.owed + so_far.saturating_sub(self.so_far),
        }
    }
}

/// The scenario time charged for `wall` ns given the threads' waits owed, which it takes off:
/// the most owed by any one thread (the threads waited at the same time, or the scenario
/// waited on the one that waited longest), at most what leaves [`LEAST_SHARE`] of it.
fn charge<'a>(wall: u64, waits: impl Iterator<Item = &'a mut Wait>) -> u64 {
    let waits: Vec<&mut Wait> = waits.collect();
    let most = waits.iter().map(|w| w.owed).max().unwrap_or(0);
    let charge = charged(wall, most);
    for w in waits {
        w.owed = w.owed.saturating_sub(wall - charge);
    }
    charge
}

impl Meter {
    /// Drive `time` from now on (its wall time so far is scenario time).
    pub fn start(time: &SceneTime) -> Meter {
        let ns = time.0.t0.elapsed().as_nanos() as u64;
        time.0.ns.store(ns, Ordering::Relaxed);
        time.0.metered.store(true, Ordering::Relaxed);
        Meter {
            time: time.clone(),
            last: Instant::now(),
            own: own_wait().map(Wait::from),
            threads: HashMap::new(),
            threads_read: Instant::now(),
        }
    }

    /// Advance the scenario's time to now; `pids` are the harness's processes (none for an
    /// embedded harness, which runs on the scenario's thread), read every [`THREADS_EVERY`].
    /// Returns it, in ms.
    pub fn look(&mut self, pids: &[i32]) -> u64 {
        let read = self.threads_read.elapsed() >= THREADS_EVERY;
        self.advance(pids, read)
    }

    /// [`Meter::look`], the harness's threads read now (before a deadline is declared).
    pub fn look_closely(&mut self, pids: &[i32]) -> u64 {
        self.advance(pids, true)
    }

    fn advance(&mut self, pids: &[i32], read_threads: bool) -> u64 {
        let now = Instant::now();
        let wall = now.duration_since(self.last).as_nanos() as u64;
        self.last = now;
        if let (Some(w), Some(so_far)) = (self.own, own_wait()) {
            self.own = Some(w.read(so_far));
        }
        if read_threads {
            self.threads_read = now;
            // Threads gone are forgotten, with what they owed.
            let mut seen = HashMap::with_capacity(self.threads.len());
            for &pid in pids {
                for (tid, so_far) in thread_waits(pid) {
                    let w = self.threads.get(&(pid, tid)).copied();
                    let w = w.map_or(Wait::from(so_far), |w| w.read(so_far));
                    seen.insert((pid, tid), w);
                }
            }
            self.threads = seen;
        }
        let charge = charge(wall, self.own.iter_mut().chain(self.threads.values_mut()));
        let ns = self.time.0.ns.load(Ordering::Relaxed) + charge;
        self.time.0.ns.store(ns, Ordering::Relaxed);
        ns / 1_000_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn waits(owed: &[u64]) -> Vec<Wait> {
        owed.iter().map(|&owed| Wait { so_far: 0, owed }).collect()
    }

    #[test]
    fn threads_that_waited_at_the_same_time_are_not_counted_twice() {
        let mut w = waits(&[30 * MS, 20 * MS]);
        assert_eq!(charge(100 * MS, w.iter_mut()), 70 * MS);
        assert!(w.iter().all(|w| w.owed == 0));
    }

    #[test]
    fn a_wait_longer_than_a_look_is_taken_off_at_the_next_ones() {
        // Counted in one piece when the thread got a CPU again: 300 ms, seen within 10 ms.
        let mut w = waits(&[300 * MS]);
        let looks: Vec<u64> = (0..40).map(|_| charge(10 * MS, w.iter_mut())).collect();
        // 10 ms looks at an eighth each until 300 ms is taken off (8.75 ms a look) ...
        assert!(looks[..34].iter().all(|&c| c == 10 * MS / 8));
        // ... then wall time again.
        assert_eq!(looks[39], 10 * MS);
        assert_eq!(w[0].owed, 0);
    }

    #[test]
    fn an_unmetered_time_is_wall_time_and_a_meter_only_advances_it() {
        let t = SceneTime::new();
        let a = t.now_ms();
        let mut m = Meter::start(&t);
        let b = m.look(&[]);
        let c = m.look(&[std::process::id() as i32]);
        assert!(a <= b && b <= c && c == t.now_ms());
    }
}
