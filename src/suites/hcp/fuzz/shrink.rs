//! Greedy shrinking of a fuzz case while its oracle still fires: drop steps, packs, pack edits,
//! grants and exec args, narrow grants, then restore every other mutated field to the seed's
//! value. Each candidate is one run of the case, so a budget bounds the work.

use crate::suites::hcp::mutate::case::{FStep, FuzzCase};
use std::sync::atomic::{AtomicBool, Ordering};

/// The smallest case found within `budget` tries that `still` holds for.
pub fn shrink(
    case: FuzzCase,
    still: &mut dyn FnMut(&FuzzCase) -> bool,
    budget: usize,
    stop: &AtomicBool,
) -> FuzzCase {
    let mut s = Shrinker {
        best: case,
        still,
        tries: 0,
        budget,
        stop,
    };
    loop {
        let before = s.best.clone();
        s.pass();
        if s.best == before || s.spent() {
            return s.best;
        }
    }
}

struct Shrinker<'a> {
    best: FuzzCase,
    still: &'a mut dyn FnMut(&FuzzCase) -> bool,
    tries: usize,
    budget: usize,
    stop: &'a AtomicBool,
}

impl Shrinker<'_> {
    fn spent(&self) -> bool {
        self.tries >= self.budget || self.stop.load(Ordering::Relaxed)
    }

    /// Keep `edit(best)` when the oracle still fires on it.
    fn attempt(&mut self, edit: impl FnOnce(&mut FuzzCase) -> bool) {
        if self.spent() {
            return;
        }
        let mut c = self.best.clone();
        if !edit(&mut c) || c == self.best {
            return;
        }
        self.tries += 1;
        if (self.still)(&c) {
            self.best = c;
        }
    }

    fn pass(&mut self) {
        // Steps, from the last: later steps depend on earlier ones more than the other way.
        for i in (0..self.best.steps.len()).rev() {
            self.attempt(|c| {
                i < c.steps.len() && {
                    c.steps.remove(i);
                    true
                }
            });
        }
        for i in (0..self.best.packs.len()).rev() {
            self.attempt(|c| {
                i < c.packs.len() && {
                    c.packs.remove(i);
                    true
                }
            });
        }
        for p in 0..self.best.packs.len() {
            for e in (0..self.best.packs[p].edits.len()).rev() {
                self.attempt(|c| {
                    let edits = &mut c.packs[p].edits;
                    e < edits.len() && {
                        edits.remove(e);
                        true
                    }
                });
            }
        }
        let grants = self.best.grants.as_ref().map_or(0, Vec::len);
        for g in (0..grants).rev() {
            self.attempt(|c| match &mut c.grants {
                Some(gs) if g < gs.len() => {
                    gs.remove(g);
                    true
                }
                _ => false,
            });
        }
        for g in 0..self.best.grants.as_ref().map_or(0, Vec::len) {
            self.attempt(|c| match c.grants.as_mut().and_then(|gs| gs.get_mut(g)) {
                Some(x) => x.verb_keys.take().is_some(),
                None => false,
            });
            self.attempt(|c| match c.grants.as_mut().and_then(|gs| gs.get_mut(g)) {
                Some(x) => x.tenant_id.take().is_some(),
                None => false,
            });
        }
        for i in 0..self.best.steps.len() {
            let n = match &self.best.steps[i] {
                FStep::Exec { args, .. } => args.len(),
                FStep::Activate(ids) if ids.len() > 1 => ids.len(),
                _ => 0,
            };
            for j in (0..n).rev() {
                self.attempt(|c| match &mut c.steps[i] {
                    FStep::Exec { args, .. } => {
                        let key = args.keys().nth(j).cloned();
                        key.is_some_and(|k| args.remove(&k).is_some())
                    }
                    FStep::Activate(ids) if j < ids.len() => {
                        ids.remove(j);
                        true
                    }
                    _ => false,
                });
            }
            self.attempt(|c| match &mut c.steps[i] {
                FStep::Exec { report, .. } => report.take().is_some(),
                _ => false,
            });
            self.attempt(|c| match &mut c.steps[i] {
                FStep::Sense { payload, .. } if !payload.is_null() => {
                    *payload = serde_json::Value::Null;
                    true
                }
                _ => false,
            });
        }
        let plain = FuzzCase::plain(self.best.seed);
        self.attempt(|c| {
            std::mem::replace(&mut c.principal, plain.principal.clone()) != plain.principal
        });
        self.attempt(|c| {
            std::mem::replace(&mut c.tenant_id, plain.tenant_id.clone()) != plain.tenant_id
        });
        self.attempt(|c| c.project_id.take().is_some());
        self.attempt(|c| c.sandbox.take().is_some());
        self.attempt(|c| {
            std::mem::replace(&mut c.allow_bins, plain.allow_bins.clone()) != plain.allow_bins
        });
        for k in self.best.hub.keys().cloned().collect::<Vec<_>>() {
            self.attempt(|c| c.hub.remove(&k).is_some());
        }
        self.attempt(|c| std::mem::replace(&mut c.sense_enable, false));
    }
}
