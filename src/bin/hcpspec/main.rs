//! The `hcpspec` command: argument parsing and wiring only; the work is in the library.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use hcpspec::error::BadInput;
use hcpspec::exit;
use std::path::PathBuf;

// stdout and stderr may be closed pipes (`hcpspec run | head -1`): a line that cannot be
// written is dropped, and the run goes on to write its outputs and exit with its verdict, never
// a panic. These shadow std's macros in every module of the command.
macro_rules! println {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! print {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! eprintln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod cli;
mod diff;
mod fuzz;
mod review;
mod shim;
mod site;
mod style;
mod verify;

/// Set by the first Ctrl-C: the run starts no more cases, lets the running ones finish (each
/// within its deadline, its processes stopped), and writes its outputs; a second Ctrl-C exits
/// at once.
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    // Only async-signal-safe calls here: atomics, write(2), kill(2) and _exit(2).
    if INTERRUPTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // Its shims and harnesses are in groups of their own: the terminal's Ctrl-C reaches
        // only hcpspec, which takes them along.
        hcpspec::adapter::reap::kill_groups();
        unsafe { libc::_exit(exit::INTERRUPTED) };
    }
    let msg = b"\nhcpspec: interrupted: finishing the running cases (Ctrl-C again to quit now)\n";
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

#[derive(Parser)]
#[command(
    name = "hcpspec",
    version,
    about = "Conformance test harness and protocol fuzzer for HCP agent runtimes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour the terminal output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = style::ColorWhen::Auto, value_name = "WHEN")]
    color: style::ColorWhen,
    /// A variable of the environment whose value is no secret, shown as it is instead of
    /// `[redacted: $NAME]` (a build id, a version); repeatable, or comma-separated in
    /// HCPSPEC_NOT_SECRET. CI systems' own (GITHUB_SHA, GITHUB_RUN_ID …) are never redacted; a
    /// name like a credential's (…TOKEN…, …SECRET…, …PASSWORD…, …KEY) is refused.
    #[arg(
        long = "not-secret",
        global = true,
        value_name = "NAME",
        env = "HCPSPEC_NOT_SECRET",
        value_delimiter = ','
    )]
    not_secret: Vec<String>,
}

#[derive(clap::Args, Clone)]
pub struct Filters {
    /// Run only this suite (a folder of vectors/ with a suite.json); repeatable. Default: all.
    #[arg(long = "suite")]
    pub suite: Vec<String>,
    /// Run only cases whose name contains this (or matches this glob); repeatable.
    #[arg(long = "filter")]
    pub filter: Vec<String>,
    /// Run only cases of this section (its id in the suite.json: 1 … 10, must-not); repeatable.
    #[arg(long = "section")]
    pub section: Vec<String>,
    /// Run only cases of this level (MUST, SHOULD, MAY, PROFILE); repeatable.
    #[arg(long = "level")]
    pub level: Vec<String>,
    /// Run only shard k of n (1-based, e.g. 2/4), for a CI matrix.
    #[arg(long)]
    pub partition: Option<String>,
    /// The vectors folder to read instead of the vectors embedded in this binary.
    #[arg(long, env = "HCPSPEC_VECTORS", value_name = "DIR")]
    pub vectors: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the suites against one or more implementations (default: every suite against its
    /// embedded targets).
    Run(cli::RunArgs),
    /// Render reports (JUnit, Markdown, HTML, badges) from one or more result.json, merged.
    Report {
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// Where the merged result.json and its renderings go. Required: a default would write
        /// into a folder of your repository you did not name, or over a run's own outputs.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Build a static compatibility site from many results: an overview matrix, a page per
    /// implementation with its history, a page per ledger sentence, badges and a JSON API.
    Site(site::SiteArgs),
    /// Compare two results (each a result.json or a folder holding one): the cases that
    /// regressed, were fixed, changed, were added or removed, per runtime and ledger sentence;
    /// exit 1 when a case newly fails the run.
    Diff(diff::DiffArgs),
    /// Check a result.json: recount every summary from its cases, check its case set against
    /// this hcpspec's embedded vectors, print each edit found (docs/verify.md). Exit 0 verified,
    /// 1 an edit found, 2 bad input, 5 no edit found but the case set not checkable.
    Verify { result: PathBuf },
    /// Load and lint pack directories; print issues as `file:pointer: rule: message`.
    Lint {
        #[arg(required = true)]
        pack_dirs: Vec<PathBuf>,
    },
    /// Print the selected case names, one per line.
    List {
        #[command(flatten)]
        filters: Filters,
        /// Print the selected suites' mutants and allowed variants instead, one per line:
        /// suite, `mutant` or `variant`, name, sections, the rule it breaks or the point it decides.
        #[arg(long)]
        mutants: bool,
        /// `text`: a line each; `json`: one array, an object each (the case's name, suite,
        /// section, level, title, spec citation, requires, assumption and file; a mutant's or
        /// variant's suite, kind, name, sections and about).
        #[arg(long, value_enum, default_value_t = cli::ListFormat::Text)]
        format: cli::ListFormat,
    },
    /// Print a case's rule, citation and steps; with --result, its verdict and wire trace there.
    Explain {
        case: String,
        /// A result.json: print the case's verdict on each runtime there and its wire trace.
        #[arg(long, value_name = "PATH")]
        result: Option<PathBuf>,
        /// The vectors folder to read instead of the vectors embedded in this binary.
        #[arg(long, env = "HCPSPEC_VECTORS", value_name = "DIR")]
        vectors: Option<PathBuf>,
    },
    /// Measure the suite in-process against the reference, with the probe's spawns apart.
    Bench {
        /// Runs of the whole suite.
        #[arg(long, default_value_t = 5, value_parser = |s: &str| cli::bounded(s, 1, 1000).map(|n| n as usize))]
        iterations: usize,
        /// The vectors folder to read instead of the vectors embedded in this binary.
        #[arg(long, env = "HCPSPEC_VECTORS", value_name = "DIR")]
        vectors: Option<PathBuf>,
        /// Measure the transports instead: each adapter's round trip against a bare client making
        /// the same calls (exit 1 past 2×), and the suite over inproc, stdio, http and ws.
        #[arg(long)]
        transports: bool,
        /// With --transports: the round trips only (the gate), not the suite.
        #[arg(long, requires = "transports")]
        round_trips: bool,
    },
    /// Serve an embedded runtime over the shim protocol (stdio, HTTP or WebSocket; 127.0.0.1 only).
    Shim(shim::ShimArgs),
    /// Fuzz a runtime: mutated packs, grants and exec args, judged by fail-closed invariants and
    /// agreement with the reference; each finding is written as a case under vectors/found/.
    Fuzz(fuzz::FuzzArgs),
    /// Review the pending snapshots (.snap.new) a run left under DIR: each diff, then accept,
    /// reject or skip; without a terminal, list them and exit 1 when any is pending.
    Review(review::ReviewArgs),
    /// Print a shell's completion script for hcpspec (bash, zsh, fish, elvish, powershell):
    /// `hcpspec completions bash > ~/.local/share/bash-completion/completions/hcpspec`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print hcpspec's man page (roff): `hcpspec man > hcpspec.1 && man ./hcpspec.1`, or a
    /// subcommand's, which it names: `hcpspec man run > hcpspec-run.1`.
    Man {
        /// The subcommand whose page to print (run, report, …). Default: hcpspec's own.
        subcommand: Option<String>,
    },
}

/// The man page of hcpspec, or of one of its subcommands (`hcpspec-run(1)`, which hcpspec's
/// own page names): clap_mangen renders one command's page, so each is rendered on request.
fn man_page(subcommand: Option<&str>) -> Result<clap_mangen::Man, BadInput> {
    let mut cli = Cli::command();
    cli.build();
    let Some(name) = subcommand else {
        return Ok(clap_mangen::Man::new(cli));
    };
    let known: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let sub = cli.find_subcommand(name).cloned().ok_or_else(|| {
        BadInput(format!(
            "man {name}: no such subcommand (one of {})",
            known.join(", ")
        ))
    })?;
    // The page's title and name are `hcpspec-run`, as hcpspec's page names it.
    let full = format!("hcpspec-{}", sub.get_name());
    let sub = sub.name(Box::leak(full.into_boxed_str()) as &str);
    Ok(clap_mangen::Man::new(
        sub.version(env!("CARGO_PKG_VERSION")),
    ))
}

/// What `hcpspec --version` prints: the crate's version, each protocol's version (they change
/// apart from it, docs/CHANGELOG.md) and the embedded case set's hash.
fn version_text() -> String {
    format!(
        "{}\nprotocols: shim {}, control {}, host {}, launch contract {} (each older version still spoken)\nvectors: embedded (sha256 {})",
        env!("CARGO_PKG_VERSION"),
        hcpspec::shim::PROTOCOL,
        hcpspec::suites::core_api::PROTOCOL,
        hcpspec::suites::host::PROTOCOL,
        hcpspec::suites::harness_api::launch::VERSION,
        hcpspec::vectors::embedded_sha256()
    )
}

fn main() {
    if hcpspec::suites::hcp::probe::invoked_as_probe() {
        std::process::exit(hcpspec::suites::hcp::probe::main());
    }
    // The version names the protocols and the case set too, which only a run-time value holds.
    let version: &'static str = Box::leak(version_text().into_boxed_str());
    let matches = Cli::command().version(version).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    style::init(cli.color);
    // Before anything is redacted: the names said to be no secret.
    if let Err(e) = hcpspec::snapshot::not_secret(&cli.not_secret) {
        eprintln!("hcpspec: {e}");
        std::process::exit(exit::USAGE);
    }
    // Every command that starts a runtime makes folders in the temporary folder.
    if matches!(
        cli.command,
        Command::Run(_) | Command::Fuzz(_) | Command::Review(_) | Command::Bench { .. }
    ) {
        if let Err(e) = cli::temp_dir() {
            eprintln!("hcpspec: {e}");
            std::process::exit(exit::USAGE);
        }
    }
    let code = match cli.command {
        Command::Run(args) => {
            // Only a run stops gracefully; every other command keeps the default (exit at once).
            unsafe {
                libc::signal(
                    libc::SIGINT,
                    on_interrupt as *const () as libc::sighandler_t,
                )
            };
            cli::run(&args)
        }
        Command::Report { results, out } => cli::report(&results, &out),
        Command::Site(args) => site::site(&args),
        Command::Diff(args) => diff::diff(&args).map_err(exit::Error::from),
        Command::Verify { result } => verify::verify(&result),
        Command::Lint { pack_dirs } => cli::lint(&pack_dirs).map_err(exit::Error::from),
        Command::List {
            filters,
            mutants,
            format,
        } => {
            if mutants {
                cli::list_mutants(&filters, format).map_err(exit::Error::from)
            } else {
                cli::list(&filters, format).map_err(exit::Error::from)
            }
        }
        Command::Explain {
            case,
            vectors,
            result,
        } => cli::vectors(&vectors)
            .and_then(|v| cli::explain(&case, &v.root, result.as_deref()))
            .map_err(exit::Error::from),
        Command::Bench {
            iterations,
            vectors,
            transports: false,
            ..
        } => cli::vectors(&vectors)
            .and_then(|v| cli::bench(iterations, &v.root))
            .map_err(exit::Error::from),
        Command::Bench {
            iterations,
            vectors,
            transports: true,
            round_trips,
        } => cli::vectors(&vectors)
            .and_then(|v| shim::bench_transports(iterations, &v.root, round_trips))
            .map_err(exit::Error::from),
        Command::Shim(args) => shim::serve(&args).map_err(exit::Error::from),
        Command::Fuzz(args) => fuzz::fuzz(&args),
        Command::Review(args) => review::review(&args).map_err(exit::Error::from),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "hcpspec", &mut out);
            print!("{}", String::from_utf8_lossy(&out));
            Ok(exit::OK)
        }
        Command::Man { subcommand } => {
            let mut out = Vec::new();
            man_page(subcommand.as_deref())
                .and_then(|page| page.render(&mut out).map_err(|e| BadInput(e.to_string())))
                .map_err(exit::Error::from)
                .map(|()| {
                    print!("{}", String::from_utf8_lossy(&out));
                    exit::OK
                })
        }
    };
    let code = code.unwrap_or_else(|e| {
        // A redaction a runtime declared is its own text, shown on one line.
        let lines = !matches!(
            e,
            exit::Error::Run(hcpspec::run::runner::RunError::Declared { .. })
        );
        eprintln!(
            "hcpspec: {}",
            hcpspec::report::printable(&e.to_string(), lines)
        );
        exit::code(&e)
    });
    // No process a shim or a harness started outlives hcpspec: whatever a case past the
    // watchdog still holds is killed and reaped now (docs/security.md).
    hcpspec::adapter::reap::end_all();
    std::process::exit(code);
}
