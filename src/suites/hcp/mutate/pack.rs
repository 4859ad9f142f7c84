//! Pack mutations: dropped and retyped fields, unicode and huge strings, path traversal in bin
//! names and argv templates, flipped operations and confirms, missing Policy rows, unknown
//! lands, duplicate verb keys (as array entries and as duplicate JSON object keys), trailing
//! garbage, truncation, a missing or blank Skill.
//!
//! An edit applies to the current state of a pack, so dropping an edit from a list (the
//! shrinker does) restores that field to the seed's value and keeps the rest.

use crate::case::patch::set;
use crate::error::BadInput;
use crate::mutate::{retype, weird_string, Source};
use crate::suites::hcp::pack::PackFiles;
use crate::suites::hcp::steps::InlinePack;
use serde_json::{json, Map, Value};
use std::path::Path;

pub const SURFACE: &str = "surface.json";
pub const POLICY: &str = "policy.json";
pub const SKILL: &str = "HARNESS.md";

/// A fixture pack, parsed: the seed every mutation starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    pub name: String,
    pub surface: Value,
    pub policy: Value,
    pub skill: Option<String>,
}

macro_rules! embedded {
    ($($name:literal),+) => {
        /// The fixture packs of `vectors/packs/`, compiled in (for the cargo-fuzz targets).
        pub fn embedded_fixtures() -> Vec<Fixture> {
            vec![$(Fixture::parse(
                $name,
                include_str!(concat!("../../../../vectors/packs/", $name, "/surface.json")),
                include_str!(concat!("../../../../vectors/packs/", $name, "/policy.json")),
                Some(include_str!(concat!("../../../../vectors/packs/", $name, "/HARNESS.md"))),
            )),+]
        }
    };
}
embedded!("ledger", "transit", "vault", "notes", "forge", "passthru");

impl Fixture {
    fn parse(name: &str, surface: &str, policy: &str, skill: Option<&str>) -> Fixture {
        Fixture {
            name: name.into(),
            surface: serde_json::from_str(surface).unwrap_or(Value::Null),
            policy: serde_json::from_str(policy).unwrap_or(Value::Null),
            skill: skill.map(String::from),
        }
    }

    /// The fixture packs under `packs_dir`, in name order; the ones that do not parse are left
    /// out (a mutation needs a JSON seed).
    pub fn load_all(packs_dir: &Path) -> Result<Vec<Fixture>, BadInput> {
        let mut out = Vec::new();
        let dirs = std::fs::read_dir(packs_dir)
            .map_err(|e| BadInput(format!("{}: {e}", packs_dir.display())))?;
        let mut dirs: Vec<_> = dirs
            .flatten()
            .map(|d| d.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let (Some(s), Some(p)) = (read(SURFACE), read(POLICY)) else {
                continue;
            };
            let f = Fixture::parse(name, &s, &p, read(SKILL).as_deref());
            if f.surface.is_object() && f.policy.is_object() {
                out.push(f);
            }
        }
        Ok(out)
    }

    pub fn pack_id(&self) -> &str {
        self.surface["pack_id"].as_str().unwrap_or(&self.name)
    }

    pub fn public(&self) -> bool {
        self.surface["public"].as_bool().unwrap_or(false)
    }

    pub fn binding_mode(&self) -> Option<&str> {
        self.surface
            .pointer("/binding/mode")
            .and_then(Value::as_str)
    }

    /// The command's verb keys, in surface order.
    pub fn verbs(&self) -> Vec<String> {
        self.surface["commands"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["verb_key"].as_str().map(String::from))
            .collect()
    }

    /// A verb's declared args: (name, type, required).
    pub fn args(&self, verb: &str) -> Vec<(String, String, bool)> {
        let cmd = self.surface["commands"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["verb_key"] == verb);
        cmd.and_then(|c| c["args"].as_object())
            .into_iter()
            .flatten()
            .map(|(k, spec)| {
                let ty = spec["type"].as_str().unwrap_or("string").to_string();
                (k.clone(), ty, spec["required"].as_bool().unwrap_or(false))
            })
            .collect()
    }

    pub fn confirm(&self, verb: &str) -> bool {
        self.policy["verbs"][verb]["confirm"]
            .as_bool()
            .unwrap_or(false)
    }

    pub fn write(&self, verb: &str) -> bool {
        self.policy["verbs"][verb]["operation"] == "write"
    }

    pub fn triggers(&self) -> Vec<String> {
        self.surface
            .pointer("/sense/triggers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(String::from))
            .collect()
    }
}

/// Which file of a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum File {
    Surface,
    Policy,
}

impl File {
    pub fn name(self) -> &'static str {
        match self {
            File::Surface => SURFACE,
            File::Policy => POLICY,
        }
    }
}

/// One mutation of a pack.
#[derive(Debug, Clone, PartialEq)]
pub enum PackEdit {
    /// Set the value at a JSON pointer whose parent exists (`-` appends to an array).
    Set {
        file: File,
        pointer: String,
        value: Value,
    },
    /// Remove the key or element at a JSON pointer.
    Remove { file: File, pointer: String },
    /// Text after the JSON value (a second value, a stray brace, a comment…).
    Trailing { file: File, text: String },
    /// Keep only the first `percent` of the file's text.
    Truncate { file: File, percent: u8 },
    /// The object at `pointer` gets `key` twice: first `value`, then its own entry.
    DuplicateKey {
        file: File,
        pointer: String,
        key: String,
        value: Value,
    },
    /// Delete the file.
    Delete { file: File },
    /// Replace HARNESS.md (`None` deletes it).
    Skill(Option<String>),
}

impl PackEdit {
    fn file(&self) -> Option<File> {
        match self {
            PackEdit::Set { file, .. }
            | PackEdit::Remove { file, .. }
            | PackEdit::Trailing { file, .. }
            | PackEdit::Truncate { file, .. }
            | PackEdit::DuplicateKey { file, .. }
            | PackEdit::Delete { file } => Some(*file),
            PackEdit::Skill(_) => None,
        }
    }

    /// True for edits that only a text file can carry (not expressible as a JSON patch).
    fn textual(&self) -> bool {
        matches!(
            self,
            PackEdit::Trailing { .. } | PackEdit::Truncate { .. } | PackEdit::DuplicateKey { .. }
        )
    }
}

/// One file as the edits leave it.
#[derive(Debug, Clone, PartialEq)]
pub enum FileState {
    Json(Value),
    Text(String),
    Missing,
}

impl FileState {
    pub fn bytes(&self) -> Option<Vec<u8>> {
        match self {
            FileState::Json(v) => Some(serde_json::to_vec_pretty(v).unwrap_or_default()),
            FileState::Text(t) => Some(t.clone().into_bytes()),
            FileState::Missing => None,
        }
    }
    fn text(&self) -> String {
        self.bytes()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

/// A pack as a fixture and its edits leave it.
#[derive(Debug, Clone, PartialEq)]
pub struct PackState {
    pub surface: FileState,
    pub policy: FileState,
    pub skill: Option<String>,
}

impl PackState {
    pub fn of(f: &Fixture) -> PackState {
        PackState {
            surface: FileState::Json(f.surface.clone()),
            policy: FileState::Json(f.policy.clone()),
            skill: f.skill.clone(),
        }
    }

    pub fn with(f: &Fixture, edits: &[PackEdit]) -> PackState {
        let mut s = PackState::of(f);
        for e in edits {
            s.apply(e);
        }
        s
    }

    fn file(&mut self, f: File) -> &mut FileState {
        match f {
            File::Surface => &mut self.surface,
            File::Policy => &mut self.policy,
        }
    }

    pub fn json(&self, f: File) -> Option<&Value> {
        match match f {
            File::Surface => &self.surface,
            File::Policy => &self.policy,
        } {
            FileState::Json(v) => Some(v),
            _ => None,
        }
    }

    /// Apply one edit; an edit that does not fit the current state (a JSON edit on a file that
    /// is already text, a pointer whose parent is gone) does nothing.
    pub fn apply(&mut self, e: &PackEdit) {
        match e {
            PackEdit::Set {
                file,
                pointer,
                value,
            } => {
                if let FileState::Json(doc) = self.file(*file) {
                    let _ = set(doc, pointer, Some(value.clone()));
                }
            }
            PackEdit::Remove { file, pointer } => {
                if let FileState::Json(doc) = self.file(*file) {
                    let _ = set(doc, pointer, None);
                }
            }
            PackEdit::Trailing { file, text } => {
                let state = self.file(*file);
                if *state != FileState::Missing {
                    *state = FileState::Text(state.text() + text);
                }
            }
            PackEdit::Truncate { file, percent } => {
                let state = self.file(*file);
                if *state != FileState::Missing {
                    let t = state.text();
                    let mut cut = t.len() * (*percent as usize).min(99) / 100;
                    while !t.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    *state = FileState::Text(t[..cut].to_string());
                }
            }
            PackEdit::DuplicateKey {
                file,
                pointer,
                key,
                value,
            } => {
                let state = self.file(*file);
                if let FileState::Json(doc) = state {
                    if doc.pointer(pointer).is_some_and(Value::is_object) {
                        let mut out = String::new();
                        write_dup(doc, "", pointer, key, value, &mut out);
                        *state = FileState::Text(out);
                    }
                }
            }
            PackEdit::Delete { file } => *self.file(*file) = FileState::Missing,
            PackEdit::Skill(s) => self.skill = s.clone(),
        }
    }

    /// The three files' bytes, as the loader reads them.
    pub fn files(&self, label: &str) -> PackFiles {
        PackFiles {
            label: label.into(),
            surface: self.surface.bytes(),
            policy: self.policy.bytes(),
            skill: self.skill.clone().map(String::into_bytes),
        }
    }

    /// The pack as an inline pack of a case: `from` the fixture, then `patch` where every edit
    /// of a file is a plain JSON-pointer set or removal, else the whole file in `files`.
    pub fn inline(&self, f: &Fixture, edits: &[PackEdit], name: Option<String>) -> InlinePack {
        let mut files = Map::new();
        let mut patch = Map::new();
        for file in [File::Surface, File::Policy] {
            let seed = FileState::Json(match file {
                File::Surface => f.surface.clone(),
                File::Policy => f.policy.clone(),
            });
            let now = match file {
                File::Surface => &self.surface,
                File::Policy => &self.policy,
            };
            if *now == seed {
                continue;
            }
            match now {
                FileState::Json(v) => match as_patch(&seed, edits, file, v) {
                    Some(p) => {
                        patch.insert(file.name().into(), Value::Object(p));
                    }
                    None => {
                        files.insert(file.name().into(), v.clone());
                    }
                },
                FileState::Text(t) => {
                    files.insert(file.name().into(), Value::String(t.clone()));
                }
                FileState::Missing => {
                    files.insert(file.name().into(), Value::Null);
                }
            }
        }
        if self.skill != f.skill {
            files.insert(
                SKILL.into(),
                self.skill.clone().map(Value::String).unwrap_or(Value::Null),
            );
        }
        InlinePack {
            name,
            from: Some(f.name.clone()),
            files,
            patch,
        }
    }
}

/// The file's edits as a `patch` map, when replaying them the way the case runner patches a
/// file gives exactly `want`.
fn as_patch(
    seed: &FileState,
    edits: &[PackEdit],
    file: File,
    want: &Value,
) -> Option<Map<String, Value>> {
    let FileState::Json(seed) = seed else {
        return None;
    };
    let mut map = Map::new();
    for e in edits {
        let (pointer, value) = match e {
            PackEdit::Set {
                file: f,
                pointer,
                value,
            } if *f == file => (pointer, value.clone()),
            PackEdit::Remove { file: f, pointer } if *f == file => (pointer, Value::Null),
            other if other.textual() && other.file() == Some(file) => return None,
            _ => continue,
        };
        if map.contains_key(pointer) || (value.is_null() && matches!(e, PackEdit::Set { .. })) {
            return None;
        }
        map.insert(pointer.clone(), value);
    }
    let mut doc = seed.clone();
    for (pointer, value) in &map {
        let v = (!value.is_null()).then(|| value.clone());
        set(&mut doc, pointer, v).ok()?;
    }
    (doc == *want && !map.is_empty()).then_some(map)
}

/// JSON text of `v` where the object at `target` has `key: dup` written before its entries.
fn write_dup(v: &Value, here: &str, target: &str, key: &str, dup: &Value, out: &mut String) {
    let s = |x: &str| serde_json::to_string(x).unwrap_or_default();
    match v {
        Value::Object(m) => {
            out.push('{');
            let mut first = true;
            if here == target {
                out.push_str(&format!("{}: {}", s(key), dup));
                first = false;
            }
            for (k, x) in m {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                out.push_str(&format!("{}: ", s(k)));
                let seg = crate::pointer::escape(k);
                write_dup(x, &format!("{here}/{seg}"), target, key, dup, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_dup(x, &format!("{here}/{i}"), target, key, dup, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Every pointer in a document (not the root), in document order.
pub fn pointers(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    visit(v, &mut String::new(), &mut |p, _| {
        out.push(p.to_string());
        false
    });
    out
}

/// Visit every pointer of `v` (not the root) in document order, with its value, until `f`
/// returns true; one buffer for the pointer, no string per node.
fn visit<'v>(v: &'v Value, here: &mut String, f: &mut dyn FnMut(&str, &'v Value) -> bool) -> bool {
    let len = here.len();
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                here.push('/');
                here.push_str(&crate::pointer::escape(k));
                if f(here, x) || visit(x, here, f) {
                    return true;
                }
                here.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                use std::fmt::Write;
                let _ = write!(here, "/{i}");
                if f(here, x) || visit(x, here, f) {
                    return true;
                }
                here.truncate(len);
            }
        }
        _ => {}
    }
    false
}

/// How many of `pointers(doc)` pass `keep`.
fn count_pointers(doc: &Value, keep: impl Fn(&str, &Value) -> bool) -> usize {
    let mut n = 0;
    visit(doc, &mut String::new(), &mut |p, v| {
        n += keep(p, v) as usize;
        false
    });
    n
}

/// The `i`th of `pointers(doc)` that pass `keep`, with its value.
fn nth_pointer(
    doc: &Value,
    keep: impl Fn(&str, &Value) -> bool,
    mut i: usize,
) -> Option<(String, &Value)> {
    let mut found = None;
    let mut here = String::new();
    visit(doc, &mut here, &mut |p, v| {
        if !keep(p, v) {
            return false;
        }
        if i == 0 {
            found = Some((p.to_string(), v));
            return true;
        }
        i -= 1;
        false
    });
    found
}

/// What `src.pick` picks among the pointers of `doc` that pass `keep` (None when there is
/// none), without building the list: the same choice for the same source.
fn pick_pointer<'v>(
    src: &mut impl Source,
    doc: &'v Value,
    keep: impl Fn(&str, &Value) -> bool + Copy,
) -> Option<(String, &'v Value)> {
    match count_pointers(doc, keep) {
        0 => None,
        n => nth_pointer(doc, keep, src.below(n)),
    }
}

const BINS: &[&str] = &[
    "../hcpspec-probe",
    "./hcpspec-probe",
    "/bin/sh",
    "hcpspec-probe/",
    "other-probe",
    "sh",
    "hcpspec-probe ",
    "HCPSPEC-PROBE",
    "..",
    ".",
    "hcpspec-probe\u{0}",
    "hcpspec-probe",
];

const TEMPLATES: &[&str] = &[
    "{report}/../../x",
    "$(id)",
    "{confirm}",
    "{apply}",
    "{",
    "}{",
    "{missing}",
    "--report={report}",
    "a b",
    "--exit=3",
    "{amount}{amount}",
    "; {text}",
];

/// One random edit of a pack in its current state.
pub fn gen_edit(src: &mut impl Source, state: &PackState, fixtures: &[Fixture]) -> PackEdit {
    // Borrowed, not cloned: a generated pack_load input makes up to six edits.
    let surface = state.json(File::Surface).unwrap_or(&Value::Null);
    let policy = state.json(File::Policy).unwrap_or(&Value::Null);
    let verbs: Vec<String> = policy["verbs"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let file = if src.chance(50) {
        File::Surface
    } else {
        File::Policy
    };
    let verb = (!verbs.is_empty()).then(|| verbs[src.below(verbs.len())].clone());
    let arm = src.weighted(&[
        8, 8, 6, 8, 4, 8, 6, 6, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 5,
    ]);
    let d = Drawn {
        surface,
        policy,
        file,
        verb,
        fixtures,
    };
    match arm {
        0..=4 => field_edit(src, arm, d),
        5..=10 => row_edit(src, arm, d),
        _ => shape_edit(src, arm, d),
    }
}

/// What one edit draws on: the pack's two documents, the file and the Policy row picked.
struct Drawn<'a> {
    surface: &'a Value,
    policy: &'a Value,
    file: File,
    verb: Option<String>,
    fixtures: &'a [Fixture],
}

fn set_at(file: File, pointer: String, value: Value) -> PackEdit {
    PackEdit::Set {
        file,
        pointer,
        value,
    }
}

/// Edits 0 to 4 of [`gen_edit`]: a field dropped, retyped or made weird, the wrap's bin and
/// argv.
fn field_edit(src: &mut impl Source, arm: usize, d: Drawn) -> PackEdit {
    let Drawn {
        surface,
        policy,
        file,
        ..
    } = d;
    match arm {
        // dropped field
        0 => {
            let doc = if file == File::Surface {
                surface
            } else {
                policy
            };
            match pick_pointer(src, doc, |_, _| true) {
                None => PackEdit::Delete { file },
                Some((pointer, _)) => PackEdit::Remove { file, pointer },
            }
        }
        // retyped field
        1 => {
            let doc = if file == File::Surface {
                surface
            } else {
                policy
            };
            let Some((p, old)) = pick_pointer(src, doc, |_, _| true) else {
                return PackEdit::Delete { file };
            };
            set_at(file, p, retype(src, old))
        }
        // unicode / huge / weird string into a string field
        2 => {
            let doc = if file == File::Surface {
                surface
            } else {
                policy
            };
            let Some((p, _)) = pick_pointer(src, doc, |_, v| v.is_string()) else {
                return PackEdit::Skill(Some(weird_string(src)));
            };
            set_at(file, p, Value::String(weird_string(src)))
        }
        // path traversal and friends in the wrap bin
        3 => set_at(
            File::Surface,
            "/wrap/bin".into(),
            json!(src.pick(BINS).to_string()),
        ),
        // argv template element
        4 => {
            let argv =
                |p: &str, _: &Value| p.starts_with("/wrap/commands/") && p.contains("/argv/");
            let n = count_pointers(surface, argv);
            if n == 0 {
                return set_at(File::Surface, "/wrap/pass_through".into(), json!(true));
            }
            let append = src.chance(30);
            let (p, _) = nth_pointer(surface, argv, src.below(n)).unwrap_or_default();
            let p = if append {
                format!("{}/-", &p[..p.rfind('/').unwrap_or(0)])
            } else {
                p
            };
            set_at(File::Surface, p, json!(src.pick(TEMPLATES).to_string()))
        }
        _ => unreachable!("field edits are 0 to 4"),
    }
}

/// Edits 5 to 10 of [`gen_edit`]: a Policy row flipped, missing or given another land, a verb
/// key twice.
fn row_edit(src: &mut impl Source, arm: usize, d: Drawn) -> PackEdit {
    let Drawn {
        surface,
        policy,
        verb,
        ..
    } = d;
    match arm {
        // flipped operation
        5 => match verb {
            Some(v) => {
                let now = policy["verbs"][&v]["operation"].as_str().unwrap_or("read");
                let to = match src.below(6) {
                    0 => json!("admin"),
                    1 => json!("READ"),
                    _ if now == "read" => json!("write"),
                    _ => json!("read"),
                };
                set_at(File::Policy, format!("/verbs/{v}/operation"), to)
            }
            None => PackEdit::Delete { file: File::Policy },
        },
        // flipped confirm
        6 => match verb {
            Some(v) => {
                let now = policy["verbs"][&v]["confirm"].as_bool().unwrap_or(false);
                let to = if src.chance(80) {
                    json!(!now)
                } else {
                    json!("true")
                };
                set_at(File::Policy, format!("/verbs/{v}/confirm"), to)
            }
            None => PackEdit::Delete { file: File::Policy },
        },
        // missing Policy row
        7 => {
            let triggers: Vec<String> = policy["triggers"]
                .as_object()
                .map(|m| m.keys().map(|t| format!("/triggers/{t}")).collect())
                .unwrap_or_default();
            match (verb, triggers.is_empty() || src.chance(70)) {
                (Some(v), true) => PackEdit::Remove {
                    file: File::Policy,
                    pointer: format!("/verbs/{v}"),
                },
                _ if !triggers.is_empty() => PackEdit::Remove {
                    file: File::Policy,
                    pointer: src.pick(&triggers).clone(),
                },
                _ => PackEdit::Delete { file: File::Policy },
            }
        }
        // lands
        8 => match verb {
            Some(v) => set_at(
                File::Policy,
                format!("/verbs/{v}/privacy/land"),
                json!(src
                    .pick(&["brain", "local", "cloud", "Brain", "", "mothership"])
                    .to_string()),
            ),
            None => PackEdit::Delete { file: File::Policy },
        },
        // duplicate verb key: an array entry
        9 => {
            let cmds = surface["commands"].as_array().cloned().unwrap_or_default();
            if cmds.is_empty() {
                return PackEdit::Delete {
                    file: File::Surface,
                };
            }
            let mut c = src.pick(&cmds).clone();
            if let (true, Some(m)) = (src.chance(50), c.as_object_mut()) {
                m.insert("summary".into(), json!("the twin"));
            }
            set_at(File::Surface, "/commands/-".into(), c)
        }
        // duplicate verb key: a JSON object key (the first of two; serde_json keeps the last)
        10 => match verb {
            Some(v) => {
                let mut row = policy["verbs"][&v].clone();
                if let Some(m) = row.as_object_mut() {
                    let op = if m.get("operation") == Some(&json!("write")) {
                        "read"
                    } else {
                        "write"
                    };
                    let confirm = m.get("confirm").and_then(Value::as_bool).unwrap_or(false);
                    m.insert("operation".into(), json!(op));
                    m.insert("confirm".into(), json!(!confirm));
                }
                PackEdit::DuplicateKey {
                    file: File::Policy,
                    pointer: "/verbs".into(),
                    key: v,
                    value: row,
                }
            }
            None => PackEdit::Delete { file: File::Policy },
        },
        _ => unreachable!("row edits are 5 to 10"),
    }
}

/// Edits 11 and up of [`gen_edit`]: a file's bytes broken, the Skill, the pack's shape (public,
/// binding, Sense, version, wrap, pack_id, extensions, args).
fn shape_edit(src: &mut impl Source, arm: usize, d: Drawn) -> PackEdit {
    let Drawn {
        surface,
        file,
        fixtures,
        ..
    } = d;
    match arm {
        // trailing garbage
        11 => PackEdit::Trailing {
            file,
            text: src
                .pick(&[
                    "}",
                    "\n{}",
                    " garbage",
                    ",",
                    "]",
                    "\n// comment",
                    "\u{0}",
                    "{\"pack_id\": \"x\"}",
                ])
                .to_string(),
        },
        // truncated
        12 => PackEdit::Truncate {
            file,
            percent: (src.below(99) + 1) as u8,
        },
        // the Skill
        13 => PackEdit::Skill(match src.below(4) {
            0 => None,
            1 => Some(String::new()),
            2 => Some(" \n\t\n".into()),
            _ => Some(weird_string(src)),
        }),
        // public / binding
        14 => match src.below(4) {
            0 => set_at(
                File::Surface,
                "/public".into(),
                json!(!surface["public"].as_bool().unwrap_or(false)),
            ),
            1 => PackEdit::Remove {
                file: File::Surface,
                pointer: "/binding".into(),
            },
            2 => set_at(
                File::Surface,
                "/binding".into(),
                json!({"mode": "mothership", "hub": "h"}),
            ),
            _ => set_at(
                File::Surface,
                "/binding/mode".into(),
                json!(src
                    .pick(&["user", "local", "mothership", "connector", ""])
                    .to_string()),
            ),
        },
        // Sense declarations
        15 => match src.below(3) {
            0 => set_at(
                File::Surface,
                "/sense".into(),
                json!({"triggers": ["fuzz.event"]}),
            ),
            1 => set_at(File::Policy, "/triggers".into(), json!({"fuzz.event": {}})),
            _ => PackEdit::Remove {
                file: File::Surface,
                pointer: "/sense".into(),
            },
        },
        // version
        16 => set_at(
            File::Surface,
            "/hcp".into(),
            src.pick(&[
                json!("2.0"),
                json!("1.9"),
                json!(1.0),
                json!("1"),
                json!("1.0 "),
            ])
            .clone(),
        ),
        // wrap shape
        17 => match src.below(4) {
            0 => set_at(File::Surface, "/wrap/inproc".into(), json!("echo")),
            1 => PackEdit::Remove {
                file: File::Surface,
                pointer: "/wrap/commands".into(),
            },
            2 => set_at(
                File::Surface,
                "/wrap/pass_through".into(),
                json!(src.chance(50)),
            ),
            _ => set_at(File::Surface, "/wrap/inproc".into(), json!("shell")),
        },
        // pack_id: another fixture's (a duplicate install) or a weird one
        18 => {
            let id = if src.chance(60) && !fixtures.is_empty() {
                json!(src.pick(fixtures).pack_id().to_string())
            } else {
                json!(weird_string(src))
            };
            set_at(File::Surface, "/pack_id".into(), id)
        }
        // another adapter: an in-process handler the runtime may not know
        21 => {
            let mut wrap = surface["wrap"].clone();
            if let Some(m) = wrap.as_object_mut() {
                m.remove("bin");
                let h = src.pick(&["shell", "Echo", "echo ", "exec", "../echo", "echo"]);
                m.insert("inproc".into(), json!(h.to_string()));
            }
            set_at(File::Surface, "/wrap".into(), wrap)
        }
        // an unknown field (a protocol extension)
        19 => set_at(
            file,
            format!(
                "/{}",
                src.pick(&["connector", "x-extra", "grants", "capabilities"])
            ),
            json!({}),
        ),
        // a new required arg
        _ => {
            let n = surface["commands"].as_array().map_or(0, Vec::len);
            set_at(
                File::Surface,
                format!("/commands/{}/args", src.below(n.max(1))),
                json!({"extra": {"type": "string", "required": true}}),
            )
        }
    }
}

/// 1 to `max` edits, each applied before the next is chosen.
pub fn gen_edits(
    src: &mut impl Source,
    f: &Fixture,
    max: usize,
    fixtures: &[Fixture],
) -> Vec<PackEdit> {
    let mut state = PackState::of(f);
    let mut edits = Vec::new();
    for _ in 0..1 + src.below(max.max(1)) {
        let e = gen_edit(src, &state, fixtures);
        state.apply(&e);
        edits.push(e);
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::Rng;

    #[test]
    fn picked_pointers_are_the_listed_ones() {
        let doc = json!({"a/b": [{"c": "s"}, 2], "~": {}, "d": "x"});
        let all = pointers(&doc);
        for (i, want) in all.iter().enumerate() {
            let (p, v) = nth_pointer(&doc, |_, _| true, i).unwrap();
            assert_eq!(&p, want);
            assert_eq!(Some(v), doc.pointer(&p));
        }
        assert!(nth_pointer(&doc, |_, _| true, all.len()).is_none());
        assert_eq!(count_pointers(&doc, |_, v| v.is_string()), 2);
        assert_eq!(nth_pointer(&doc, |_, v| v.is_string(), 1).unwrap().0, "/d");
    }

    #[test]
    fn pointers_in_document_order() {
        let doc = json!({"a/b": [{"c": 1}, 2], "~": {}, "d": "x"});
        assert_eq!(
            pointers(&doc),
            ["/a~1b", "/a~1b/0", "/a~1b/0/c", "/a~1b/1", "/~0", "/d"]
        );
    }

    #[test]
    fn fixtures_are_embedded_and_install() {
        let fx = embedded_fixtures();
        assert_eq!(fx.len(), 6);
        for f in &fx {
            let files = PackState::of(f).files(&f.name);
            assert!(
                crate::suites::hcp::pack::install(&files).is_ok(),
                "{}",
                f.name
            );
        }
    }

    #[test]
    fn duplicate_key_text_parses_to_the_last_value() {
        let f = &embedded_fixtures()[0];
        let e = PackEdit::DuplicateKey {
            file: File::Policy,
            pointer: "/verbs".into(),
            key: "balance".into(),
            value: json!({"operation": "write", "privacy": {"land": "local"}}),
        };
        let s = PackState::with(f, &[e]);
        let FileState::Text(t) = &s.policy else {
            panic!("text")
        };
        assert_eq!(t.matches("\"balance\"").count(), 2);
        let v: Value = serde_json::from_str(t).unwrap();
        assert_eq!(v, f.policy);
    }

    #[test]
    fn patches_replay_like_the_case_runner() {
        let fx = embedded_fixtures();
        let mut rng = Rng::new(3);
        let mut patched = 0;
        for _ in 0..300 {
            let f = rng.pick(&fx).clone();
            let edits = gen_edits(&mut rng, &f, 3, &fx);
            let state = PackState::with(&f, &edits);
            let inline = state.inline(&f, &edits, None);
            for (file, map) in &inline.patch {
                patched += 1;
                let mut doc = if file == SURFACE {
                    f.surface.clone()
                } else {
                    f.policy.clone()
                };
                for (p, v) in map.as_object().unwrap() {
                    set(&mut doc, p, (!v.is_null()).then(|| v.clone())).unwrap();
                }
                let want = if file == SURFACE {
                    state.json(File::Surface)
                } else {
                    state.json(File::Policy)
                };
                assert_eq!(Some(&doc), want);
            }
        }
        assert!(patched > 10);
    }
}
