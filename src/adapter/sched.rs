//! What the machine made a process wait for a CPU: Linux's per-thread `schedstat` (ns on a
//! CPU, ns ready to run but waiting on a runqueue, slices). A deadline hcpspec sets an
//! implementation judges the implementation, never the machine's load: the time a shim's
//! threads, or the thread of hcpspec's waiting for it, were ready but not run is not charged
//! (docs/security.md, "Deadlines judge the implementation, not the machine").
//!
//! Charged time still runs at least at 1/[`LEAST_SHARE`] of wall time, so an implementation
//! that hangs on a machine that never lets it run still ends. Where there is no `schedstat`
//! (elsewhere than Linux) it is wall time.

use std::collections::HashMap;
use std::time::Duration;

/// Charged time runs at least at 1/`LEAST_SHARE` of wall time: whatever the load, a deadline
/// is over within `LEAST_SHARE` times its length of wall time.
pub const LEAST_SHARE: u32 = 8;

/// The time charged for `wall` of wall time during which a thread waited `waited` on a
/// runqueue (the most any one thread waited: threads waiting together wait the same time).
pub fn charged(wall: Duration, waited: Duration) -> Duration {
    wall.saturating_sub(waited).max(wall / LEAST_SHARE)
}

/// The runqueue wait in a `schedstat` line, in ns.
pub fn wait_in(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().nth(1)?.parse().ok()
}

/// The calling thread's runqueue wait so far, in ns.
pub fn own_wait() -> Option<u64> {
    wait_in(&std::fs::read_to_string("/proc/thread-self/schedstat").ok()?)
}

/// Each thread of `pid` with its runqueue wait so far, in ns (none where /proc has no
/// `schedstat`).
pub fn thread_waits(pid: i32) -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    dir.filter_map(|e| {
        let tid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let s = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
        Some((tid, wait_in(&s)?))
    })
    .collect()
}

/// The runqueue wait so far of `tid`, a thread of hcpspec's own, in ns.
pub fn own_thread_wait(tid: i32) -> Option<u64> {
    wait_in(&std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?)
}

/// The calling thread's id (its `/proc/self/task` entry), where there is one.
pub fn thread_id() -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        // The raw syscall, not glibc's `gettid()` wrapper: that one is glibc 2.30's, and the
        // Linux wheels promise glibc 2.17 (manylinux2014).
        // SAFETY: gettid takes no arguments and cannot fail.
        Some(unsafe { libc::syscall(libc::SYS_gettid) } as i32)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Whose waits a deadline does not charge, besides the waiting thread's: the threads of an
/// implementation's processes (`pids`, and every process of `trees` as the reaper last saw
/// them: a core its shim started after the deadline began is among them once seen) and threads
/// of hcpspec's own (`tids`: a runtime's worker that carries the implementation's frames).
#[derive(Clone, Default)]
pub struct Whose {
    pub pids: Vec<i32>,
    pub trees: Vec<super::reap::Tree>,
    pub tids: Vec<i32>,
}

impl Whose {
    /// Each of their threads with its runqueue wait so far, in ns.
    fn waits(&self) -> Vec<(i32, u64)> {
        let own = self
            .tids
            .iter()
            .filter_map(|&tid| Some((tid, own_thread_wait(tid)?)));
        let seen = self.trees.iter().flat_map(|t| t.pids());
        let theirs = self.pids.iter().copied().chain(seen).flat_map(thread_waits);
        own.chain(theirs).collect()
    }

    /// Theirs and `other`'s.
    pub fn and(mut self, other: Whose) -> Whose {
        self.pids.extend(other.pids);
        self.trees.extend(other.trees);
        self.tids.extend(other.tids);
        self
    }
}

/// A deadline in charged time: `length` from its start, less the most that the waiting thread
/// or any thread of [`Whose`] waited for a CPU meanwhile (a thread first seen later counts from
/// its start), at least 1/[`LEAST_SHARE`] of wall time. Made and read on the thread that waits
/// (its own wait is read from `/proc/thread-self`); the others' waits are read only when wall
/// time alone no longer says.
#[derive(Debug)]
pub struct Deadline {
    length: Duration,
    start: std::time::Instant,
    /// When wall time runs out next: then the waits are read.
    until: std::time::Instant,
    waits: Waits,
}

impl Deadline {
    pub fn start(length: Duration, whose: &Whose) -> Deadline {
        Deadline::since(length, std::time::Instant::now(), Waits::of(whose))
    }

    /// A deadline of `length` from `start`, against waits read at or before it (`waits`, for
    /// the same thread and [`Whose`]): what was waited between the two is not charged either,
    /// so a caller that reads the waits only every so often is at most that much more lenient.
    pub fn since(length: Duration, start: std::time::Instant, waits: Waits) -> Deadline {
        Deadline {
            length,
            start,
            until: start
                .checked_add(length)
                .unwrap_or(start + Duration::from_secs(86400 * 365)),
            waits,
        }
    }

    /// The time charged since the start.
    pub fn charged(&self, whose: &Whose) -> Duration {
        charged(self.start.elapsed(), self.waits.since(whose))
    }

    /// What is left of it in charged time, at most `cap`: the waits are read only when wall
    /// time alone leaves less than `cap` (charged time never runs ahead of wall time).
    pub fn remaining(&self, cap: Duration, whose: &Whose) -> Duration {
        if self.length.saturating_sub(self.start.elapsed()) >= cap {
            return cap;
        }
        self.length.saturating_sub(self.charged(whose)).min(cap)
    }

    /// Wall time to wait before looking again; zero once the deadline has passed.
    pub fn left(&mut self, whose: &Whose) -> Duration {
        let now = std::time::Instant::now();
        if now < self.until {
            return self.until - now;
        }
        match self.length.checked_sub(self.charged(whose)) {
            Some(more) if !more.is_zero() => {
                self.until = now + more;
                more
            }
            _ => Duration::ZERO,
        }
    }

    /// `work`'s output, or Err once the deadline has passed (on the thread that made it: a
    /// task of a runtime of one worker, or one `block_on` runs).
    pub async fn within<F: std::future::Future>(
        &mut self,
        whose: &Whose,
        work: F,
    ) -> Result<F::Output, ()> {
        let mut work = std::pin::pin!(work);
        loop {
            let left = self.left(whose);
            if left.is_zero() {
                return Err(());
            }
            if let Ok(v) = tokio::time::timeout(left, &mut work).await {
                return Ok(v);
            }
        }
    }
}

/// The waits of the calling thread and of an implementation's threads at one moment, to tell
/// later how long the machine made either wait since.
#[derive(Debug, Clone, Default)]
pub struct Waits {
    own: Option<u64>,
    threads: HashMap<i32, u64>,
}

impl Waits {
    /// Now, for the calling thread and every thread of `whose`.
    pub fn of(whose: &Whose) -> Waits {
        Waits {
            own: own_wait(),
            threads: whose.waits().into_iter().collect(),
        }
    }

    /// The most that the calling thread or any thread of `whose` waited for a CPU since
    /// `self` (a thread started since counts from its start). Read on the thread that made
    /// `self`.
    pub fn since(&self, whose: &Whose) -> Duration {
        let mut ns = match (self.own, own_wait()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        for (tid, wait) in whose.waits() {
            ns = ns.max(wait.saturating_sub(self.threads.get(&tid).copied().unwrap_or(0)));
        }
        Duration::from_nanos(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_quiet_machine_is_charged_wall_time() {
        assert_eq!(charged(100 * MS, Duration::ZERO), 100 * MS);
    }

    #[test]
    fn a_wait_for_a_cpu_is_not_charged() {
        assert_eq!(charged(100 * MS, 60 * MS), 40 * MS);
    }

    #[test]
    fn charged_time_runs_at_least_at_its_least_share() {
        assert_eq!(charged(800 * MS, 800 * MS), 100 * MS);
        assert_eq!(charged(800 * MS, 5000 * MS), 100 * MS);
        // Per-thread counters are read at slightly different instants: never less than the share.
        assert_eq!(charged(800 * MS, 750 * MS), 100 * MS);
    }

    #[test]
    fn a_deadline_on_a_quiet_thread_runs_in_wall_time() {
        let whose = Whose::default();
        let mut d = Deadline::start(30 * MS, &whose);
        assert!(!d.left(&whose).is_zero());
        std::thread::sleep(40 * MS);
        // Asleep is not waiting for a CPU: charged.
        assert!(d.left(&whose).is_zero());
        assert_eq!(d.remaining(10 * MS, &whose), Duration::ZERO);
    }

    #[test]
    fn a_schedstat_line_gives_its_wait() {
        assert_eq!(wait_in("659500 7624852 3\n"), Some(7624852));
        assert_eq!(wait_in("659500"), None);
    }
}
