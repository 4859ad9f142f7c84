//! The one worker pool: `jobs` threads take the next item until none is left or `halt` says
//! stop. Every parallel loop of a run goes through it (a runtime's cases, a suite's whole-case
//! judging, the self-check's questions, the suites of one run side by side).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A worker's panic, as its message.
pub type Panic = String;

/// `work` on each of `items`, at most `jobs` at once; the results in item order. An item a halt
/// left unstarted is `None`; a panic in `work` is that item's `Err`, never the end of the pool.
pub fn each<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    halt: &(dyn Fn() -> bool + Sync),
    work: &(dyn Fn(usize, &T) -> R + Sync),
) -> Vec<Option<Result<R, Panic>>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<R, Panic>>>> =
        Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(items.len().max(1)) {
            s.spawn(|| loop {
                if halt() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i, item)))
                    .map_err(|p| message(&*p));
                results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// What a panic said, or "(no message)".
pub fn message(panic: &(dyn std::any::Any + Send)) -> Panic {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

/// Never halt.
pub fn never() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_and_a_panic_is_its_items_error() {
        let items: Vec<usize> = (0..20).collect();
        let out = each(&items, 4, &never, &|_, &n| {
            assert!(n != 7, "seven");
            n * 2
        });
        assert_eq!(out.len(), 20);
        assert_eq!(out[3], Some(Ok(6)));
        assert_eq!(out[7], Some(Err("seven".into())));
    }

    #[test]
    fn a_halt_leaves_the_rest_unstarted() {
        let done = AtomicUsize::new(0);
        let out = each(
            &[(); 10],
            1,
            &|| done.load(Ordering::Relaxed) >= 3,
            &|_, _| {
                done.fetch_add(1, Ordering::Relaxed);
            },
        );
        assert_eq!(out.iter().filter(|r| r.is_some()).count(), 3);
    }
}
