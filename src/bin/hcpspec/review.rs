//! `hcpspec review`: the pending snapshots (`.snap.new`) under a directory, one by one, as
//! `cargo insta review` does them, for teams without cargo: each diff, then accept (the
//! `.snap.new` becomes the `.snap`), reject (it is deleted) or skip (it stays pending). The files
//! keep insta's format, so `cargo insta review` reads the same ones.

use hcpspec::error::BadInput;
use hcpspec::exit;
use hcpspec::snapshot;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ReviewArgs {
    /// The snapshot directory a run compared with (`hcpspec run --snapshots DIR`).
    #[arg(long, value_name = "DIR")]
    pub snapshots: PathBuf,
    /// Accept every pending snapshot without asking.
    #[arg(long, conflicts_with = "reject_all")]
    pub accept_all: bool,
    /// Reject (delete) every pending snapshot without asking.
    #[arg(long)]
    pub reject_all: bool,
    /// Read the answers from stdin even when it is no terminal (scripts, tests): a line per
    /// snapshot, `a` accept, `r` reject, `s` skip; at the end of the input the rest are skipped.
    #[arg(long)]
    pub stdin: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    Accept,
    Reject,
    Skip,
}

/// One pending snapshot: its `.snap.new`, the snapshot it would replace, both bodies.
struct Pending {
    new_file: PathBuf,
    snap: PathBuf,
    old: Option<String>,
    new: String,
}

impl Pending {
    fn of(new_file: PathBuf) -> Pending {
        let snap = snapshot::accepted_path(&new_file);
        // Read as a run reads a snapshot: never through a link, never over snapshot::MAX_SNAP.
        let new =
            snapshot::read(&new_file).unwrap_or_else(|| match snapshot::read_file(&new_file) {
                Ok(text) => text.unwrap_or_default(),
                Err(e) => format!("({e})"),
            });
        Pending {
            old: snapshot::read(&snap),
            new_file,
            snap,
            new,
        }
    }

    fn kind(&self) -> &'static str {
        if self.old.is_some() {
            "changed"
        } else {
            "new"
        }
    }

    fn name(&self, root: &Path) -> String {
        let rel = self.snap.strip_prefix(root).unwrap_or(&self.snap);
        hcpspec::report::printable(&rel.display().to_string(), false)
    }

    fn apply(&self, answer: Answer) -> Result<(), BadInput> {
        // An accept that fails names the snapshot it would replace (a folder there, say).
        let (done, file) = match answer {
            Answer::Accept => (std::fs::rename(&self.new_file, &self.snap), &self.snap),
            Answer::Reject => (std::fs::remove_file(&self.new_file), &self.new_file),
            Answer::Skip => (Ok(()), &self.new_file),
        };
        done.map_err(|e| format!("{}: {e}", file.display()))
            .map_err(BadInput)
    }
}

fn parse(line: &str) -> Option<Answer> {
    match line.trim().to_ascii_lowercase().as_str() {
        "a" | "accept" => Some(Answer::Accept),
        "r" | "reject" => Some(Answer::Reject),
        "s" | "skip" => Some(Answer::Skip),
        _ => None,
    }
}

pub fn review(a: &ReviewArgs) -> Result<i32, BadInput> {
    let root = &a.snapshots;
    if !root.is_dir() {
        return Err(BadInput(format!(
            "--snapshots {}: no such directory",
            root.display()
        )));
    }
    let pending: Vec<Pending> = snapshot::pending(root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .into_iter()
        .map(Pending::of)
        .collect();
    if pending.is_empty() {
        println!("no pending snapshots under {}", root.display());
        return Ok(exit::OK);
    }
    let fixed = if a.accept_all {
        Some(Answer::Accept)
    } else if a.reject_all {
        Some(Answer::Reject)
    } else {
        None
    };
    let stdin = std::io::stdin();
    if fixed.is_none() && !a.stdin && !stdin.is_terminal() {
        // No one to ask: list them, never wait for an answer.
        for p in &pending {
            println!("{:<7} {}", p.kind(), p.name(root));
        }
        eprintln!(
            "hcpspec: {} pending snapshot(s) under {}: review them on a terminal (hcpspec review --snapshots {}), or pass --accept-all or --reject-all",
            pending.len(),
            root.display(),
            root.display()
        );
        return Ok(exit::of_findings(pending.len()));
    }
    let colour = std::io::stdout().is_terminal();
    let mut lines = stdin.lock().lines();
    let mut out = std::io::stdout().lock();
    let (mut accepted, mut rejected, mut skipped) = (0, 0, 0);
    let mut ended = false;
    for (i, p) in pending.iter().enumerate() {
        let answer = match fixed {
            Some(answer) => answer,
            None if ended => Answer::Skip,
            None => {
                // A runtime's texts are data: shown escaped, then coloured.
                let diff = hcpspec::report::printable(
                    &snapshot::diff(p.old.as_deref().unwrap_or(""), &p.new),
                    true,
                );
                let diff = if colour {
                    snapshot::colour(&diff)
                } else {
                    diff
                };
                let _ = writeln!(
                    out,
                    "\n[{}/{}] {} ({})\n{}",
                    i + 1,
                    pending.len(),
                    p.name(root),
                    p.kind(),
                    diff
                );
                loop {
                    let _ = write!(out, "accept (a), reject (r) or skip (s)? ");
                    let _ = out.flush();
                    match lines.next() {
                        Some(Ok(line)) => match parse(&line) {
                            Some(answer) => break answer,
                            None => {
                                let _ = writeln!(out, "answer a, r or s");
                            }
                        },
                        // The end of the input (or an unreadable one): the rest stay pending.
                        _ => {
                            let _ = writeln!(out);
                            ended = true;
                            break Answer::Skip;
                        }
                    }
                }
            }
        };
        p.apply(answer)?;
        match answer {
            Answer::Accept => accepted += 1,
            Answer::Reject => rejected += 1,
            Answer::Skip => skipped += 1,
        }
        if fixed.is_some() {
            let verb = if answer == Answer::Accept {
                "accepted"
            } else {
                "rejected"
            };
            let _ = writeln!(out, "{verb} {} ({})", p.name(root), p.kind());
        }
    }
    let _ = writeln!(
        out,
        "\n{accepted} accepted, {rejected} rejected, {skipped} skipped (still pending)"
    );
    Ok(exit::of_findings(skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_letters_or_words() {
        assert!(parse(" A\n") == Some(Answer::Accept));
        assert!(parse("reject") == Some(Answer::Reject));
        assert!(parse("s") == Some(Answer::Skip));
        assert!(parse("yes").is_none() && parse("").is_none());
    }
}
