//! `hcpspec site`: a static compatibility site from many results (several implementations,
//! several versions of each): an overview matrix, a page per implementation with its history, a
//! page per ledger sentence, shields.io badges and a JSON API of the same data
//! (`vectors/schemas/site-api.schema.json`). Every text from a result is untrusted: results are
//! read capped and contained ([`super::read`]), shown through [`esc`], and every file name made
//! from a name goes through [`ident`] (no separator, no `..`, no leading dot).

use super::html::{cell, esc, STYLE};
use super::{state, Mark, Report, State, Summary};
use crate::error::BadInput;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The `$id` of the API's schema (`vectors/schemas/site-api.schema.json`).
pub const API_SCHEMA: &str = "https://hcpspec.dev/schemas/site-api.schema.json";
/// The largest registry file read, in bytes.
pub const MAX_REGISTRY: u64 = 1 << 20;
/// The most results one site is built from (each up to `input::MAX_RESULT`).
pub const MAX_RESULTS: usize = 512;
/// The longest name or version shown, in characters (a longer one is cut).
pub const MAX_NAME: usize = 128;

/// The registry file: the implementations a site shows and where each one's results are.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// The site's heading.
    #[serde(default)]
    pub title: Option<String>,
    pub implementations: Vec<Listed>,
}

/// One implementation of the registry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listed {
    /// What the site calls it (its page, badges and API file are named from it).
    pub name: String,
    /// Which runs of its results are its own: the run's name as every rendering gives it (its
    /// `--name`, else the name it answered to `initialize`, else its adapter spec). Default: `name`.
    #[serde(default)]
    pub runtime: Option<String>,
    /// Its home page (shown as a link only when it is `https://`).
    #[serde(default)]
    pub homepage: Option<String>,
    /// Its results, oldest first, as local paths relative to the registry file.
    pub results: Vec<String>,
}

/// An implementation as the site shows it: its runs, oldest first (the last is its current one).
#[derive(Debug, Clone)]
pub struct Implementation {
    pub id: String,
    pub name: String,
    pub homepage: Option<String>,
    pub runs: Vec<Run>,
}

/// One run of one version of an implementation: its suites' summaries and case states.
#[derive(Debug, Clone)]
pub struct Run {
    /// The run's name and version as recorded (`--name`, else `initialize`'s answer).
    pub said: String,
    pub version: String,
    pub hcpspec_version: String,
    /// The result file it came from, as given.
    pub source: String,
    pub suites: BTreeMap<String, Judged>,
}

/// One suite of a run.
#[derive(Debug, Clone)]
pub struct Judged {
    pub summary: Summary,
    /// Every case's state by its full name.
    pub cases: BTreeMap<String, State>,
}

/// A ledger sentence and the cases that prove it (`suites::ledger::Row`, as the CLI reads it).
#[derive(Debug, Clone)]
pub struct Sentence {
    pub suite: String,
    pub ledger: String,
    pub number: u32,
    pub text: String,
    /// Its ledger state (`covered`, `partly` …).
    pub state: String,
    pub cases: Vec<String>,
}

/// A name made safe for a file name and an id: ASCII letters, digits, `.`, `_`, `-` (anything
/// else `_`), at most 64 characters, never empty, never starting or ending with `.`, never
/// holding `..` (so no file name made from it, `ID.html`, holds one either).
pub fn ident(name: &str) -> String {
    let mut id = crate::snapshot::runtime_dir(name);
    while id.contains("..") {
        id = id.replace("..", "_.");
    }
    if id.ends_with('.') {
        id.pop();
        id.push('_');
    }
    id
}

/// A text from a result, one line, cut at [`MAX_NAME`] characters.
fn short(s: &str) -> String {
    let s: String = s.chars().take(MAX_NAME).collect();
    super::printable(&s, false)
}

/// Read a registry and every result it lists (paths relative to the registry's folder).
pub fn load(registry: &Path) -> Result<(Option<String>, Vec<Implementation>), BadInput> {
    let shown = super::printable(&registry.display().to_string(), false);
    let text =
        crate::input::read_capped(registry, MAX_REGISTRY).map_err(|e| format!("{shown}: {e}"))?;
    let reg: Registry = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{shown}: line {} column {}: {}",
            e.line(),
            e.column(),
            super::printable(&e.to_string(), false)
        )
    })?;
    let base = registry.parent().unwrap_or(Path::new("."));
    let count: usize = reg.implementations.iter().map(|l| l.results.len()).sum();
    if count > MAX_RESULTS {
        return Err(BadInput(format!(
            "{shown}: {count} results is over the cap of {MAX_RESULTS}"
        )));
    }
    let mut out = vec![];
    for l in &reg.implementations {
        let mut results = vec![];
        for r in &l.results {
            if r.contains("://") {
                return Err(BadInput(format!(
                    "{shown}: {}: a URL; the site reads local files only: fetch results first (docs/publishing.md)",
                    super::printable(r, false)
                )));
            }
            let path = base.join(r);
            results.push((r.clone(), super::read(&path)?));
        }
        let runtime = l.runtime.clone().unwrap_or_else(|| l.name.clone());
        let mut imp = Implementation {
            id: String::new(),
            name: short(&l.name),
            homepage: l.homepage.as_deref().map(short),
            runs: runs_of(&results, &runtime),
        };
        imp.id = unique(&out, &imp.name);
        out.push(imp);
    }
    Ok((reg.title.map(|t| short(&t)), out))
}

/// Add the implementations of results given as they are: one per run name not listed yet (by
/// the registry), in order of first appearance, each result's runs of that name a run of its
/// history.
pub fn add_results(
    implementations: &mut Vec<Implementation>,
    results: &[(String, Report)],
) -> Result<(), BadInput> {
    if results.len() > MAX_RESULTS {
        return Err(BadInput(format!(
            "{} results is over the cap of {MAX_RESULTS}",
            results.len()
        )));
    }
    let mut names: Vec<String> = vec![];
    for (_, r) in results {
        for s in &r.suites {
            for run in &s.runtimes {
                let n = run.name();
                if !names.contains(&n) && !implementations.iter().any(|i| i.name == short(&n)) {
                    names.push(n);
                }
            }
        }
    }
    for n in names {
        let mut imp = Implementation {
            id: String::new(),
            name: short(&n),
            homepage: None,
            runs: runs_of(results, &n),
        };
        imp.id = unique(implementations, &imp.name);
        implementations.push(imp);
    }
    Ok(())
}

/// An id no earlier implementation has (`name`, `name-2` …).
fn unique(taken: &[Implementation], name: &str) -> String {
    let base = ident(name);
    let mut id = base.clone();
    let mut n = 1;
    while taken.iter().any(|i| i.id.eq_ignore_ascii_case(&id)) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

/// The version a run stated to `initialize`, if any.
fn stated(run: &super::RuntimeRun) -> Option<String> {
    run.info
        .pointer("/runtime/version")
        .and_then(Value::as_str)
        .map(short)
}

/// The runs named `runtime` in each result, one [`Run`] per result and stated version; a run
/// that stated none (a harness's reference states no version) joins the result's first stated one.
fn runs_of(results: &[(String, Report)], runtime: &str) -> Vec<Run> {
    let mut out = vec![];
    for (source, report) in results {
        let ours = || {
            report.suites.iter().flat_map(|result| {
                result
                    .runtimes
                    .iter()
                    .filter(|r| r.name() == runtime)
                    .map(move |r| (result, r))
            })
        };
        let mut versions: Vec<String> = vec![];
        for v in ours().filter_map(|(_, r)| stated(r)) {
            if !versions.contains(&v) {
                versions.push(v);
            }
        }
        let mut runs: Vec<Run> = vec![];
        for (result, run) in ours() {
            let version = stated(run)
                .or_else(|| versions.first().cloned())
                .unwrap_or_else(|| "-".into());
            let said = run.label.clone().unwrap_or_else(|| {
                let name = run.info.pointer("/runtime/name").and_then(Value::as_str);
                name.unwrap_or(&run.runtime).to_string()
            });
            let at = match runs.iter().position(|r| r.version == version) {
                Some(i) => i,
                None => {
                    runs.push(Run {
                        said: short(&said),
                        version,
                        hcpspec_version: short(&report.hcpspec_version),
                        source: short(source),
                        suites: BTreeMap::new(),
                    });
                    runs.len() - 1
                }
            };
            runs[at].suites.insert(
                short(&result.suite),
                Judged {
                    summary: Summary::of(&run.cases, result.rules()),
                    cases: run
                        .cases
                        .iter()
                        .map(|c| (c.name.clone(), state(c)))
                        .collect(),
                },
            );
        }
        out.extend(runs);
    }
    out
}

/// Every file of the site, by its path under the output folder.
pub fn render(
    title: Option<&str>,
    implementations: &[Implementation],
    sentences: &[Sentence],
) -> Vec<(PathBuf, String)> {
    let title = title.unwrap_or("hcpspec compatibility");
    let suites: BTreeSet<&String> = implementations
        .iter()
        .filter_map(|i| i.runs.last())
        .flat_map(|r| r.suites.keys())
        .collect();
    let suites: Vec<&String> = suites.into_iter().collect();
    let sentences: Vec<(String, &Sentence)> = sentence_ids(sentences);
    let mut files = vec![(
        PathBuf::from("index.html"),
        overview(title, implementations, &suites),
    )];
    for imp in implementations {
        files.push((
            PathBuf::from(format!("implementations/{}.html", imp.id)),
            history(title, imp),
        ));
        files.push((
            PathBuf::from(format!("api/implementations/{}.json", imp.id)),
            pretty(&api_implementation(imp)),
        ));
        for (suite, j) in imp.runs.last().map(|r| &r.suites).into_iter().flatten() {
            files.push((
                PathBuf::from(format!("badges/{}/{}.json", imp.id, ident(suite))),
                badge(&imp.name, suite, &j.summary),
            ));
        }
    }
    files.push((
        PathBuf::from("api/implementations.json"),
        pretty(&api_index(implementations)),
    ));
    files.push((
        PathBuf::from("sentences/index.html"),
        sentence_index(title, implementations, &sentences),
    ));
    for (id, s) in &sentences {
        files.push((
            PathBuf::from(format!("sentences/{id}.html")),
            sentence_page(title, implementations, s),
        ));
    }
    files
}

/// Write the site's files under `out` (made if missing).
pub fn write(out: &Path, files: &[(PathBuf, String)]) -> Result<(), super::WriteError> {
    for (rel, text) in files {
        let p = out.join(rel);
        let io = |source| super::WriteError::Io {
            path: p.clone(),
            source,
        };
        super::unlinked(out, &p).map_err(io)?;
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&p, text).map_err(io)?;
    }
    Ok(())
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// Each sentence with cases and its page's id (`contract-COVERAGE-12`), unique.
fn sentence_ids(sentences: &[Sentence]) -> Vec<(String, &Sentence)> {
    let mut seen = BTreeSet::new();
    let mut out = vec![];
    for s in sentences.iter().filter(|s| !s.cases.is_empty()) {
        let ledger = s.ledger.trim_start_matches("../").trim_end_matches(".md");
        let base = ident(&format!("{}-{}-{}", s.suite, ledger, s.number));
        let mut id = base.clone();
        let mut n = 1;
        while !seen.insert(id.to_ascii_lowercase()) {
            n += 1;
            id = format!("{base}-{n}");
        }
        out.push((id, s));
    }
    out
}

/// The page's head and heading, with a way home from `depth` folders down.
fn head(h: &mut String, title: &str, page: &str, depth: usize) {
    let up = "../".repeat(depth);
    let _ = write!(
        h,
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{} · {}</title><style>{STYLE}</style></head><body>\
         <p><a href=\"{up}index.html\">Overview</a> · <a href=\"{up}sentences/index.html\">Sentences</a> · <a href=\"{up}api/implementations.json\">JSON API</a></p><h1>{}</h1>",
        esc(page),
        esc(title),
        esc(page)
    );
}

/// The mark every rendering gives a cell, shown after the count so a cell reads without its
/// color, in the terminal's symbols (a page font has them; not every one has emoji): ✗ the run
/// fails here, – nothing ran, ⚠ something did not pass, ✓ all passed.
fn mark(s: &Summary) -> String {
    let m = match s.mark() {
        Mark::Fails => "✗",
        Mark::NoneRan => "–",
        Mark::Warn => "⚠",
        Mark::Ok => "✓",
    };
    format!(" <span class=mark>{m}</span>")
}

/// The latest run's summary of `suite`, or an empty one (a cell marked as nothing ran).
fn summary_of<'a>(run: Option<&'a Run>, suite: &str) -> Option<&'a Summary> {
    run.and_then(|r| r.suites.get(suite)).map(|j| &j.summary)
}

fn overview(title: &str, implementations: &[Implementation], suites: &[&String]) -> String {
    let mut h = String::new();
    head(&mut h, title, title, 0);
    let _ = write!(
        h,
        "<p>{} implementation(s), each at its latest result; its page has its history.</p><table><tr><th>implementation</th><th>version</th>",
        implementations.len()
    );
    for s in suites {
        let _ = write!(h, "<th>{}</th>", esc(s));
    }
    h += "</tr>";
    for imp in implementations {
        let last = imp.runs.last();
        let _ = write!(
            h,
            "<tr data-implementation=\"{0}\"><th><a href=\"implementations/{0}.html\">{1}</a></th><td>{2}</td>",
            esc(&imp.id),
            esc(&imp.name),
            esc(last.map_or("-", |r| &r.version))
        );
        for s in suites {
            match summary_of(last, s) {
                Some(sum) => cell(
                    &mut h,
                    sum,
                    &format!(" data-suite=\"{}\"", esc(s)),
                    &mark(sum),
                ),
                None => h += "<td class=none>–</td>",
            }
        }
        h += "</tr>";
    }
    h += "</table><p><small>Each cell: cases passed of all cases, the other counts in words, marked as every hcpspec rendering marks it. Badges: <code>badges/IMPLEMENTATION/SUITE.json</code> (shields.io endpoint).</small></p></body></html>\n";
    h
}

fn history(title: &str, imp: &Implementation) -> String {
    let mut h = String::new();
    head(&mut h, title, &imp.name, 1);
    if let Some(home) = imp.homepage.as_deref() {
        if home.starts_with("https://") {
            let _ = write!(h, "<p><a href=\"{0}\">{0}</a></p>", esc(home));
        } else {
            let _ = write!(h, "<p>{}</p>", esc(home));
        }
    }
    let suites: BTreeSet<&String> = imp.runs.iter().flat_map(|r| r.suites.keys()).collect();
    let _ = write!(
        h,
        "<p>{} run(s), oldest first · <a href=\"../api/implementations/{}.json\">as JSON</a></p><h2>History</h2><table><tr><th>version</th><th>as it named itself</th><th>hcpspec</th><th>result</th>",
        imp.runs.len(),
        esc(&imp.id)
    );
    for s in &suites {
        let _ = write!(h, "<th>{}</th>", esc(s));
    }
    h += "</tr>";
    for r in &imp.runs {
        let _ = write!(
            h,
            "<tr data-version=\"{0}\"><td>{0}</td><td>{1}</td><td>{2}</td><td><code>{3}</code></td>",
            esc(&r.version),
            esc(&r.said),
            esc(&r.hcpspec_version),
            esc(&r.source)
        );
        for s in &suites {
            match r.suites.get(*s) {
                Some(j) => cell(&mut h, &j.summary, "", &mark(&j.summary)),
                None => h += "<td class=none>–</td>",
            }
        }
        h += "</tr>";
    }
    h += "</table><h2>Badges</h2><ul>";
    for s in imp
        .runs
        .last()
        .map(|r| r.suites.keys())
        .into_iter()
        .flatten()
    {
        let _ = write!(
            h,
            "<li><a href=\"../badges/{0}/{1}.json\">{2}</a></li>",
            esc(&imp.id),
            esc(&ident(s)),
            esc(s)
        );
    }
    h += "</ul></body></html>\n";
    h
}

/// How an implementation's latest run does on a sentence's cases: passed, of how many, and the
/// mark (`ok` all passed, `bad` one failed, `warn` some did not pass or did not run, `none` none ran).
fn on_sentence(
    run: Option<&Run>,
    s: &Sentence,
) -> (usize, &'static str, Vec<(String, &'static str)>) {
    let mut passed = 0;
    let mut bad = false;
    let mut states = vec![];
    for c in &s.cases {
        let st = run.and_then(|r| r.suites.values().find_map(|j| j.cases.get(c)));
        passed += usize::from(st == Some(&State::Pass));
        bad |= matches!(st, Some(State::Fail | State::Error | State::Unimplemented));
        states.push((c.clone(), st.map_or("not run", |s| s.label())));
    }
    let ran = states
        .iter()
        .filter(|(_, l)| *l != "not run" && *l != "skip")
        .count();
    let mark = if bad {
        "bad"
    } else if passed == s.cases.len() {
        "ok"
    } else if ran == 0 {
        "none"
    } else {
        "warn"
    };
    (passed, mark, states)
}

fn sentence_index(
    title: &str,
    implementations: &[Implementation],
    sentences: &[(String, &Sentence)],
) -> String {
    let mut h = String::new();
    head(&mut h, title, "Sentences", 1);
    h += "<p>Each ledger sentence of the spec with the cases that prove it, and how many implementations pass all of them (at their latest result).</p><table><tr><th>sentence</th><th>state</th><th>text</th><th>implementations passing</th></tr>";
    for (id, s) in sentences {
        let passing = implementations
            .iter()
            .filter(|i| on_sentence(i.runs.last(), s).1 == "ok")
            .count();
        let _ = write!(
            h,
            "<tr><td><a href=\"{}.html\">{} {} {}</a></td><td>{}</td><td>{}</td><td class=n>{passing}/{}</td></tr>",
            esc(id),
            esc(&s.suite),
            esc(s.ledger.trim_start_matches("../")),
            s.number,
            esc(&s.state),
            esc(&s.text),
            implementations.len()
        );
    }
    h += "</table></body></html>\n";
    h
}

fn sentence_page(title: &str, implementations: &[Implementation], s: &Sentence) -> String {
    let mut h = String::new();
    let name = format!(
        "{} {} row {}",
        s.suite,
        s.ledger.trim_start_matches("../"),
        s.number
    );
    head(&mut h, title, &name, 1);
    let _ = write!(
        h,
        "<blockquote>{}</blockquote><p>state: {} · proven by {} case(s)</p><table><tr><th>implementation</th>",
        esc(&s.text),
        esc(&s.state),
        s.cases.len()
    );
    // A column per implementation, a row per case: case names are long, implementations few.
    let judged: Vec<_> = implementations
        .iter()
        .map(|i| on_sentence(i.runs.last(), s))
        .collect();
    for imp in implementations {
        let _ = write!(
            h,
            "<th><a href=\"../implementations/{}.html\">{}</a> <small>{}</small></th>",
            esc(&imp.id),
            esc(&imp.name),
            esc(imp.runs.last().map_or("-", |r| &r.version))
        );
    }
    h += "</tr><tr><th>passed</th>";
    for (passed, mark, _) in &judged {
        let _ = write!(
            h,
            "<td class={mark}><b class=n>{passed}/{}</b></td>",
            s.cases.len()
        );
    }
    h += "</tr>";
    for (n, c) in s.cases.iter().enumerate() {
        let _ = write!(h, "<tr><td><code>{}</code></td>", esc(c));
        for (_, _, states) in &judged {
            let label = states[n].1;
            let _ = write!(h, "<td class=\"{label}\">{label}</td>");
        }
        h += "</tr>";
    }
    h += "</table></body></html>\n";
    h
}

/// A shields.io endpoint badge, colored as [`super::badge`] colors it.
fn badge(name: &str, suite: &str, s: &Summary) -> String {
    let color = super::badge::color(s);
    pretty(&json!({
        "schemaVersion": 1,
        "label": format!("{suite} {name}"),
        "message": format!("{}/{} pass", s.pass, s.total()),
        "color": color,
    }))
}

/// A suite's counts as the API gives them: every state's count, `total`, `must_fail`.
fn counts(s: &Summary) -> Value {
    let mut m = serde_json::Map::new();
    for st in State::ALL {
        m.insert(st.label().into(), json!(st.count(s)));
    }
    m.insert("total".into(), json!(s.total()));
    m.insert("must_fail".into(), json!(s.must_fail));
    Value::Object(m)
}

fn api_run(r: &Run) -> Value {
    let suites: serde_json::Map<String, Value> = r
        .suites
        .iter()
        .map(|(k, j)| (k.clone(), counts(&j.summary)))
        .collect();
    json!({
        "version": r.version,
        "name": r.said,
        "hcpspec_version": r.hcpspec_version,
        "source": r.source,
        "suites": suites,
    })
}

fn api_implementation(imp: &Implementation) -> Value {
    json!({
        "$schema": API_SCHEMA,
        "id": imp.id,
        "name": imp.name,
        "homepage": imp.homepage,
        "runs": imp.runs.iter().map(api_run).collect::<Vec<_>>(),
    })
}

fn api_index(implementations: &[Implementation]) -> Value {
    let list: Vec<Value> = implementations
        .iter()
        .map(|i| {
            json!({
                "id": i.id,
                "name": i.name,
                "homepage": i.homepage,
                "page": format!("implementations/{}.html", i.id),
                "api": format!("api/implementations/{}.json", i.id),
                "latest": i.runs.last().map(api_run),
            })
        })
        .collect();
    json!({
        "$schema": API_SCHEMA,
        "hcpspec_version": env!("CARGO_PKG_VERSION"),
        "implementations": list,
    })
}
