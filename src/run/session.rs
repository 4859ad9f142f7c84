//! The whole run, in nextest's shape: the planned suites run side by side (or one after
//! another), every event goes to one reporter, a suite's after the suites before it are told,
//! so a terminal reads as one suite after another; the run ends with its [`RunStats`], from
//! which `exit::of_run` decides the exit code.

use super::pool;
use super::result::{RunResult, RunStats};
use super::runner::{Event, EventKind, Recorded, Reporter, RunError, Runner, Target};
use crate::case::SuiteInfo;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::Instant;

/// A suite ready to run: its runner (cases, expectations, snapshots, jobs) and its targets.
pub struct Planned<'a> {
    pub runner: Runner<'a>,
    pub targets: Vec<Arc<dyn Target>>,
}

/// A finished run: a result per suite, in plan order, and what they count.
pub struct Finished {
    pub results: Vec<RunResult>,
    pub stats: RunStats,
}

/// What a suite's thread sends the reporter's.
enum Message {
    Event(Box<Recorded>),
    /// The suite's result, and when it finished (since the run started).
    Done(Box<Result<RunResult, RunError>>, std::time::Duration),
}

/// A suite's reporter: its events, sent to the thread that tells the run's reporter.
struct Forward<'s> {
    suite: usize,
    to: &'s Sender<(usize, Message)>,
}

impl Reporter for Forward<'_> {
    fn event(&mut self, e: &Event<'_>) {
        if let Some(kept) = Recorded::of(e) {
            let _ = self.to.send((self.suite, Message::Event(Box::new(kept))));
        }
    }
}

/// Run `planned`: side by side (each suite's own jobs), or one suite after another. `reporter`
/// is told `RunStarted`, each suite's events in plan order (a suite after the ones before it
/// finished) ending in its `SuiteFinished`, then `RunFinished`. A suite that cannot finish
/// (`RunError`) stops the telling and no suite starts after it; the ones running beside it
/// finish untold.
pub fn run(
    mut planned: Vec<Planned<'_>>,
    side_by_side: bool,
    reporter: &mut dyn Reporter,
) -> Result<Finished, RunError> {
    let started = Instant::now();
    for p in &mut planned {
        p.runner.started = started;
    }
    let suites: Vec<&SuiteInfo> = planned.iter().map(|p| p.runner.suite).collect();
    reporter.event(&Event {
        suite: None,
        elapsed: started.elapsed(),
        kind: EventKind::RunStarted { suites: &suites },
    });
    let jobs = if side_by_side { planned.len() } else { 1 };
    let stop = AtomicBool::new(false);
    let (tx, rx) = channel::<(usize, Message)>();
    let mut results = Vec::new();
    let mut failed = None;
    let ran = std::thread::scope(|s| {
        let (planned, stop) = (&planned, &stop);
        let worker = s.spawn(move || {
            pool::each(planned, jobs, &|| stop.load(Ordering::Relaxed), &|i, p| {
                let r = p.runner.run(&p.targets, &mut Forward { suite: i, to: &tx });
                if r.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                let _ = tx.send((i, Message::Done(Box::new(r), started.elapsed())));
            })
        });
        // Told in plan order: a suite's events wait until the suites before it are told.
        let mut waiting: Vec<VecDeque<Message>> = planned.iter().map(|_| VecDeque::new()).collect();
        let mut at = 0;
        for (i, m) in rx {
            waiting[i].push_back(m);
            while at < planned.len() && failed.is_none() {
                let Some(m) = waiting[at].pop_front() else {
                    break;
                };
                let runner = &planned[at].runner;
                match m {
                    Message::Event(e) => e.tell(reporter, &runner.suite.name, runner.cases),
                    Message::Done(done, finished_at) => match *done {
                        Ok(result) => {
                            reporter.event(&Event {
                                suite: Some(&runner.suite.name),
                                elapsed: finished_at,
                                kind: EventKind::SuiteFinished { result: &result },
                            });
                            results.push(result);
                            at += 1;
                        }
                        Err(e) => failed = Some(e),
                    },
                }
            }
        }
        worker
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    if let Some(e) = failed {
        return Err(e);
    }
    // A suite whose run panicked (a defect of hcpspec) ends the run as the panic did.
    if let Some(Some(Err(panic))) = ran.into_iter().find(|r| matches!(r, Some(Err(_)))) {
        std::panic::resume_unwind(Box::new(panic));
    }
    let interrupted = planned.iter().any(|p| {
        p.runner
            .interrupt
            .is_some_and(|f| f.load(Ordering::Relaxed))
    });
    let stats = RunStats::of(&results, interrupted);
    reporter.event(&Event {
        suite: None,
        elapsed: started.elapsed(),
        kind: EventKind::RunFinished { stats: &stats },
    });
    Ok(Finished { results, stats })
}
