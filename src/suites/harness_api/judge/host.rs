//! The checks of a pod's host (§ 9), in the launch contract's pod-host mode: what bearer each
//! upgrade and renewal carried (core logs it as `{join: n}`, the host token of the nth join,
//! never the token), how often the host renewed, and that it joined again after a refusal.
//! Counts, with generous bounds: no verdict depends on how fast the machine is.

use super::view::View;
use super::Fail;
use serde_json::{json, Value};

const JOIN: &str = crate::suites::core_api::pods::JOIN;
const RENEW: &str = crate::suites::core_api::pods::RENEW;

fn at(e: &Value) -> u64 {
    e["at"].as_u64().unwrap_or(0)
}

/// The joins core answered with a host token: (log index, the join's number).
fn joins(v: &View) -> Vec<(usize, u64)> {
    v.p.log
        .iter()
        .enumerate()
        .filter(|(_, e)| e["via"] == "host" && e["route"] == JOIN)
        .filter_map(|(i, e)| Some((i, e["join"].as_u64()?)))
        .collect()
}

/// The newest join before log index `i`.
fn newest_before(joins: &[(usize, u64)], i: usize) -> Option<u64> {
    joins.iter().rev().find(|(j, _)| *j < i).map(|(_, n)| *n)
}

/// The host's renewals: (log index, the entry).
fn renewals<'a>(v: &View<'a>) -> Vec<(usize, &'a Value)> {
    v.p.log
        .iter()
        .enumerate()
        .filter(|(_, e)| e["via"] == "host" && e["route"] == RENEW)
        .collect()
}

/// The cadence the host was told (`NYLORUN_HOST_RENEW_MS`), as core logged it at launch.
fn period(v: &View) -> u64 {
    v.p.log
        .iter()
        .find_map(|e| (e["event"] == "pod-host").then(|| e["renewMs"].as_u64())?)
        .unwrap_or(1000)
        .max(1)
}

/// A bearer that is not the newest join's host token, where one is due. A renewal may still
/// carry the join's before it until the host first uses the newest one (by a renewal or an
/// upgrade): it was sent before the host read the join's answer, which the machine's load
/// decides, not the host. Never once the host has used the newest.
fn wrong_bearer(
    c: &Value,
    what: &str,
    (log, joins): (&[Value], &[(usize, u64)]),
    i: usize,
    e: &Value,
) -> Result<(), Fail> {
    let newest = newest_before(joins, i);
    let bearer = |n: u64| json!({ "join": n });
    let in_flight = || {
        let Some(&(j, n)) = joins.iter().rev().find(|(j, _)| *j < i) else {
            return false;
        };
        let before = newest_before(joins, j);
        let used = log[j..i]
            .iter()
            .any(|x| (x["via"] == "upgrade" || x["route"] == RENEW) && x["bearer"] == bearer(n));
        e["route"] == RENEW && before.is_some_and(|b| e["bearer"] == bearer(b)) && !used
    };
    match newest {
        Some(n) if e["bearer"] == bearer(n) => Ok(()),
        Some(_) if in_flight() => Ok(()),
        _ => Err(super::miss(
            c,
            format!(
                "{what} carried {} as its bearer, not the host token of the newest join before it",
                e["bearer"]
            ),
            json!({ "bearer": newest.map(|n| json!({ "join": n })) }),
            e.clone(),
        )),
    }
}

/// § 9 "3. Connect with the host token as the WebSocket bearer": the host upgraded, and every
/// upgrade's bearer is the host token of the newest join before it.
pub(super) fn host_bearer(v: &View, c: &Value) -> Result<(), Fail> {
    let joins = joins(v);
    let upgrades: Vec<(usize, &Value)> =
        v.p.log
            .iter()
            .enumerate()
            .filter(|(_, e)| e["via"] == "upgrade")
            .collect();
    if upgrades.is_empty() {
        return Err(super::miss(
            c,
            "the host never opened its WebSocket".into(),
            json!("an upgrade with the join answer's hostToken"),
            json!({ "joins": joins.len() }),
        ));
    }
    for (i, e) in upgrades {
        wrong_bearer(c, "an upgrade", (&v.p.log, &joins), i, e)?;
    }
    Ok(())
}

/// § 9 "4. Every 5 minutes, POST .../host/renew with the host token as bearer", at the cadence
/// the host was told: from its first join to the end, at least one renewal every two periods
/// less one, at most five times the told count and five more; each with the newest join's
/// host token.
pub(super) fn host_renews(v: &View, c: &Value) -> Result<(), Fail> {
    let joins = joins(v);
    let Some(&(first, _)) = joins.first() else {
        return Err(super::miss(
            c,
            "the host never joined".into(),
            json!("a join answered with a host token"),
            json!({ "joins": 0 }),
        ));
    };
    let period = period(v);
    let end = v.p.log.last().map_or(0, at);
    let span = end.saturating_sub(at(&v.p.log[first]));
    let renewals = renewals(v);
    let n = renewals.len() as u64;
    let least = (span / (2 * period)).saturating_sub(1);
    let most = 5 * (span / period) + 5;
    if n < least || n > most {
        return Err(super::miss(
            c,
            format!("joined for {span} ms and renewed {n} times: the host was told to renew every {period} ms"),
            json!({ "renewals": format!("{least} to {most}") }),
            json!({ "renewals": n, "joinedMs": span, "renewMs": period }),
        ));
    }
    for (i, e) in renewals {
        wrong_bearer(c, "a renewal", (&v.p.log, &joins), i, e)?;
    }
    Ok(())
}

/// § 9 "Join again when a renewal is refused": after the first refused renewal, the host joins
/// again, and what it renews after that carries the new join's host token; with time left
/// (four periods), it renews at least once more.
pub(super) fn host_rejoins(v: &View, c: &Value) -> Result<(), Fail> {
    let renewals = renewals(v);
    let refused = renewals.iter().find(|(_, e)| {
        e["status"]
            .as_u64()
            .is_some_and(|s| !(200..300).contains(&s))
    });
    let Some(&(r, refusal)) = refused else {
        return Err(super::miss(
            c,
            format!(
                "no renewal was refused: the host renewed {} times, fewer than the scenario refuses",
                renewals.len()
            ),
            json!("a renewal refused, then a new join"),
            json!({ "renewals": renewals.len() }),
        ));
    };
    let joins = joins(v);
    let Some(&(j, n)) = joins.iter().find(|(j, _)| *j > r) else {
        return Err(super::miss(
            c,
            "a renewal was refused and the host never joined again".into(),
            json!("a join after the refused renewal"),
            json!({ "refused": refusal, "joins": joins.len() }),
        ));
    };
    let after: Vec<&(usize, &Value)> = renewals.iter().filter(|(i, _)| *i > j).collect();
    for (i, e) in &after {
        wrong_bearer(c, "a renewal after the new join", (&v.p.log, &joins), *i, e)?;
    }
    let left = v.p.log.last().map_or(0, at).saturating_sub(at(&v.p.log[j]));
    if after.is_empty() && left >= 4 * period(v) {
        return Err(super::miss(
            c,
            format!("joined again (join {n}) and renewed no more in the {left} ms left"),
            json!("renewals with the new join's host token"),
            json!({ "renewalsAfter": 0, "leftMs": left }),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::harness_api::judge::Played;

    fn host(route: &str, bearer: Option<u64>, status: u64, join: Option<u64>) -> Value {
        let mut e = json!({ "via": "host", "route": route, "status": status, "at": 0 });
        if let Some(n) = bearer {
            e["bearer"] = json!({ "join": n });
        }
        if let Some(n) = join {
            e["join"] = json!(n);
        }
        e
    }

    #[test]
    fn a_renewal_sent_before_the_host_read_its_new_join_is_not_its_fault() {
        let mut log = vec![
            json!({ "via": "core", "event": "pod-host", "renewMs": 200, "at": 0 }),
            host(JOIN, None, 200, Some(1)),
            host(RENEW, Some(1), 200, None),
            host(RENEW, Some(1), 401, None),
            host(JOIN, None, 200, Some(2)),
            // Sent before the host read join 2's answer, on a loaded machine.
            host(RENEW, Some(1), 401, None),
            host(RENEW, Some(2), 200, None),
        ];
        let played = |log: &[Value]| Played {
            log: log.to_vec(),
            runs: vec![],
            harness: String::new(),
            deadline_hit: false,
            hold: None,
        };
        let c = json!({ "check": "hostRejoins" });
        let p = played(&log);
        host_rejoins(&View::new(&p), &c).expect("the new token was used from then on");
        // Once the host used the new token, the old one is wrong.
        log.push(host(RENEW, Some(1), 401, None));
        let p = played(&log);
        let f = host_rejoins(&View::new(&p), &c).expect_err("the old token after the new");
        assert!(f.message.contains("carried {\"join\":1}"), "{}", f.message);
    }
}
