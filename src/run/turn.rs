//! A case's turn in the process (issue 49): every case of every run holds a shared turn while
//! it plays, and a case its target says plays alone ([`super::runner::Target::alone`]: core-api's
//! frames of tens of MiB) takes the turn by itself, so that a run's peak memory holds that case
//! and nothing beside it (docs/security.md, "Memory"). The turn is taken before the case's
//! clock starts: the wait delays a verdict, never changes it.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static TURN: RwLock<()> = RwLock::new(());

/// A case's turn, given back on drop.
pub enum Turn {
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
}

/// Wait for a case's turn: alone, or shared with the other cases. A case waiting to play alone
/// goes before cases asking to share later (the standard lock prefers its writers on Linux), so
/// it waits only for the cases already playing.
pub fn take(alone: bool) -> Turn {
    if alone {
        let turn = TURN.write().unwrap_or_else(|p| p.into_inner());
        // What the cases before it freed goes back to the system (glibc keeps it in its
        // threads' arenas): the case alone adds to the process's base, not to that.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only returns free memory; it is safe from any thread.
        unsafe {
            libc::malloc_trim(0);
        }
        Turn::Alone(turn)
    } else {
        Turn::Shared(TURN.read().unwrap_or_else(|p| p.into_inner()))
    }
}
