//! The time hcpspec itself held its cases back: while a scenario waits for the process's memory
//! budget (docs/security.md, "Memory"), the scenarios waiting stand still by design. The run's
//! own guard on a case ([`super::runner::Runner::deadline`]) does not count that time, as the
//! scenario's clock does not: a wait delays a verdict, never changes it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Held {
    /// Waits going on now, since when the first began, and the time held back before.
    waits: usize,
    since: Option<Instant>,
    total: Duration,
}

static HELD: Mutex<Held> = Mutex::new(Held {
    waits: 0,
    since: None,
    total: Duration::ZERO,
});

fn held() -> std::sync::MutexGuard<'static, Held> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// A wait begun; it ends when the guard is dropped. Waits at once count once.
pub fn begin() -> Wait {
    let mut h = held();
    if h.waits == 0 {
        h.since = Some(Instant::now());
    }
    h.waits += 1;
    Wait(())
}

/// The time held back so far in this process.
pub fn total() -> Duration {
    let h = held();
    h.total + h.since.map_or(Duration::ZERO, |s| s.elapsed())
}

/// A wait of hcpspec's going on.
pub struct Wait(());

impl Drop for Wait {
    fn drop(&mut self) {
        let mut h = held();
        h.waits -= 1;
        if h.waits == 0 {
            if let Some(s) = h.since.take() {
                h.total += s.elapsed();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_counted_once_however_many_wait() {
        let began = Instant::now();
        let before = total();
        let (a, b) = (begin(), begin());
        std::thread::sleep(Duration::from_millis(20));
        drop(a);
        drop(b);
        let waited = total() - before;
        // At least the 20 ms slept, and never more than the wall time around it: two waits at
        // once count once (counted twice they would make about twice it), whatever the load
        // and whatever other waits run beside them.
        assert!(waited >= Duration::from_millis(20), "{waited:?}");
        assert!(
            waited <= began.elapsed(),
            "{waited:?} > {:?}",
            began.elapsed()
        );
    }
}
