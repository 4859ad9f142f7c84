//! The self-check, one meaning for every suite: every mutant fails a MUST case of one of its own
//! sections (or one whose `killed_by` names it); every MUST case falls to such a mutant; every
//! `killed_by` names a mutant that fails the case; every allowed variant passes every MUST case.
//! Mutants and variants are targets like any other, run through the one [`Runner`].
//!
//! It is cheap: each (target, case) pair plays at most once per process ([`Memo`]), a mutant
//! plays its likeliest killers first and stops at its first kill, and each question (a mutant
//! killed, every MUST case killed, a claim, a ledger row) plays only the pairs it needs, so a
//! trial run alone (`cargo nextest`) does not replay the whole matrix.

use super::{Context, Suite};
use crate::case::{Case, Level, SuiteInfo};
use crate::error::BadInput;
use crate::knob::Info;
use crate::run::expectations::Expectations;
use crate::run::runner::{Quiet, Runner};
use crate::run::{CaseResult, Verdict};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

pub struct SelfCheck<'a> {
    pub suite: &'a dyn Suite,
    pub info: &'a SuiteInfo,
    pub cases: &'a [Case],
    pub ctx: &'a Context,
    /// What has been played, shared by every question asked of the suite in this process.
    pub memo: &'a Memo,
}

/// `freedom` without the classes the case says its spec fixes.
fn free_for(freedom: crate::knob::Freedom, case: &Case) -> crate::knob::Freedom {
    let classes: Vec<crate::knob::Class> = freedom
        .classes()
        .into_iter()
        .filter(|c| !case.fixed.contains_key(c.name()))
        .collect();
    crate::knob::Freedom::only(freedom.seed, &classes)
}

/// A pass, or a skip (what the case needs was not offered): no failure.
fn passed(r: &CaseResult) -> bool {
    matches!(r.verdict, Verdict::Pass | Verdict::Skip { .. })
}

/// Each mutant's name and the names of the cases it fails among those it must answer for.
pub type Kills = BTreeMap<&'static str, Vec<String>>;

type Slot = Arc<OnceLock<Result<CaseResult, String>>>;

/// The variants a case's reference run asks about; none when that run did not pass (then every
/// variant plays the case).
type Asked = Option<std::collections::BTreeSet<String>>;

type AskedSlot = Arc<OnceLock<Result<Asked, String>>>;

/// The result of each (target, case) pair played, each played once however many questions ask
/// for it; at most `jobs` pairs play at once, whichever questions asked for them.
pub struct Memo {
    slots: Mutex<HashMap<(String, String), Slot>>,
    /// Each case's [`Asked`], found once.
    asked: Mutex<HashMap<String, AskedSlot>>,
    /// Each target made once (a runtime's set-up can cost more than a case).
    targets: Mutex<HashMap<String, Arc<dyn crate::run::runner::Target>>>,
    /// Places taken.
    playing: Mutex<usize>,
    /// A freed place wakes one waiter, not all of them: thousands of waiters woken per place
    /// cost more system time than the pairs played.
    freed: Condvar,
    jobs: usize,
    /// A folder the results are also kept in, for other processes given the same one.
    shared: Option<PathBuf>,
}

/// A result as a shared folder keeps it, with the pair it is of (a file's name is a hash): a
/// pair's [`CaseResult`], or a case's [`Asked`].
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept<T> {
    target: String,
    case: String,
    result: T,
}

impl Memo {
    pub fn new(jobs: usize) -> Self {
        Memo {
            slots: Mutex::default(),
            asked: Mutex::default(),
            targets: Mutex::default(),
            playing: Mutex::new(0),
            freed: Condvar::new(),
            jobs: jobs.max(1),
            shared: None,
        }
    }

    /// A memo that also keeps what it plays in `folder`, and takes what another process kept
    /// there (nextest runs each trial in a process of its own: one trial's pairs answer
    /// another's). Only processes of one build on one case set may be given the same folder,
    /// as they would share one memo; a file that cannot be written or read is played again.
    pub fn shared(jobs: usize, folder: PathBuf) -> Self {
        Memo {
            shared: std::fs::create_dir_all(&folder).is_ok().then_some(folder),
            ..Memo::new(jobs)
        }
    }

    fn kept_file(&self, target: &str, case: &str) -> Option<PathBuf> {
        let mut h = crate::hash::Fnv1a::new();
        h.write(target.as_bytes());
        h.write(&[0]);
        h.write(case.as_bytes());
        Some(
            self.shared
                .as_ref()?
                .join(format!("{:016x}.json", h.finish())),
        )
    }

    /// What another process kept for the pair, if anything.
    fn kept<T: serde::de::DeserializeOwned>(&self, target: &str, case: &str) -> Option<T> {
        let text = std::fs::read(self.kept_file(target, case)?).ok()?;
        let k: Kept<T> = serde_json::from_slice(&text).ok()?;
        (k.target == target && k.case == case).then_some(k.result)
    }

    /// Keep a result for other processes: written whole, then renamed into place.
    fn keep<T: serde::Serialize>(&self, target: &str, case: &str, result: &T) {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let Some(file) = self.kept_file(target, case) else {
            return;
        };
        let k = Kept {
            target: target.into(),
            case: case.into(),
            result,
        };
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = file.with_extension(format!("{}.{n}.tmp", std::process::id()));
        let written = serde_json::to_vec(&k)
            .ok()
            .is_some_and(|body| std::fs::write(&tmp, body).is_ok());
        if !written || std::fs::rename(&tmp, &file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    fn slot(&self, target: &str, case: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .entry((target.to_string(), case.to_string()))
            .or_default()
            .clone()
    }

    /// Whether some question has already played the pair (in this process, or kept in the
    /// shared folder), and the target failed the case.
    fn known_kill(&self, target: &str, case: &str) -> bool {
        let slot = self.slot(target, case);
        if slot.get().is_none() {
            if let Some(r) = self.kept(target, case) {
                let _ = slot.set(Ok(r));
            }
        }
        slot.get().is_some_and(|r| r.as_ref().is_ok_and(failed))
    }

    /// Hold one of the `jobs` places until the guard drops: whatever plays a case in this
    /// process (a self-check pair, a case's own test) takes one. A heavy case (core-api's frames
    /// of tens of MiB) takes one too, and plays alone in the process when its turn comes
    /// (`run::turn`): the cases beside it wait.
    pub fn place(&self) -> Place<'_> {
        let mut n = self.playing.lock().unwrap_or_else(|p| p.into_inner());
        while *n >= self.jobs {
            n = self.freed.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        *n += 1;
        Place(self)
    }
}

/// A place of a [`Memo`], given back on drop.
pub struct Place<'a>(&'a Memo);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut n = self.0.playing.lock().unwrap_or_else(|p| p.into_inner());
        *n -= 1;
        self.0.freed.notify_one();
    }
}

fn failed(r: &CaseResult) -> bool {
    // Unimplemented is never a pass either: a MUST case a mutant cannot be judged on, because it
    // lacks what the case requires (a method, the denial map an order case needs), fails it.
    matches!(r.verdict, Verdict::Fail(_) | Verdict::Unimplemented { .. })
}

/// How likely `mutant` is to kill `case`, lowest first: named in its `killed_by`, then the
/// killer of a ledger row naming it (`hinted`), then any other of its section's.
fn likeliness(case: &Case, mutant: &str, hinted: bool) -> u8 {
    if case.killed_by.iter().any(|k| k == mutant) {
        0
    } else if hinted {
        1
    } else {
        2
    }
}

impl SelfCheck<'_> {
    /// `inproc:NAME` (`mutant:…`, `variant:…`) on one case, through the runner, once per
    /// process.
    fn one(&self, name: &str, case: &Case) -> Result<CaseResult, String> {
        // A mutant's pairs are asked for by several questions (its own, its ledger rows', every
        // MUST case's); a variant's by its own alone, so only a mutant's are kept.
        let shared = name.starts_with("mutant:");
        self.memo
            .slot(name, &case.name())
            .get_or_init(|| {
                if let Some(r) = shared.then(|| self.memo.kept(name, &case.name())).flatten() {
                    return Ok(r);
                }
                let _place = self.memo.place();
                let r = self.played(self.target(name)?, case)?;
                if shared {
                    self.memo.keep(name, &case.name(), &r);
                }
                Ok(r)
            })
            .clone()
    }

    /// `case` on `target`, through the runner, beside whatever else plays.
    fn played(
        &self,
        target: Arc<dyn crate::run::runner::Target>,
        case: &Case,
    ) -> Result<CaseResult, String> {
        let expectations = Expectations::default();
        let mut runner = Runner::new(self.info, std::slice::from_ref(case), &expectations);
        runner.plays_alone = false;
        let spec = target.spec().to_string();
        let result = runner
            .run(&[target], &mut Quiet)
            .map_err(|e| e.to_string())?;
        result
            .runtimes
            .into_iter()
            .flat_map(|r| r.cases)
            .next()
            .ok_or_else(|| format!("{spec} gave no result for {}", case.name()))
    }

    fn target(&self, name: &str) -> Result<Arc<dyn crate::run::runner::Target>, String> {
        let mut targets = self.memo.targets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = targets.get(name) {
            return Ok(t.clone());
        }
        let t = self.suite.target(&format!("inproc:{name}"), self.ctx)?;
        targets.insert(name.to_string(), t.clone());
        Ok(t)
    }

    /// Each of `pairs` (target, case) played, as many at once as the memo's places allow;
    /// results in order. A question has at most `jobs` threads: a thread per pair, each waiting
    /// for a place, cost more than the pairs themselves.
    fn play(&self, pairs: &[(&str, &Case)]) -> Result<Vec<CaseResult>, String> {
        crate::run::pool::each(
            pairs,
            self.memo.jobs,
            &crate::run::pool::never,
            &|_, (name, case)| self.one(name, case),
        )
        .into_iter()
        .map(|r| match r {
            Some(Ok(r)) => r,
            _ => Err("a self-check thread panicked".into()),
        })
        .collect()
    }

    /// The variants each of `cases` asks about when the reference plays it, in case order:
    /// each case played once per process on a reference of its own, noting in an
    /// [`crate::knob::asked`] slot (and kept in the shared folder, where there is one).
    fn asked(&self, cases: &[&Case]) -> Result<Vec<Asked>, String> {
        let one = |case: &Case| -> Result<Asked, String> {
            let cell = {
                let mut all = self.memo.asked.lock().unwrap_or_else(|p| p.into_inner());
                all.entry(case.name()).or_default().clone()
            };
            cell.get_or_init(|| {
                if let Some(a) = self.memo.kept("reference:asked", &case.name()) {
                    return Ok(a);
                }
                let slot = crate::knob::asked::slot();
                let _place = self.memo.place();
                let target = self
                    .suite
                    .target(&format!("inproc:reference:asked:{slot}"), self.ctx)?;
                let ok = passed(&self.played(target, case)?);
                let asked = crate::knob::asked::take(slot);
                let a: Asked = ok.then(|| asked.into_iter().map(String::from).collect());
                self.memo.keep("reference:asked", &case.name(), &a);
                Ok(a)
            })
            .clone()
        };
        crate::run::pool::each(cases, self.memo.jobs, &crate::run::pool::never, &|_, c| {
            one(c)
        })
        .into_iter()
        .map(|r| match r {
            Some(Ok(r)) => r,
            _ => Err("a self-check thread panicked".into()),
        })
        .collect()
    }

    /// `inproc:NAME` on `cases`; results in case order.
    fn run(&self, name: &str, cases: &[&Case]) -> Result<Vec<CaseResult>, String> {
        let pairs: Vec<(&str, &Case)> = cases.iter().map(|c| (name, *c)).collect();
        self.play(&pairs)
    }

    /// `items` in the batches a question plays before it looks whether it has its answer: 1,
    /// then twice as many each time up to the memo's jobs (the likeliest come first, and a
    /// mutant that fails every case costs one pair, not a batch that waits out its deadline).
    fn batches<'i, T>(&self, items: &'i [T]) -> Vec<&'i [T]> {
        let mut out = Vec::new();
        let (mut at, mut size) = (0, 1);
        while at < items.len() {
            let end = (at + size).min(items.len());
            out.push(&items[at..end]);
            at = end;
            size = (size * 2).min(self.memo.jobs);
        }
        out
    }

    /// The MUST cases a mutant must answer for: of its own sections, or naming it in `killed_by`.
    pub fn own<'c>(&self, m: &Info, cases: &'c [Case]) -> Vec<&'c Case> {
        cases
            .iter()
            .filter(|c| {
                c.level == Level::MUST
                    && (m.sections.contains(&c.section.as_str())
                        || c.killed_by.iter().any(|k| k == m.name))
            })
            .collect()
    }

    /// The cases of its own that the mutant fails (an error or a skip is no kill): all of them
    /// (the CLI's matrix prints the count).
    pub fn kills(&self, m: &Info) -> Result<Vec<String>, BadInput> {
        let own = self.own(m, self.cases);
        Ok(self
            .run(&format!("mutant:{}", m.name), &own)?
            .into_iter()
            .filter(failed)
            .map(|r| r.name)
            .collect())
    }

    /// One case of its own that the mutant fails, if any: the cases whose `killed_by` names it
    /// first, then those of `hints` (the ledger rows it is the killer of), then the rest, a
    /// batch at a time, stopping at the first kill (or one already known).
    pub fn first_kill(&self, m: &Info, hints: &[String]) -> Result<Option<String>, BadInput> {
        let name = format!("mutant:{}", m.name);
        let mut own = self.own(m, self.cases);
        if let Some(c) = own.iter().find(|c| self.memo.known_kill(&name, &c.name())) {
            return Ok(Some(c.name()));
        }
        own.sort_by_key(|c| likeliness(c, m.name, hints.contains(&c.name())));
        for batch in self.batches(&own) {
            if let Some(r) = self.run(&name, batch)?.into_iter().find(failed) {
                return Ok(Some(r.name));
            }
        }
        Ok(None)
    }

    /// Every mutant's kills (the whole matrix).
    pub fn all_kills(&self) -> Result<Kills, BadInput> {
        self.suite
            .mutants()
            .iter()
            .map(|m| Ok((m.name, self.kills(m)?)))
            .collect()
    }

    /// The MUST cases the variant does not pass (a skip is no failure: what it needs was not
    /// offered), each explained.
    pub fn variant_failures(&self, v: &Info) -> Result<Vec<String>, BadInput> {
        let must: Vec<&Case> = self
            .cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .collect();
        let Some(freedom) = crate::knob::Freedom::named(v.name) else {
            // Only the cases whose reference run asks about the variant (`variant:all`, about
            // any): on the others it plays the reference's run, which passes.
            let asked = self.asked(&must)?;
            let must: Vec<&Case> = must
                .into_iter()
                .zip(asked)
                .filter(|(_, a)| {
                    a.as_ref()
                        .is_none_or(|a| a.contains(v.name) || (v.name == "all" && !a.is_empty()))
                })
                .map(|(c, _)| c)
                .collect();
            return Ok(self
                .run(&format!("variant:{}", v.name), &must)?
                .into_iter()
                .zip(must)
                .filter(|(r, _)| !passed(r))
                .map(|(r, c)| r.explain(c))
                .collect());
        };
        // Each case plays the classes its spec does not fix (the case's `fixed`), and a failure
        // names the classes that fail the case alone, so a maintainer sees which expectation
        // holds the reference's choice.
        let mut groups: BTreeMap<String, (crate::knob::Freedom, Vec<&Case>)> = BTreeMap::new();
        for c in must {
            let free = free_for(freedom, c);
            groups
                .entry(free.name())
                .or_insert((free, vec![]))
                .1
                .push(c);
        }
        let mut failed = Vec::new();
        for (name, (free, cases)) in groups {
            let r = self.run(&format!("variant:{name}"), &cases)?;
            failed.extend(
                r.into_iter()
                    .zip(cases)
                    .filter(|(r, _)| !passed(r))
                    .map(|(r, c)| (r, c, free)),
            );
        }
        failed
            .iter()
            .map(|(r, c, free)| {
                let mut alone = Vec::new();
                for class in free.classes() {
                    let one = crate::knob::Freedom::only(free.seed, &[class]);
                    let r = self.run(&format!("variant:{}", one.name()), &[*c])?;
                    if !r.iter().all(passed) {
                        alone.push(class.name());
                    }
                }
                let which = match alone.is_empty() {
                    true => "no class alone: only together".to_string(),
                    false => alone.join(", "),
                };
                Ok(format!(
                    "{} [seed {}; fails with {which}]",
                    r.explain(c),
                    free.seed
                ))
            })
            .collect()
    }

    /// The MUST cases no mutant of their own (section or `killed_by`) fails, from a whole
    /// matrix.
    pub fn unkilled(&self, kills: &Kills) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .map(Case::name)
            .filter(|n| !kills.values().flatten().any(|k| k == n))
            .collect()
    }

    /// The MUST cases no mutant of their own fails, found without the whole matrix: each case
    /// tries its candidates in turn (those its `killed_by` names, then the killers of the
    /// ledger rows naming it, `hints` as (case, mutant), then the rest of its section's), every
    /// case's next candidate played at once, until each has a kill or none is left.
    pub fn unkilled_by_search(&self, hints: &[(String, String)]) -> Result<Vec<String>, BadInput> {
        let mutants = self.suite.mutants();
        let mut open: Vec<(&Case, Vec<String>)> = self
            .cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .map(|c| {
                let name = c.name();
                let mut tries: Vec<(u8, String)> = mutants
                    .iter()
                    .filter(|m| self.own(m, std::slice::from_ref(c)).len() == 1)
                    .map(|m| {
                        let hinted = hints.iter().any(|(h, k)| *h == name && k == m.name);
                        (likeliness(c, m.name, hinted), format!("mutant:{}", m.name))
                    })
                    .collect();
                tries.sort_by_key(|(rank, _)| *rank);
                (c, tries.into_iter().map(|(_, t)| t).rev().collect())
            })
            .collect();
        // What some question already played answers a case for free.
        open.retain(|(c, tries)| !tries.iter().any(|t| self.memo.known_kill(t, &c.name())));
        let mut unkilled = Vec::new();
        loop {
            open.retain(|(c, tries)| {
                if tries.is_empty() {
                    unkilled.push(c.name());
                }
                !tries.is_empty()
            });
            if open.is_empty() {
                break;
            }
            let pairs: Vec<(String, &Case)> = open
                .iter_mut()
                .map(|(c, tries)| (tries.pop().unwrap_or_default(), *c))
                .collect();
            let refs: Vec<(&str, &Case)> = pairs.iter().map(|(t, c)| (t.as_str(), *c)).collect();
            let results = self.play(&refs)?;
            let mut i = 0;
            open.retain(|_| {
                let killed = failed(&results[i]);
                i += 1;
                !killed
            });
        }
        unkilled.sort();
        Ok(unkilled)
    }

    /// `killed_by` entries that name no mutant, or one that does not fail the case, from a
    /// whole matrix.
    pub fn false_claims(&self, kills: &Kills) -> Vec<String> {
        let mut out = Vec::new();
        for c in self.cases {
            for k in &c.killed_by {
                match kills.get(k.as_str()) {
                    None => out.push(format!("{}: killed_by names no mutant `{k}`", c.name())),
                    Some(failed) if !failed.contains(&c.name()) => out.push(format!(
                        "{}: killed_by names `{k}`, which does not fail it",
                        c.name()
                    )),
                    Some(_) => {}
                }
            }
        }
        out
    }

    /// The same as [`SelfCheck::false_claims`], playing only each claim's own pair: the matrix
    /// it reads holds just those.
    pub fn false_claims_played(&self) -> Result<Vec<String>, BadInput> {
        let mut kills: Kills = self
            .suite
            .mutants()
            .iter()
            .map(|m| (m.name, vec![]))
            .collect();
        let claims: Vec<(String, &Case)> = self
            .cases
            .iter()
            .flat_map(|c| c.killed_by.iter().map(move |k| (k, c)))
            .filter(|(k, _)| kills.contains_key(k.as_str()))
            .map(|(k, c)| (format!("mutant:{k}"), c))
            .collect();
        let pairs: Vec<(&str, &Case)> = claims.iter().map(|(t, c)| (t.as_str(), *c)).collect();
        for (r, (t, _)) in self.play(&pairs)?.into_iter().zip(&claims) {
            if let Some(k) = kills.get_mut(t.trim_start_matches("mutant:")) {
                if failed(&r) {
                    k.push(r.name);
                }
            }
        }
        Ok(self.false_claims(&kills))
    }
}

/// What a ledger row's killer did to the cases the row claims (see [`SelfCheck::prove`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Proof {
    /// The row's MUST cases it failed on an expectation the case wrote (or, for a check the row
    /// claims, the MUST cases it failed on that check: those of the first batch that had one).
    pub killed_by: Vec<String>,
    /// The row's MUST cases it failed elsewhere: on an arrangement, or another check.
    pub elsewhere: Vec<String>,
}

impl SelfCheck<'_> {
    /// Run each of a ledger row's killers on what the row claims (see [`SelfCheck::prove_one`]):
    /// the row is proven when every one of them kills.
    pub fn prove(&self, row: &super::ledger::Row) -> Result<Vec<(String, Proof)>, BadInput> {
        if row.killers.is_empty() {
            return Err(BadInput(format!("{}: names no killer", row.at())));
        }
        row.killers
            .iter()
            .map(|k| Ok((k.clone(), self.prove_one(row, k)?)))
            .collect()
    }

    /// Run one killer of a ledger row on what the row claims: its MUST cases, and for each check
    /// it names, every MUST case of the suite (a check every case runs is claimed by all of them).
    pub fn prove_one(&self, row: &super::ledger::Row, killer: &str) -> Result<Proof, BadInput> {
        // The row's own cases first; a check it claims is claimed by every MUST case, played in
        // batches until one proves it (a wait-bound suite has many).
        let mut cases: Vec<&Case> = self
            .cases
            .iter()
            .filter(|c| c.level == Level::MUST && row.cases.contains(&c.name()))
            .collect();
        if !row.checks.is_empty() {
            cases.extend(
                self.cases
                    .iter()
                    .filter(|c| c.level == Level::MUST && !row.cases.contains(&c.name())),
            );
        }
        // A row's own cases at once; a check's other cases in growing batches.
        let own = cases.len()
            - cases
                .iter()
                .filter(|c| !row.cases.contains(&c.name()))
                .count();
        let mut batches = vec![&cases[..own]];
        batches.extend(self.batches(&cases[own..]));
        let mut proof = Proof::default();
        for batch in batches {
            for (r, case) in self
                .run(&format!("mutant:{killer}"), batch)?
                .iter()
                .zip(batch)
            {
                let Verdict::Fail(f) = &r.verdict else {
                    continue;
                };
                let claimed = row.cases.contains(&r.name);
                let on_it = match self.suite.judged(case, f) {
                    super::Judged::Written => claimed,
                    super::Judged::Check(k) => row.checks.contains(&k),
                    super::Judged::Arrangement => false,
                };
                if on_it {
                    proof.killed_by.push(r.name.clone());
                } else if claimed {
                    proof
                        .elsewhere
                        .push(format!("{} (step {}, {})", r.name, f.step, f.action));
                }
            }
            if !proof.killed_by.is_empty() {
                break;
            }
        }
        Ok(proof)
    }

    /// The suite's ledgers, read ([`super::ledger::read`]).
    pub fn ledger(&self, vectors: &std::path::Path) -> Result<Vec<super::ledger::Row>, BadInput> {
        super::ledger::read(vectors, self.info, &self.suite.checks())
    }
}

/// A suite's whole self-check, its verdict computed here; `hcpspec run --mutants` only prints
/// it, and `selfcheck.json` keeps its [`record`](SelfCheckReport::record).
#[derive(Debug, Clone)]
pub struct SelfCheckReport {
    pub suite: String,
    pub title: String,
    /// What its targets are called (`runtime`, `harness` …).
    pub noun: &'static str,
    /// Each mutant and the MUST cases it answers for that it fails.
    pub mutants: Vec<(Info, Vec<String>)>,
    /// MUST cases no mutant of their own section (or `killed_by`) fails.
    pub unkilled: Vec<String>,
    /// `killed_by` claims that do not hold.
    pub false_claims: Vec<String>,
    /// Each allowed variant and the MUST cases it fails, explained.
    pub variants: Vec<(Info, Vec<String>)>,
    /// How many MUST cases the suite has.
    pub must_cases: usize,
    /// How many ledger rows were read, and what is wrong with them as claims.
    pub rows: usize,
    pub problems: Vec<String>,
    /// Every ledger row with a state: one line per killer (`None`: a row naming none).
    pub sentences: Vec<Sentence>,
    pub counts: BTreeMap<super::ledger::State, usize>,
}

/// One ledger row's killer and what it proved.
#[derive(Debug, Clone)]
pub struct Sentence {
    pub ledger: String,
    pub number: u32,
    pub state: super::ledger::State,
    pub killer: Option<String>,
    pub proof: Option<Proof>,
}

impl Sentence {
    /// A killer that fails none of the row's MUST cases on an expectation the case wrote.
    pub fn survives(&self) -> bool {
        self.proof.as_ref().is_some_and(|p| p.killed_by.is_empty())
    }
}

impl SelfCheck<'_> {
    /// The whole self-check: every mutant's kills, the MUST cases none kills, the claims, the
    /// variants, and the sentence matrix (each ledger row's killer against the row's cases).
    pub fn report(&self, vectors: &std::path::Path) -> Result<SelfCheckReport, BadInput> {
        let mutants = self.suite.mutants();
        let mut kills = Kills::new();
        let mut killed = Vec::new();
        for m in mutants {
            let k = self.kills(&m)?;
            kills.insert(m.name, k.clone());
            killed.push((m, k));
        }
        let variants = self
            .suite
            .variants()
            .into_iter()
            .map(|v| Ok((v.clone(), self.variant_failures(&v)?)))
            .collect::<Result<Vec<_>, BadInput>>()?;
        let rows = self.ledger(vectors)?;
        let names: Vec<&str> = killed.iter().map(|(m, _)| m.name).collect();
        let problems = super::ledger::problems(&rows, self.cases, &names);
        let mut sentences = Vec::new();
        for r in &rows {
            let Some(state) = r.state else { continue };
            let sentence = |killer, proof| Sentence {
                ledger: r.ledger.clone(),
                number: r.number,
                state,
                killer,
                proof,
            };
            if r.killers.is_empty() {
                sentences.push(sentence(None, None));
                continue;
            }
            for (k, p) in self.prove(r)? {
                sentences.push(sentence(Some(k), Some(p)));
            }
        }
        Ok(SelfCheckReport {
            suite: self.info.name.clone(),
            title: self.info.title.clone(),
            noun: self.suite.noun(),
            unkilled: self.unkilled(&kills),
            false_claims: self.false_claims(&kills),
            mutants: killed,
            variants,
            must_cases: self.cases.iter().filter(|c| c.level == Level::MUST).count(),
            rows: rows.len(),
            problems,
            sentences,
            counts: super::ledger::counts(&rows),
        })
    }
}

impl SelfCheckReport {
    /// Mutants no MUST case of their own kills.
    pub fn survivors(&self) -> usize {
        self.mutants.iter().filter(|(_, k)| k.is_empty()).count()
    }

    /// The verdict (docs/self-check.md): it fails if a mutant survives, a MUST case falls to no mutant of
    /// its own section, a `killed_by` claim is false, a variant fails a MUST case, a ledger
    /// row's killer survives, or a row's claims do not hold.
    pub fn passed(&self) -> bool {
        self.survivors() == 0
            && self.unkilled.is_empty()
            && self.false_claims.is_empty()
            && self.variants.iter().all(|(_, f)| f.is_empty())
            && !self.sentences.iter().any(Sentence::survives)
            && self.problems.is_empty()
    }

    /// What `selfcheck.json` keeps of it (what a published report shows: "N of M sentences
    /// proven").
    pub fn record(&self) -> serde_json::Value {
        use serde_json::json;
        json!({
            "suite": self.suite,
            "mutants": self.mutants.iter().map(|(m, k)| json!({ "name": m.name, "sections": m.sections, "kills": k })).collect::<Vec<_>>(),
            "unkilled": self.unkilled,
            "variants": self.variants.iter().map(|(v, f)| json!({ "name": v.name, "mustFailed": f.len() })).collect::<Vec<_>>(),
            "sentences": self.sentences.iter().map(|s| {
                let proof = s.proof.clone().unwrap_or_default();
                json!({
                    "ledger": s.ledger, "row": s.number, "state": s.state.label(), "killer": s.killer,
                    "killedBy": proof.killed_by, "elsewhere": proof.elsewhere,
                })
            }).collect::<Vec<_>>(),
            "counts": super::ledger::State::ALL.iter().map(|s| (s.label().to_string(), json!(self.counts[s]))).collect::<serde_json::Map<_, _>>(),
            "passed": self.passed(),
        })
    }
}

/// A trial of `cargo test`'s suite harness (`tests/suites.rs`), by kind; its name is its
/// `Display`, and parses back with `FromStr`. The names, one grammar:
/// `SUITE::GROUP::ID::RUNTIME` (a case on an embedded runtime), `mutants::SUITE::NAME`,
/// `variants::SUITE::NAME`, `sentences::SUITE::ledger` and `sentences::SUITE::LEDGER::N`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrialId {
    Case {
        suite: String,
        group: String,
        id: String,
        runtime: String,
    },
    /// A mutant killed, or a suite-wide question of the mutants
    /// (`every-must-case-is-killed`, `killed-by-claims-hold`).
    Mutant {
        suite: String,
        name: String,
    },
    Variant {
        suite: String,
        name: String,
    },
    /// The suite's ledgers read and checked (`row: None`), or one row's killer proven.
    Sentence {
        suite: String,
        row: Option<(String, u32)>,
    },
}

impl TrialId {
    /// The suite it is of.
    pub fn suite(&self) -> &str {
        match self {
            TrialId::Case { suite, .. }
            | TrialId::Mutant { suite, .. }
            | TrialId::Variant { suite, .. }
            | TrialId::Sentence { suite, .. } => suite,
        }
    }
}

impl std::fmt::Display for TrialId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrialId::Case {
                suite,
                group,
                id,
                runtime,
            } => write!(f, "{suite}::{group}::{id}::{runtime}"),
            TrialId::Mutant { suite, name } => write!(f, "mutants::{suite}::{name}"),
            TrialId::Variant { suite, name } => write!(f, "variants::{suite}::{name}"),
            TrialId::Sentence { suite, row: None } => write!(f, "sentences::{suite}::ledger"),
            TrialId::Sentence {
                suite,
                row: Some((ledger, n)),
            } => write!(f, "sentences::{suite}::{ledger}::{n}"),
        }
    }
}

impl std::str::FromStr for TrialId {
    type Err = BadInput;

    fn from_str(s: &str) -> Result<TrialId, BadInput> {
        let own = |x: &str| x.to_string();
        Ok(match s.split("::").collect::<Vec<_>>().as_slice() {
            ["mutants", suite, name] => TrialId::Mutant {
                suite: own(suite),
                name: own(name),
            },
            ["variants", suite, name] => TrialId::Variant {
                suite: own(suite),
                name: own(name),
            },
            ["sentences", suite, "ledger"] => TrialId::Sentence {
                suite: own(suite),
                row: None,
            },
            ["sentences", suite, ledger, n] => TrialId::Sentence {
                suite: own(suite),
                row: Some((
                    own(ledger),
                    n.parse()
                        .map_err(|_| BadInput(format!("{s}: a ledger row's number, not {n}")))?,
                )),
            },
            [k @ ("mutants" | "variants" | "sentences"), ..] => {
                return Err(BadInput(format!("{s}: not a {k} trial")))
            }
            [suite, group, id, runtime] => TrialId::Case {
                suite: own(suite),
                group: own(group),
                id: own(id),
                runtime: own(runtime),
            },
            _ => return Err(BadInput(format!("{s}: the name of no trial"))),
        })
    }
}

#[cfg(test)]
mod trial_tests {
    use super::TrialId;

    #[test]
    fn a_trials_name_parses_back_to_it() {
        for name in [
            "contract::03-authorize::write-without-grant::reference",
            "mutants::core-api::every-must-case-is-killed",
            "variants::host::optional-as-in-department",
            "sentences::harness-api::ledger",
            "sentences::core-api::COVERAGE.md::12",
        ] {
            let t: TrialId = name.parse().unwrap();
            assert_eq!(t.to_string(), name);
        }
        assert!("sentences::x::COVERAGE.md::twelve"
            .parse::<TrialId>()
            .is_err());
        assert!("snapshots::no-orphans".parse::<TrialId>().is_err());
    }
}
