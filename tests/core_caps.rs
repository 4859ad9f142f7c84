//! Caps and deadlines of the core-api suite against a hostile core (issue 20): a gate body that
//! never ends or is 3 GB, a flood of frames or of pings, one 3 GB frame, a case whose waits add
//! up past its budget, a case saving too much, 7 MiB error texts. Each is a verdict with
//! evidence naming the cap, within seconds, and hcpspec's peak RSS stays under 1 GiB
//! (`common::assert_rss_bounded`): the fakes try to send far more than that.

mod common;

use hcpspec::adapter::sched::LEAST_SHARE;
use hcpspec::run::Verdict;
use hcpspec::suites::core_api::{run_case_within, CASE_BUDGET};
use std::time::{Duration, Instant};

/// The verdict of a case of these steps on `hostile_core.py MODE`, under `budget`, and how long
/// it took.
fn verdict_of(mode: &str, steps: &str, budget: Duration) -> (Verdict, Duration) {
    let (case, connect) = common::hostile_core_case(mode, steps, Duration::from_secs(5));
    let t = Instant::now();
    let r = run_case_within(&case, &connect, budget);
    (r.verdict, t.elapsed())
}

/// Wall time a case may take for each second it takes on a quiet machine: its deadlines are in
/// charged time, which runs at least at 1/LEAST_SHARE of wall time, so no load makes a correct
/// run take longer (a time bound judging the machine would flip under load).
fn on_any_load(quiet: Duration) -> Duration {
    quiet * LEAST_SHARE
}

/// A failure whose observed value holds `evidence` (a deadline or cap's words: a deadline a
/// flood renewed would end on the case's budget instead), within `within` on a quiet machine
/// (`on_any_load`), memory bounded.
fn fails_showing(mode: &str, steps: &str, evidence: &str, within: Duration) {
    let (v, took) = verdict_of(mode, steps, CASE_BUDGET);
    let peak = common::peak_rss(std::process::id()).unwrap_or(0);
    eprintln!("{mode}: {took:?}, peak RSS so far {} MiB", peak >> 20);
    assert!(took < on_any_load(within), "{mode}: took {took:?}");
    match v {
        Verdict::Fail(f) => assert!(
            f.actual.to_string().contains(evidence),
            "{mode}: `{evidence}` not in {}",
            f.actual
        ),
        other => panic!("{mode}: expected a failure, got {other:?}"),
    }
    common::assert_rss_bounded(mode);
}

const GATE: &str = r#"[ { "gate": { "route": "tool-calls", "body": {} }, "expect": { "status": 200, "body": {} } } ]"#;

#[test]
fn a_3_gb_gate_body_is_cut_at_its_cap() {
    fails_showing(
        "gate-huge",
        GATE,
        "the gate's body passed 16 MiB",
        Duration::from_secs(10),
    );
}

#[test]
fn a_gate_body_sent_a_byte_a_second_ends_at_the_gate_deadline() {
    fails_showing(
        "gate-drip",
        GATE,
        "the gate's body did not end within 3000 ms",
        Duration::from_secs(12),
    );
}

/// A gate call whose connection the core ends with no answer is observed `{closed: true}` (how
/// a core may abort a call: the cancel cases accept it), not an error: a case can expect it.
#[test]
fn a_gate_connection_ended_with_no_answer_is_observed_closed() {
    let closed =
        r#"[ { "gate": { "route": "tool-calls", "body": {} }, "expect": { "closed": true } } ]"#;
    let (v, _) = verdict_of("gate-closes", closed, CASE_BUDGET);
    assert_eq!(v, Verdict::Pass, "{v:?}");
    let (v, _) = verdict_of("gate-closes", GATE, CASE_BUDGET);
    match v {
        Verdict::Fail(f) => assert_eq!(f.actual, serde_json::json!({ "closed": true })),
        other => panic!("expected a failure showing `closed`, got {other:?}"),
    }
}

const HELLO: &str = r#"[ { "hello": {}, "expect": { "ok": true } } ]"#;

#[test]
fn a_core_flooding_frames_while_hcpspec_waits_is_flooded() {
    fails_showing(
        "ws-flood",
        HELLO,
        "core sent more than 10000 frames / 32 MiB unread",
        Duration::from_secs(10),
    );
}

#[test]
fn a_core_flooding_frames_between_steps_is_flooded() {
    fails_showing(
        "ws-flood",
        r#"[ { "connect": {} }, { "send": { "text": "hi" } }, { "wait": 2000 },
             { "await": { "m": "never" }, "expect": { "m": "never" } } ]"#,
        "core sent more than 10000 frames / 32 MiB unread",
        Duration::from_secs(10),
    );
}

#[test]
fn a_ping_flood_leaves_a_request_its_deadline() {
    fails_showing(
        "ping-flood",
        HELLO,
        "no answer to `hello` within 3000 ms",
        Duration::from_secs(12),
    );
}

#[test]
fn a_3_gb_frame_closes_the_connection_naming_the_cap() {
    fails_showing("huge-frame", HELLO, "16777216", Duration::from_secs(10));
}

#[test]
fn a_case_whose_waits_pass_its_budget_is_an_error_naming_it() {
    // The last wait checks something (a case of arrangement only is refused at load); the
    // budget ends the case before it.
    let mut awaits = vec![r#"{ "await": { "m": "never", "waitMs": 10000 } }"#; 12];
    awaits
        .push(r#"{ "await": { "m": "never", "waitMs": 10000 }, "expect": { "noAnswer": true } }"#);
    let awaits = awaits.join(", ");
    let steps = format!(r#"[ {{ "hello": {{}} }}, {awaits} ]"#);
    let (v, took) = verdict_of("deaf", &steps, Duration::from_secs(4));
    // Twelve waits of 10 s would take two minutes: the budget of 4 s ends them.
    assert!(took < on_any_load(Duration::from_secs(8)), "took {took:?}");
    match v {
        Verdict::Error { message } => {
            assert!(message.contains("passed its budget of 4 s"), "{message}")
        }
        other => panic!("expected an error verdict, got {other:?}"),
    }
    assert_eq!(CASE_BUDGET, Duration::from_secs(60));
}

#[test]
fn saved_values_past_their_cap_are_an_error() {
    let mib = "s".repeat(1 << 20);
    let mut steps = vec![format!(
        r#"{{ "control": "session.open", "params": {{ "a": "{mib}" }}, "save": "s0" }}"#
    )];
    for i in 1..=12 {
        steps.push(format!(
            r#"{{ "control": "session.open", "params": {{ "a": "${{s0.a}}", "b": "${{s0.a}}", "c": "${{s0.a}}", "d": "${{s0.a}}" }}, "save": "s{i}" }}"#
        ));
    }
    // Something to check (a case of arrangement only is refused at load), never reached.
    steps.push(r#"{ "control": "session.open", "expect": { "ok": true } }"#.to_string());
    let (v, _) = verdict_of("echo", &format!("[{}]", steps.join(", ")), CASE_BUDGET);
    match v {
        Verdict::Error { message } => {
            assert!(message.contains("saved values past 32 MiB"), "{message}")
        }
        other => panic!("expected an error verdict, got {other:?}"),
    }
}

/// 7 MiB error texts of the control shim reach the verdict cut (4 KiB and its mark).
#[test]
fn long_error_texts_of_the_control_shim_are_cut() {
    let (v, _) = verdict_of("refuses-long", HELLO, CASE_BUDGET);
    match &v {
        Verdict::Unimplemented { reason } => {
            assert!(reason.len() < 8 << 10, "{} bytes", reason.len());
            assert!(reason.contains("[cut: "), "{reason}");
        }
        other => panic!("expected unimplemented, got {other:?}"),
    }
    let (v, _) = verdict_of("start-fails-long", HELLO, CASE_BUDGET);
    match &v {
        Verdict::Error { message } => {
            assert!(message.len() < 8 << 10, "{} bytes", message.len());
            assert!(message.contains("[cut: "), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn frames_a_core_leaves_unread_are_capped() {
    let big = r#"{ "request": { "m": "x", "padTo": 67108864, "waitMs": 100 } }"#;
    let steps = format!(
        r#"[ {{ "hello": {{ }} }}, {}, {{ "request": {{ "m": "y", "padTo": 67108864, "waitMs": 100 }}, "expect": {{ "ok": true }} }} ]"#,
        vec![big; 24].join(", ")
    );
    fails_showing(
        "deaf",
        &steps,
        "not sent: the core has not read",
        Duration::from_secs(30),
    );
}
