//! `hcpspec diff BASE HEAD`: wiring only; the comparison is `hcpspec::report::diff`.

use hcpspec::error::BadInput;
use hcpspec::exit;
use hcpspec::report::diff::{self, Diff, Sentence};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The base result: a result.json, or a folder holding one (a run's --out).
    pub base: PathBuf,
    /// The result to compare with it: a result.json, or a folder holding one.
    pub head: PathBuf,
    /// `text` for a terminal; `markdown` for a pull-request comment; `json`
    /// (vectors/schemas/diff.schema.json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The vectors folder whose ledgers name each case's sentences, instead of the vectors
    /// embedded in this binary.
    #[arg(long, env = "HCPSPEC_VECTORS", value_name = "DIR")]
    pub vectors: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

/// A result as `hcpspec report` reads one: capped, contained, then merged alone (runtimes by
/// name and spec, a case named twice read once or refused).
fn load(path: &Path) -> Result<hcpspec::report::Report, BadInput> {
    let file = if path.is_dir() {
        path.join("result.json")
    } else {
        path.to_path_buf()
    };
    let report = hcpspec::report::read(&file)?;
    let (merged, _) = hcpspec::report::merge(vec![(file, report)])?;
    Ok(merged)
}

/// Each suite's ledger rows, from the vectors: a suite they do not hold has none.
fn ledgers(
    vectors: &Path,
    suites: impl Iterator<Item = String>,
) -> Result<BTreeMap<String, Vec<Sentence>>, BadInput> {
    let mut out = BTreeMap::new();
    for name in suites {
        if out.contains_key(&name) || !vectors.join(&name).join("suite.json").is_file() {
            continue;
        }
        let info = hcpspec::case::load_suite_info(vectors, &name).map_err(|e| e.to_string())?;
        let suite = hcpspec::suites::of(vectors, &info).map_err(|e| e.to_string())?;
        let rows = hcpspec::suites::ledger::read(vectors, &info, &suite.checks())?;
        out.insert(
            name,
            rows.into_iter()
                .map(|r| Sentence {
                    ledger: r.ledger,
                    number: r.number,
                    sentence: r.sentence,
                    cases: r.cases,
                })
                .collect(),
        );
    }
    Ok(out)
}

pub fn diff(a: &DiffArgs) -> Result<i32, BadInput> {
    use std::io::Write;
    let base = load(&a.base)?;
    let head = load(&a.head)?;
    let vectors = crate::cli::vectors(&a.vectors)?;
    let names = base
        .suites
        .iter()
        .chain(&head.suites)
        .map(|s| s.suite.clone());
    let d = Diff::of(&base, &head, &ledgers(&vectors.root, names)?);
    let text = match a.format {
        Format::Text => diff::terminal(&d),
        Format::Markdown => diff::markdown(&d),
        Format::Json => serde_json::to_string_pretty(&d).map_err(|e| e.to_string())? + "\n",
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if d.regressed() {
        exit::FAILURES
    } else {
        exit::OK
    })
}
