//! The pack loader reads surface.json and policy.json straight into the typed model and goes
//! through a `Value` and the JSON Schema only for a file the types reject. These tests hold it
//! to the loader that validates every file first (`load_files_schema_first`): the same pack or
//! the same issues (rule, file, pointer, message) for the fixtures, for every member of every
//! fixture replaced by each value the schema or serde could disagree on, for raw texts serde
//! reads differently from a `Value` (duplicate keys, arrays for objects, `null`s), and for
//! generated edits.

use hcpspec::mutate::Rng;
use hcpspec::suites::hcp::mutate::pack::{
    embedded_fixtures, gen_edit, pointers, Fixture, PackState,
};
use hcpspec::suites::hcp::pack::{load_files, load_files_schema_first, PackFiles};
use serde_json::{json, Value};

fn files(surface: &[u8], policy: &[u8]) -> PackFiles {
    PackFiles {
        label: "p".into(),
        surface: Some(surface.to_vec()),
        policy: Some(policy.to_vec()),
        skill: Some(b"# skill\n".to_vec()),
    }
}

fn same(files: &PackFiles, what: &str) -> bool {
    let typed = load_files(files);
    let schema = load_files_schema_first(files);
    assert_eq!(typed, schema, "{what}");
    typed.is_ok()
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

/// Values at the edges of what the schemas allow.
fn edge_values() -> Vec<Value> {
    let long = |n: usize| Value::String(format!("a{}", "b".repeat(n - 1)));
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(1.5),
        json!(""),
        json!("x"),
        json!("1.0"),
        json!("1."),
        json!("1.0\n"),
        json!("1.٣"),
        json!("2.0"),
        json!("A"),
        json!("a.b"),
        json!("a_b-c"),
        json!("é"),
        json!("a\u{0}"),
        long(64),
        long(65),
        json!("read"),
        json!("write"),
        json!("local"),
        json!("brain"),
        json!("user"),
        json!("mothership"),
        json!("string"),
        json!("integer"),
        json!("float"),
        json!({ "read": null }),
        json!({ "local": null }),
        json!([]),
        json!(["x"]),
        json!(["read", { "land": "local" }]),
        json!({}),
        json!({ "land": "local" }),
        json!({ "land": null }),
        json!({ "argv": ["a"] }),
        json!({ "argv": null }),
        json!({ "type": "string", "required": true }),
        json!({ "type": null }),
        json!({ "mode": "user", "hub": "h" }),
        json!({ "mode": "user", "hub": "" }),
        json!({ "operation": "read", "privacy": { "land": "brain" } }),
        json!({ "operation": "read", "privacy": ["brain"] }),
        json!({ "triggers": ["t", ""] }),
        json!({ "extra": 1 }),
    ]
}

#[test]
fn fixtures_load_typed() {
    for f in embedded_fixtures() {
        assert!(
            same(&PackState::of(&f).files("p"), &f.name),
            "{} does not load",
            f.name
        );
    }
}

#[test]
fn every_member_replaced_by_every_edge_value() {
    let values = edge_values();
    let mut loaded = 0;
    let mut total = 0;
    for f in embedded_fixtures() {
        for surface_side in [true, false] {
            let doc = if surface_side { &f.surface } else { &f.policy };
            let mut targets = pointers(doc);
            // New members too: one unknown and one known-but-absent per object.
            for extra in [
                "/extra",
                "/binding",
                "/sense",
                "/name",
                "/public",
                "/triggers",
            ] {
                targets.push(extra.to_string());
            }
            for p in &targets {
                for v in &values {
                    let mut d = doc.clone();
                    if hcpspec::case::patch::set(&mut d, p, Some(v.clone())).is_err() {
                        continue;
                    }
                    let fs = if surface_side {
                        files(&bytes(&d), &bytes(&f.policy))
                    } else {
                        files(&bytes(&f.surface), &bytes(&d))
                    };
                    total += 1;
                    loaded += same(&fs, &format!("{} {p} = {v}", f.name)) as usize;
                }
                let mut d = doc.clone();
                if hcpspec::case::patch::set(&mut d, p, None).is_ok() {
                    let fs = if surface_side {
                        files(&bytes(&d), &bytes(&f.policy))
                    } else {
                        files(&bytes(&f.surface), &bytes(&d))
                    };
                    total += 1;
                    loaded += same(&fs, &format!("{} {p} removed", f.name)) as usize;
                }
            }
        }
    }
    // Both sides of the decision are exercised.
    assert!(loaded > 100 && loaded < total, "{loaded} of {total} loaded");
}

#[test]
fn texts_serde_reads_differently_from_a_value() {
    let fx = embedded_fixtures();
    let f: &Fixture = &fx[0];
    let policy = bytes(&f.policy);
    let surface = bytes(&f.surface);
    let s = String::from_utf8(surface.clone()).unwrap();
    let body = &s[1..];
    let surfaces = [
        // A member twice: a `Value` keeps the last, a struct rejects.
        format!(r#"{{"hcp":"9",{body}"#),
        format!(r#"{{"pack_id":"Bad",{body}"#),
        // The struct as an array of its fields.
        r#"["1.0","x",null,null,false,null,[],{"bin":"b","pass_through":true}]"#.to_string(),
        format!("{s} "),
        format!("{s}}}"),
        format!("\u{feff}{s}"),
        format!(" \n{s}\n"),
        "{}".into(),
        "[]".into(),
        "null".into(),
        String::new(),
    ];
    for (i, text) in surfaces.iter().enumerate() {
        same(
            &files(text.as_bytes(), &policy),
            &format!("surface #{i}: {text}"),
        );
    }
    let p = String::from_utf8(policy.clone()).unwrap();
    let verbs = f.policy["verbs"].as_object().unwrap();
    let (k, row) = verbs.iter().next().unwrap();
    let policies = [
        // A key of a map twice: both keep the last.
        format!(r#"{{"verbs":{{"{k}":{{"operation":"bogus"}},"{k}":{row}}}}}"#),
        format!(r#"{{"verbs":{{"{k}":{row},"{k}":{{"operation":"bogus"}}}}}}"#),
        format!(r#"{{"verbs":{{"{k}":{row}}},"verbs":{{}}}}"#),
        format!(r#"{{"verbs":{{"{k}":["read",false,{{"land":"local"}}]}}}}"#),
        format!(
            r#"{{"verbs":{{"{k}":{{"operation":{{"read":null}},"privacy":{{"land":"local"}}}}}}}}"#
        ),
        r#"{"verbs":{},"triggers":{"t":{"privacy":null}}}"#.to_string(),
        r#"{"verbs":{},"triggers":{"t":{}}}"#.to_string(),
        format!("{p}\u{0}"),
    ];
    for (i, text) in policies.iter().enumerate() {
        same(
            &files(&surface, text.as_bytes()),
            &format!("policy #{i}: {text}"),
        );
    }
}

#[test]
fn generated_edits() {
    let fx = embedded_fixtures();
    let mut rng = Rng::new(9);
    for n in 0..3000 {
        let f = &fx[n % fx.len()];
        let mut state = PackState::of(f);
        for _ in 0..1 + rng.next_u64() % 6 {
            let e = gen_edit(&mut rng, &state, &fx);
            state.apply(&e);
        }
        same(&state.files(""), &format!("generated #{n}"));
    }
}
