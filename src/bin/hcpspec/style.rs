//! How the terminal output looks: colour (`--color`, `NO_COLOR`) and the marks (✓ ✗ –, or
//! ASCII where the terminal's locale is not UTF-8). Files and pipes get no colour under `auto`;
//! every rendering written to a file is the same whatever is chosen here.

use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`: when to colour the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (to anything but empty) or `TERM` is `dumb`.
    Auto,
    Always,
    Never,
}

struct Style {
    when: ColorWhen,
}

static STYLE: OnceLock<Style> = OnceLock::new();

/// Set once, from the command line, before anything is printed.
pub fn init(when: ColorWhen) {
    let _ = STYLE.set(Style { when });
}

fn when() -> ColorWhen {
    STYLE.get().map(|s| s.when).unwrap_or(ColorWhen::Auto)
}

/// Colour on this stream (stdout, else stderr)?
pub fn colour(stdout: bool) -> bool {
    match when() {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            let tty = if stdout {
                std::io::stdout().is_terminal()
            } else {
                std::io::stderr().is_terminal()
            };
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
            tty && !no_color && !dumb
        }
    }
}

/// Can the terminal show ✓ and ✗? Not when stdout is a terminal whose locale (LC_ALL, else
/// LC_CTYPE, else LANG) is not UTF-8. A file or a pipe gets them: they are UTF-8 text.
fn unicode() -> bool {
    if !std::io::stdout().is_terminal() {
        return true;
    }
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.is_empty())
        .unwrap_or_default()
        .to_ascii_lowercase();
    locale.contains("utf-8") || locale.contains("utf8")
}

/// The table's marks on stdout.
pub fn marks() -> hcpspec::report::Marks {
    let m = if unicode() {
        hcpspec::report::Marks::unicode()
    } else {
        hcpspec::report::Marks::ascii()
    };
    if colour(true) {
        m.coloured()
    } else {
        m
    }
}
