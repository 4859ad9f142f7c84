//! A suite loaded in part (`suites::load_some`, what a trial run alone loads) holds exactly the
//! cases its `Keep` says, each as the whole load has it, and a file whose head cannot be read is
//! never skipped: its error is the load's.

use crate::common::copy_dir;
use hcpspec::case::{Head, Keep, Level};
use hcpspec::suites::{load, load_some};
use std::path::Path;

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

#[test]
fn a_part_is_the_whole_loads_cases_that_it_keeps() {
    let v = vectors();
    for name in hcpspec::case::suite_names(&v).unwrap() {
        let whole = load(&v, &name).unwrap();
        // One case by group and id: the first and the last.
        for c in [whole.cases.first().unwrap(), whole.cases.last().unwrap()] {
            let part = load_some(&v, &name, &Keep::Named(&|g, i| g == c.group && i == c.id));
            assert_eq!(part.unwrap().cases, std::slice::from_ref(c), "{}", c.name());
        }
        // By head: the MUST cases of the first section, or naming a killer in killed_by.
        let section = whole.info.sections[0].id.clone();
        let keep =
            |h: &Head| h.level == Level::MUST && (h.section == section || !h.killed_by.is_empty());
        let want: Vec<_> = whole
            .cases
            .iter()
            .filter(|c| c.level == Level::MUST && (c.section == section || !c.killed_by.is_empty()))
            .cloned()
            .collect();
        assert!(
            !want.is_empty(),
            "{name}: no MUST case in section {section}"
        );
        assert_eq!(
            load_some(&v, &name, &Keep::Head(&keep)).unwrap().cases,
            want,
            "{name}"
        );
        assert!(load_some(&v, &name, &Keep::Named(&|_, _| false))
            .unwrap()
            .cases
            .is_empty());
    }
}

#[test]
fn a_file_whose_head_cannot_be_read_is_loaded_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let v = vectors();
    std::fs::copy(v.join("denials.json"), dir.path().join("denials.json")).unwrap();
    copy_dir(&v.join("host"), &dir.path().join("host"));
    let group = std::fs::read_dir(dir.path().join("host"))
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let broken = group.join("broken.json");
    std::fs::write(&broken, "{\"id\": \"broken\", \"level\": ").unwrap();
    // No head says keep, yet the broken file is read whole, and its error is the load's.
    let e = load_some(dir.path(), "host", &Keep::Head(&|_| false))
        .err()
        .expect("a broken case file is an error");
    assert_eq!(e.file, broken, "{e}");
    assert!(e.to_string().contains("line 1 column"), "{e}");
    // Kept out by name, it is not read.
    let none = load_some(dir.path(), "host", &Keep::Named(&|_, i| i != "broken")).unwrap();
    assert_eq!(none.cases.len(), load(&v, "host").unwrap().cases.len());
}
