//! Cases: one JSON file each under `vectors/<suite>/<NN-section>/<id>.json`, validated against
//! `vectors/schemas/case.schema.json`. Loading never panics: a malformed case is one error
//! naming the file and the JSON pointer of the field.

pub mod matcher;
pub mod patch;
pub mod paths;
pub mod template;

use crate::schema;
use matcher::Denials;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with a vector file: `file:pointer: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct CaseError {
    pub file: PathBuf,
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}",
            self.file.display(),
            self.pointer,
            self.message
        )
    }
}

fn err(file: &Path, pointer: &str, message: impl Into<String>) -> CaseError {
    CaseError {
        file: file.to_path_buf(),
        pointer: pointer.into(),
        message: message.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Level {
    MUST,
    SHOULD,
    MAY,
    /// hcpspec's recommended behaviour where the spec leaves the choice open: reported apart,
    /// never failing a run.
    PROFILE,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub id: String,
    pub title: String,
    pub section: String,
    pub level: Level,
    pub spec: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumption: Option<String>,
    /// Optional features of the contract the case needs (`sense`, row 10 "Route Sense
    /// (optional)"); a runtime whose `initialize` does not claim one skips the case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// The mutants this case exists to kill, when none of them is of the case's own section;
    /// the self-check verifies that each of them fails it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub killed_by: Vec<String>,
    /// The freedom classes (`order`, `words`, `extra`, `shapes`, `preconditions`, `time`) the spec
    /// fixes for this case, each with the sentence that fixes it: the freedom variants play the
    /// case without them, and say so.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fixed: BTreeMap<String, String>,
    /// What the case's suite drives it with: every member that is not the header above
    /// (`setup` and `steps` in the contract suite, `scenario`, `script`, `host` in the others),
    /// read by the suite's own code.
    #[serde(flatten)]
    pub body: serde_json::Map<String, Value>,
    /// `contract`, from the directory under `vectors/`.
    #[serde(skip)]
    pub suite: String,
    /// `03-authorize`, the case's directory.
    #[serde(skip)]
    pub group: String,
    #[serde(skip)]
    pub file: PathBuf,
    /// The body in its suite's own types, parsed once at load ([`Format::parse`]).
    #[serde(skip)]
    pub parsed: Parsed,
    /// The file's text as it was read ([`Source`]).
    #[serde(skip)]
    pub source: Source,
}

/// A case file's text as the loader read it, empty for a case built in memory: a run's
/// `cases_hash` is taken over it, so no file is read again once loaded. It is the file the
/// case was read from, not the case, so it takes no part in a case's equality.
#[derive(Clone, Default)]
pub struct Source(std::sync::Arc<str>);

impl Source {
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Source({} bytes)", self.0.len())
    }
}

impl PartialEq for Source {
    fn eq(&self, _: &Source) -> bool {
        true
    }
}

/// A case's body parsed by its suite at load and kept beside the map, so that no run parses it
/// again; empty for a suite that reads the map, or a case built in memory. It is derived from
/// the body, so it takes no part in a case's equality.
#[derive(Clone, Default)]
pub struct Parsed(Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>);

impl Parsed {
    pub fn new<T: std::any::Any + Send + Sync>(body: T) -> Parsed {
        Parsed(Some(std::sync::Arc::new(body)))
    }

    /// The parsed body, if it is a `T`.
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.as_deref()?.downcast_ref()
    }
}

impl fmt::Debug for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Parsed(..)"
        } else {
            "Parsed(none)"
        })
    }
}

impl PartialEq for Parsed {
    fn eq(&self, _: &Parsed) -> bool {
        true
    }
}

impl Case {
    /// The stable name used by the test harness, filters, expectations and reports:
    /// `contract::03-authorize::write-without-grant`.
    pub fn name(&self) -> String {
        format!("{}::{}::{}", self.suite, self.group, self.id)
    }
}

/// The members of a case file that are [`Case`]'s own fields; every other member is its body.
const HEADER: [&str; 9] = [
    "id",
    "title",
    "section",
    "level",
    "spec",
    "assumption",
    "requires",
    "killed_by",
    "fixed",
];

/// What says who answers for a case, read without reading the case whole: which cases a
/// question needs ([`Keep::Head`]).
#[derive(Debug, Clone, Deserialize)]
pub struct Head {
    pub section: String,
    pub level: Level,
    #[serde(default)]
    pub killed_by: Vec<String>,
}

/// Which of a suite's cases to load ([`load_some`]).
pub enum Keep<'a> {
    All,
    /// By group (the case's folder) and id (its file's stem).
    Named(&'a dyn Fn(&str, &str) -> bool),
    /// By [`Head`]. A file whose head cannot be read is kept: reading it whole says what is
    /// wrong with it.
    Head(&'a dyn Fn(&Head) -> bool),
}

impl Case {
    /// A member of the suite-owned body.
    pub fn member(&self, key: &str) -> Option<&Value> {
        self.body.get(key)
    }
}

/// What the loader asks of the suite a case belongs to: the member its body lives in, the schema
/// it is validated against, and the checks a schema cannot make (matchers, paths).
pub trait Format: Sync {
    /// `steps`, `scenario`, `script`, `host`: the member every case of the suite has.
    fn body(&self) -> &'static str;
    /// The JSON Schema of a whole case file.
    fn schema(&self) -> &'static jsonschema::Validator;
    /// Everything else a case must satisfy, errors as (JSON pointer, message).
    fn check(&self, case: &Case, denials: &Denials) -> Result<(), (String, String)>;
    /// The fixtures a case names exist under `vectors` (nothing by default).
    fn check_fixtures(&self, _case: &Case, _vectors: &Path) -> Result<(), (String, String)> {
        Ok(())
    }
    /// The body in the suite's own types, kept in [`Case::parsed`]; errors as in [`Self::check`].
    /// Called after it. Empty by default: the suite reads the map.
    fn parse(&self, _case: &Case) -> Result<Parsed, (String, String)> {
        Ok(Parsed::default())
    }
}

/// The matchers under `expect` of every step of `steps` (an array member of a body), checked;
/// errors point at `/{at}/{i}/expect…`.
pub fn check_expects(
    steps: Option<&Value>,
    at: &str,
    key: &str,
    denials: &Denials,
) -> Result<(), (String, String)> {
    for (i, step) in steps
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(e) = step.get(key) {
            matcher::validate(e, denials).map_err(|(p, m)| (format!("{at}/{i}/{key}{p}"), m))?;
        }
    }
    Ok(())
}

/// A case whose steps (an array member of a body, at `at`) check something: some step has `key`.
/// A step without it is arrangement, so a case with none would pass whatever it met.
pub fn check_expects_something(
    steps: Option<&Value>,
    at: &str,
    key: &str,
) -> Result<(), (String, String)> {
    let steps = steps
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if steps.iter().any(|s| s.get(key).is_some()) {
        return Ok(());
    }
    Err((
        at.to_string(),
        format!(
            "no step has `{key}`: a step without one is arrangement, so the case checks nothing"
        ),
    ))
}

/// One part of a suite, in the order reports show them: a row of the contract table, say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub id: String,
    pub title: String,
}

/// A suite as data, `vectors/<name>/suite.json`: what it is, what it drives, the spec it cites,
/// its sections, and the embedded runtimes `hcpspec run` drives when no `--runtime` is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteInfo {
    pub name: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// The kind of implementation it certifies (`hcp-runtime` …), and the protocol spoken to it.
    pub drives: String,
    pub protocol: String,
    /// The spec file under `spec/` its cases cite.
    pub spec: String,
    #[serde(default)]
    pub embedded: Vec<String>,
    pub sections: Vec<Section>,
    /// Its ledgers, relative to its folder: the files mapping every sentence of its spec to
    /// the cases that check it, each row proved by its killer (docs/ledgers.md).
    #[serde(default)]
    pub ledgers: Vec<String>,
    /// Its protocol's versions and each older one's frozen requirement set (docs/vectors.md,
    /// "Requirement sets"), read by `run::versions`; none: every case is scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Value>,
}

impl SuiteInfo {
    /// A section's label for tables: "4 Confirm gate", or the title alone for a named section.
    pub fn label(&self, id: &str) -> String {
        let title = self
            .sections
            .iter()
            .find(|s| s.id == id)
            .map_or(id, |s| s.title.as_str());
        section_label(id, title)
    }
}

/// "4 Confirm gate", or just "Must-nots" for the must-not list.
pub fn section_label(section: &str, title: &str) -> String {
    // Numbered sections (`3`, `4b`, `H5`) show their number; named ones (`must-not`) their title.
    if section.contains(|c: char| c.is_ascii_digit()) {
        format!("{section} {title}")
    } else {
        title.to_string()
    }
}

/// The suites under `vectors/`: every folder with a `suite.json`, by name.
pub fn suite_names(vectors: &Path) -> Result<Vec<String>, CaseError> {
    let entries = std::fs::read_dir(vectors)
        .map_err(|e| err(vectors, "", format!("cannot read the vectors folder: {e}")))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join("suite.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// Read `vectors/<name>/suite.json`; its `name` must be its folder's.
pub fn load_suite_info(vectors: &Path, name: &str) -> Result<SuiteInfo, CaseError> {
    let file = vectors.join(name).join("suite.json");
    let text =
        crate::input::read_capped(&file, crate::input::MAX_CASE).map_err(|e| err(&file, "", e))?;
    let suite: SuiteInfo = serde_json::from_str(&text).map_err(|e| {
        err(
            &file,
            "",
            format!("line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    if suite.name != name {
        return Err(err(
            &file,
            "/name",
            format!("`{}` must be the folder's name `{name}`", suite.name),
        ));
    }
    if suite.sections.is_empty() {
        return Err(err(
            &file,
            "/sections",
            "a suite needs at least one section",
        ));
    }
    Ok(suite)
}

/// Load hcpspec's denial classes and lint rule names, `vectors/denials.json`:
/// `{"classes": {NAME: {"meaning": …}}, "rules": {NAME: {"meaning": …}}}`.
pub fn load_denials(vectors: &Path) -> Result<Denials, CaseError> {
    if !vectors.is_dir() {
        return Err(err(
            vectors,
            "",
            "no vectors folder here (give the folder holding denials.json, packs/ and contract/ with --vectors DIR)",
        ));
    }
    let file = vectors.join("denials.json");
    let text =
        crate::input::read_capped(&file, crate::input::MAX_CASE).map_err(|e| err(&file, "", e))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        err(
            &file,
            "",
            format!("line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    let names = |key: &str| {
        let m = v
            .get(key)
            .and_then(Value::as_object)
            .ok_or_else(|| err(&file, &format!("/{key}"), "expected an object"))?;
        m.iter()
            .map(|(name, c)| {
                let meaning = c.get("meaning").and_then(Value::as_str).ok_or_else(|| {
                    err(
                        &file,
                        &format!("/{key}/{name}/meaning"),
                        "expected a string",
                    )
                })?;
                Ok((name.clone(), meaning.to_string()))
            })
            .collect::<Result<_, CaseError>>()
    };
    Ok(Denials {
        classes: names("classes")?,
        rules: names("rules")?,
    })
}

/// Load one case file of a suite in `format` and check it completely: schema, id against the
/// file name, the suite's own checks.
pub fn load_case(
    file: &Path,
    suite: &str,
    format: &dyn Format,
    denials: &Denials,
) -> Result<Case, CaseError> {
    let text =
        crate::input::read_capped(file, crate::input::MAX_CASE).map_err(|e| err(file, "", e))?;
    parse_case(file, &text, suite, format, denials)
}

/// [`load_case`] on a case's text, as if read from `file` (pure: the fuzz targets call it).
pub fn parse_case(
    file: &Path,
    text: &str,
    suite: &str,
    format: &dyn Format,
    denials: &Denials,
) -> Result<Case, CaseError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        err(
            file,
            "",
            format!("line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    if let Some((pointer, message)) = schema::violations(format.schema(), &value)
        .into_iter()
        .next()
    {
        return Err(err(file, &pointer, message));
    }
    // The header alone through serde (`body`'s flatten buffers every member it sees, which cost
    // as much as parsing the file); the rest is the body as it is.
    let Value::Object(mut body) = value else {
        return Err(err(file, "", "a case is a JSON object"));
    };
    let head: serde_json::Map<String, Value> = HEADER
        .iter()
        .filter_map(|k| body.remove_entry(*k))
        .collect();
    let mut case: Case =
        serde_json::from_value(Value::Object(head)).map_err(|e| err(file, "", e.to_string()))?;
    case.body = body;
    case.source = Source(text.into());
    let (group, stem) = group_and_id(file);
    if case.id != stem {
        return Err(err(
            file,
            "/id",
            format!("id `{}` must equal the file name `{stem}`", case.id),
        ));
    }
    let key = format.body();
    if case.member(key).is_none() {
        return Err(err(
            file,
            &format!("/{key}"),
            format!("a case of this suite has `{key}`"),
        ));
    }
    format
        .check(&case, denials)
        .map_err(|(p, m)| err(file, &p, m))?;
    case.parsed = format.parse(&case).map_err(|(p, m)| err(file, &p, m))?;
    case.suite = suite.to_string();
    case.group = group;
    case.file = file.to_path_buf();
    Ok(case)
}

/// A case file's group (its folder's name) and id (its file's stem). Lossy, so that a name that
/// is not UTF-8 is still shown (with U+FFFD), never as "".
pub fn group_and_id(file: &Path) -> (String, String) {
    let name = |p: Option<&std::ffi::OsStr>| {
        p.map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    (
        name(file.parent().and_then(Path::file_name)),
        name(file.file_stem()),
    )
}

/// Every case of a suite in `format`, sorted by name. Fails on the first malformed file: a bad
/// case must be fixed, not silently skipped (a run over a partial suite would be a lie).
pub fn load_suite(
    vectors: &Path,
    info: &SuiteInfo,
    format: &dyn Format,
) -> Result<Vec<Case>, CaseError> {
    load_some(vectors, info, format, &Keep::All)
}

/// The case files of a suite, `vectors/<suite>/<group>/<id>.json`, sorted.
pub fn case_files(vectors: &Path, suite: &str) -> Result<Vec<PathBuf>, CaseError> {
    let root = vectors.join(suite);
    let mut files = Vec::new();
    let groups =
        std::fs::read_dir(&root).map_err(|e| err(&root, "", format!("cannot read suite: {e}")))?;
    for group in groups.flatten().filter(|g| g.path().is_dir()) {
        for f in std::fs::read_dir(group.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if f.path().extension().is_some_and(|x| x == "json") {
                files.push(f.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The cases of a suite that `keep` keeps, each checked as [`load_suite`] checks it: what a
/// question that needs a few cases loads (a trial run alone in its own process). Whether ids
/// are unique across the suite is known only to a whole load.
pub fn load_some(
    vectors: &Path,
    info: &SuiteInfo,
    format: &dyn Format,
    keep: &Keep,
) -> Result<Vec<Case>, CaseError> {
    let suite = info.name.as_str();
    let denials = load_denials(vectors)?;
    let mut files = case_files(vectors, suite)?;
    if let Keep::Named(keep) = keep {
        files.retain(|f| {
            let (group, id) = group_and_id(f);
            keep(&group, &id)
        });
    }
    // A case file (or group) that is a symlink out of the vectors tree is not part of it (and
    // is never read).
    let tree = vectors
        .canonicalize()
        .map_err(|e| err(vectors, "", format!("cannot read: {e}")))?;
    for f in &files {
        if !f.canonicalize().is_ok_and(|real| real.starts_with(&tree)) {
            return Err(err(f, "", "resolves outside the vectors folder"));
        }
    }
    // Each file read once: its head, when `keep` asks, then the whole case.
    let mut cases = Vec::new();
    for f in &files {
        let text =
            crate::input::read_capped(f, crate::input::MAX_CASE).map_err(|e| err(f, "", e))?;
        if let Keep::Head(keep) = keep {
            if serde_json::from_str::<Head>(&text).is_ok_and(|h| !keep(&h)) {
                continue;
            }
        }
        let c = parse_case(f, &text, suite, format, &denials)?;
        format
            .check_fixtures(&c, vectors)
            .map_err(|(p, m)| err(f, &p, m))?;
        cases.push(c);
    }
    let mut seen = BTreeMap::new();
    for c in &cases {
        if !info.sections.iter().any(|s| s.id == c.section) {
            return Err(err(
                &c.file,
                "/section",
                format!(
                    "section `{}` is not one of the suite's ({})",
                    c.section,
                    info.sections
                        .iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if let Some(first) = seen.insert(c.id.as_str(), &c.file) {
            return Err(err(
                &c.file,
                "/id",
                format!("id `{}` is already used by {}", c.id, first.display()),
            ));
        }
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`HEADER`] is every member of a case that is not its body.
    #[test]
    fn the_header_is_every_field_of_a_case() {
        let case = Case {
            id: "i".into(),
            title: "t".into(),
            section: "1".into(),
            level: Level::MUST,
            spec: "s".into(),
            assumption: Some("a".into()),
            requires: vec!["r".into()],
            killed_by: vec!["k".into()],
            fixed: [("order".to_string(), "q".to_string())].into(),
            body: serde_json::Map::new(),
            suite: "x".into(),
            group: "g".into(),
            file: "f".into(),
            parsed: Default::default(),
            source: Default::default(),
        };
        let Value::Object(fields) = serde_json::to_value(&case).unwrap() else {
            panic!("a case serializes to an object");
        };
        let mut fields: Vec<&str> = fields.keys().map(String::as_str).collect();
        let mut header = HEADER.to_vec();
        fields.sort();
        header.sort();
        assert_eq!(fields, header);
    }
}
