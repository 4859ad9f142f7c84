//! `hcpspec site`: read the registry (or the results given), the ledgers of the vectors, and
//! write the static site (`hcpspec::report::site`, docs/publishing.md).

use crate::{cli, exit};
use hcpspec::error::BadInput;
use hcpspec::report::site;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct SiteArgs {
    /// Result files, each read as one more run; every run name (`--name`, else the name stated
    /// to `initialize`) is an implementation. Instead of, or with, --registry.
    results: Vec<PathBuf>,
    /// A registry file (JSON: the implementations and their results, oldest first;
    /// docs/publishing.md).
    #[arg(long, value_name = "FILE")]
    registry: Option<PathBuf>,
    /// Where the site goes (index.html, implementations/, sentences/, badges/, api/).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The vectors folder whose ledgers the sentence pages show, instead of the embedded one.
    #[arg(long, env = "HCPSPEC_VECTORS", value_name = "DIR")]
    vectors: Option<PathBuf>,
}

/// Every ledger sentence of every suite under `vectors`, with its state and cases.
pub fn sentences(vectors: &Path) -> Result<Vec<site::Sentence>, BadInput> {
    let mut out = vec![];
    for name in hcpspec::case::suite_names(vectors).map_err(|e| e.to_string())? {
        let loaded = hcpspec::suites::load(vectors, &name).map_err(|e| e.to_string())?;
        let rows = hcpspec::suites::ledger::read(vectors, &loaded.info, &loaded.suite.checks())?;
        for r in rows {
            let Some(state) = r.state else { continue };
            out.push(site::Sentence {
                suite: name.clone(),
                ledger: r.ledger,
                number: r.number,
                text: r.sentence,
                state: state.label().into(),
                cases: r.cases,
            });
        }
    }
    Ok(out)
}

pub fn site(args: &SiteArgs) -> Result<i32, exit::Error> {
    if args.registry.is_none() && args.results.is_empty() {
        return Err(BadInput("give --registry FILE or result files".into()).into());
    }
    cli::out_dir("--out", &args.out)?;
    let (title, mut implementations) = match &args.registry {
        Some(r) => site::load(r)?,
        None => (None, vec![]),
    };
    let results = args
        .results
        .iter()
        .map(|p| hcpspec::report::read(p).map(|r| (p.display().to_string(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    site::add_results(&mut implementations, &results)?;
    let vectors = cli::vectors(&args.vectors)?;
    let sentences = sentences(&vectors.root)?;
    let files = site::render(title.as_deref(), &implementations, &sentences);
    site::write(&args.out, &files).map_err(|source| exit::Error::Unwritten {
        what: "the site",
        source,
    })?;
    println!(
        "wrote {} files for {} implementation(s) into {}",
        files.len(),
        implementations.len(),
        args.out.display()
    );
    Ok(0)
}
