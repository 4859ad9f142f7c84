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

/// The waits of the calling thread and of a process's threads at one moment, to tell later how
/// long the machine made either wait since.
#[derive(Debug, Clone, Default)]
pub struct Waits {
    own: Option<u64>,
    threads: HashMap<i32, u64>,
}

impl Waits {
    /// Now, for the calling thread and `pid`'s threads.
    pub fn now(pid: i32) -> Waits {
        Waits {
            own: own_wait(),
            threads: thread_waits(pid).into_iter().collect(),
        }
    }

    /// The most any one of them waited for a CPU since `self` (a thread started since counts
    /// from its start). Read on the thread that made `self`.
    pub fn since(&self, pid: i32) -> Duration {
        let mut ns = match (self.own, own_wait()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        for (tid, wait) in thread_waits(pid) {
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
    fn a_schedstat_line_gives_its_wait() {
        assert_eq!(wait_in("659500 7624852 3\n"), Some(7624852));
        assert_eq!(wait_in("659500"), None);
    }
}
