//! Snapshots: each case's normalised observations on one runtime, kept in insta's `.snap`
//! format under `snapshots/<runtime>/<suite>/<case-id>.snap`. A change is drift, a verdict of
//! its own beside conformance: a runtime can be conformant and drifted.

mod normalize;

pub use normalize::{
    bound, cap, contain, contain_long, contain_text, credential_name, excerpt_text, line_cut,
    not_secret, redact_number, redact_secrets, secrets, Declared, Redact, CUT_LOOKAHEAD,
    MAX_PATTERN, MAX_PLACEHOLDER, MAX_REDACTIONS, MAX_TEXT, MAX_VALUE,
};

use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The snapshot body of one case: its name and every step's normalised observation.
pub fn body<T: Serialize + ?Sized>(case_name: &str, observations: &T) -> String {
    serde_json::to_string_pretty(&json!({ "case": case_name, "observations": observations }))
        .unwrap_or_default()
}

/// A runtime's directory name: its `initialize` name with anything outside `[A-Za-z0-9._-]`
/// replaced, so `mutant:no-cwd-jail` becomes `mutant_no-cwd-jail`.
/// A name from a runtime is data, never a path: it never starts with `.` (so never `.` or
/// `..`), is never empty and has at most 64 characters.
pub fn runtime_dir(name: &str) -> String {
    let mut dir: String = name
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if dir.is_empty() || dir.starts_with('.') {
        dir.insert(0, '_');
    }
    dir
}

pub fn path(root: &Path, runtime: &str, suite: &str, case_id: &str) -> PathBuf {
    root.join(runtime_dir(runtime))
        .join(suite)
        .join(format!("{case_id}.snap"))
}

/// insta's file format: a YAML header between `---` lines, then the contents.
pub fn file_text(source: &str, body: &str) -> String {
    format!("---\nsource: {source}\nexpression: observations\n---\n{body}\n")
}

/// The contents of a `.snap` file (after its header), or None when there is none (or it is
/// refused: a link, or over [`MAX_SNAP`]; [`read_checked`] says which).
pub fn read(path: &Path) -> Option<String> {
    read_checked(path).ok().flatten()
}

/// The contents of a `.snap` file (after its header): Ok(None) when there is none or it has no
/// header, an error when it is refused unread.
pub fn read_checked(path: &Path) -> Result<Option<String>, Refused> {
    // A CRLF checkout reads alike (as insta reads it).
    let Some(text) = read_file(path)? else {
        return Ok(None);
    };
    let text = text.replace("\r\n", "\n");
    let body = text.strip_prefix("---\n").and_then(|rest| {
        let end = rest.find("\n---\n")?;
        Some(rest[end + 5..].trim_end_matches('\n').to_string())
    });
    Ok(body)
}

/// The largest committed `.snap` hcpspec reads, in bytes: a bigger one is refused unread (an
/// error verdict naming the file and the limit), never read whole.
pub const MAX_SNAP: u64 = 4 << 20;

/// The most lines of each side a drift diff compares, after their common start and end: past
/// it the rest is left out of the diff and marked (a line diff is quadratic at worst).
pub const MAX_DIFF_LINES: usize = 2000;

/// A snapshot file hcpspec will not read nor write: a symbolic link on its way (snapshots never
/// follow a link out of their folder), not a regular file, or over [`MAX_SNAP`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct Refused {
    pub path: PathBuf,
    pub why: String,
}

/// Check every component below `root` on the way to `path` (and `path` itself): none may be a
/// symbolic link, and an existing `path` is a regular file of at most [`MAX_SNAP`] bytes.
/// Components that do not exist yet are fine (they are created as real folders).
pub fn guard(root: &Path, path: &Path) -> Result<(), Refused> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut at = root.to_path_buf();
    let n = rel.components().count();
    for (i, c) in rel.components().enumerate() {
        at.push(c);
        let refuse = |why: String| Refused {
            path: at.clone(),
            why,
        };
        let Ok(m) = std::fs::symlink_metadata(&at) else {
            return Ok(());
        };
        if m.file_type().is_symlink() {
            return Err(refuse(
                "is a symlink: snapshots never follow links".to_string(),
            ));
        }
        if i + 1 < n && !m.is_dir() {
            return Err(refuse("is not a folder".to_string()));
        }
        if i + 1 == n && !m.is_file() {
            return Err(refuse("is not a regular file".to_string()));
        }
        if i + 1 == n && m.len() > MAX_SNAP {
            return Err(refuse(format!(
                "is {} bytes, over the 4 MiB limit of a snapshot (snapshot::MAX_SNAP): not read",
                m.len()
            )));
        }
    }
    Ok(())
}

/// Open a file for reading without following a link (O_NOFOLLOW).
fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// The text of a `.snap` file, never through a link and never more than [`MAX_SNAP`] bytes:
/// Ok(None) when there is none.
pub fn read_file(path: &Path) -> Result<Option<String>, Refused> {
    use std::io::Read;
    let refuse = |why: String| Refused {
        path: path.to_path_buf(),
        why,
    };
    match std::fs::symlink_metadata(path) {
        Err(_) => return Ok(None),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(refuse("is a symlink: snapshots never follow links".into()))
        }
        Ok(m) if !m.is_file() => return Err(refuse("is not a regular file".into())),
        Ok(_) => {}
    }
    let file = open_nofollow(path).map_err(|e| refuse(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_SNAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(e.to_string()))?;
    if bytes.len() as u64 > MAX_SNAP {
        return Err(refuse(
            "is over the 4 MiB limit of a snapshot (snapshot::MAX_SNAP): not read".into(),
        ));
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "drift", rename_all = "lowercase")]
pub enum Drift {
    /// No snapshot yet.
    New,
    /// The observations differ from the snapshot: a unified diff, old → new.
    Changed { diff: String },
}

/// Compare a body with its snapshot: None when they agree.
pub fn compare(path: &Path, body: &str) -> Option<Drift> {
    compare_checked(path, body).unwrap_or(Some(Drift::New))
}

/// [`compare`], a refused snapshot an error. The diff is contained: redacted, cut at
/// [`MAX_VALUE`].
pub fn compare_checked(path: &Path, body: &str) -> Result<Option<Drift>, Refused> {
    Ok(match read_checked(path)? {
        None => Some(Drift::New),
        Some(old) if old == body => None,
        Some(old) => Some(Drift::Changed {
            diff: contain_long(&diff(&old, body)),
        }),
    })
}

/// Write the snapshot (accept), or a `.snap.new` beside it for `cargo insta review`.
pub fn write(path: &Path, source: &str, body: &str, accept: bool) -> std::io::Result<PathBuf> {
    let target = if accept {
        path.to_path_buf()
    } else {
        path.with_extension("snap.new")
    };
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Never through a link (the way there was checked by `guard`): an old file is replaced,
    // not written into (it may be a hard link), and the new one is created O_EXCL|O_NOFOLLOW,
    // so a link put there meanwhile fails the write instead of being followed.
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(&target)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&target)?;
    file.write_all(file_text(source, body).as_bytes())?;
    if accept {
        let _ = std::fs::remove_file(path.with_extension("snap.new"));
    }
    Ok(target)
}

/// Which snapshot: the case's suite, id and stable name, and its file (insta's `source`).
pub struct Key<'a> {
    pub suite: &'a str,
    pub id: &'a str,
    pub name: &'a str,
    pub source: &'a Path,
}

/// What a check writes when a body is new or changed (as insta's `INSTA_UPDATE` and CI do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `--accept`: every new or changed body becomes the snapshot.
    Accept,
    /// Outside CI: a new body is written as the snapshot (reported `new`, not failing); a
    /// changed one is left as a `.snap.new` beside the snapshot, for review.
    Check,
    /// Under CI: nothing becomes a snapshot; new and changed bodies are left as `.snap.new`.
    Ci,
}

/// Check one case's observations against its snapshot under `root`. A new or changed body is
/// written as [`Policy`] says: as the snapshot itself, or as a `.snap.new` beside it (what
/// `hcpspec review` and `cargo insta review` look for). Returns the drift and the file written;
/// None when nothing drifted (and then no stale `.snap.new` is left behind).
pub fn check<T: Serialize + ?Sized>(
    root: &Path,
    runtime: &str,
    key: &Key<'_>,
    observations: &T,
    policy: Policy,
) -> Result<Option<(Drift, PathBuf)>, Checked> {
    let path = path(root, runtime, key.suite, key.id);
    // Nothing on the way (folders, the `.snap`, its `.snap.new`) may be a link: a committed
    // link would make hcpspec read or write outside the snapshots.
    guard(root, &path.with_extension("snap.new"))?;
    guard(root, &path)?;
    let body = body(key.name, observations);
    let Some(drift) = compare_checked(&path, &body)? else {
        let _ = std::fs::remove_file(path.with_extension("snap.new"));
        return Ok(None);
    };
    // insta's `source`: the case file, relative to where hcpspec runs when it can be (an
    // embedded case as the repository names it, `vectors/…`).
    let cwd = std::env::current_dir().unwrap_or_default();
    let shown = crate::vectors::shown(key.source);
    let source = shown
        .strip_prefix(&cwd)
        .unwrap_or(&shown)
        .display()
        .to_string();
    let accept = match (policy, &drift) {
        (Policy::Accept, _) | (Policy::Check, Drift::New) => true,
        (Policy::Check, Drift::Changed { .. }) | (Policy::Ci, _) => false,
    };
    let written = write(&path, &source, &body, accept).map_err(|source| Unwritten {
        path: path.clone(),
        source,
    })?;
    Ok(Some((drift, written)))
}

/// Why a check did not finish: the snapshot is refused (the case's verdict), or could not be
/// written (the run's).
#[derive(Debug, thiserror::Error)]
pub enum Checked {
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    Unwritten(#[from] Unwritten),
}

/// A snapshot (or its `.snap.new`) that could not be written: the run's outputs are incomplete.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct Unwritten {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// The `.snap.new` files under `root`, sorted, each with its snapshot's path (which may not
/// exist yet: a new snapshot). Symbolic links are not followed.
pub fn pending(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let p = entry.path();
            if kind.is_dir() {
                dirs.push(p);
            } else if kind.is_file() && p.to_string_lossy().ends_with(".snap.new") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The snapshot a `.snap.new` would replace: `x.snap.new` → `x.snap`.
pub fn accepted_path(pending: &Path) -> PathBuf {
    pending.with_extension("")
}

/// A unified line diff of two pretty-printed JSON bodies.
/// Past [`MAX_DIFF_LINES`] lines on a side, only [`MAX_DIFF_LINES`] lines of each from just
/// before the first difference are compared (marked): a line diff is quadratic at worst.
pub fn diff(old: &str, new: &str) -> String {
    let (a, b) = (old.lines().count(), new.lines().count());
    if a <= MAX_DIFF_LINES && b <= MAX_DIFF_LINES {
        return unified(old, new);
    }
    let same = old
        .lines()
        .zip(new.lines())
        .take_while(|(x, y)| x == y)
        .count();
    let from = same.saturating_sub(3);
    let window = |s: &str| -> String {
        s.lines()
            .skip(from)
            .take(MAX_DIFF_LINES)
            .flat_map(|l| [l, "\n"])
            .collect()
    };
    format!(
        "…[diff cut: the snapshot has {a} lines, the observations {b}; lines {}… of each, at most {MAX_DIFF_LINES} (snapshot::MAX_DIFF_LINES), compared]\n{}",
        from + 1,
        unified(&window(old), &window(new))
    )
}

fn unified(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("snapshot", "observed")
        .to_string()
}

/// Colour a unified diff for a terminal: removals red, additions green.
pub fn colour(diff: &str) -> String {
    diff.lines()
        .map(|l| match l.as_bytes().first() {
            Some(b'-') if !l.starts_with("---") => format!("\x1b[31m{l}\x1b[0m"),
            Some(b'+') if !l.starts_with("+++") => format!("\x1b[32m{l}\x1b[0m"),
            Some(b'@') => format!("\x1b[36m{l}\x1b[0m"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Normalise a value with the given redactions (re-exported for the executor).
/// Normalised values are also contained: secrets redacted, texts capped, size bounded.
pub fn normalize(v: &Value, r: &Redact) -> Value {
    if r.uncapped {
        return normalize::apply(v, r);
    }
    normalize::bound(normalize::apply(v, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_round_trips_and_detects_drift() {
        let dir = tempfile::tempdir().unwrap();
        for hostile in ["..", ".", "", "a/b", "../../etc", "/abs"] {
            let d = runtime_dir(hostile);
            assert!(
                !d.is_empty() && !d.starts_with('.') && !d.contains('/'),
                "{hostile:?} → {d}"
            );
            assert!(path(dir.path(), hostile, "suite-a", "c").starts_with(dir.path()));
            assert_eq!(
                path(dir.path(), hostile, "suite-a", "c")
                    .components()
                    .count(),
                dir.path().components().count() + 3
            );
        }
        let p = path(dir.path(), "mutant:x", "suite-a", "c");
        assert!(p.ends_with("mutant_x/suite-a/c.snap"));
        assert_eq!(compare(&p, "{}"), Some(Drift::New));
        write(
            &p,
            "vectors/contract/01-load/c.json",
            "{\n  \"a\": 1\n}",
            true,
        )
        .unwrap();
        assert_eq!(read(&p).as_deref(), Some("{\n  \"a\": 1\n}"));
        assert_eq!(compare(&p, "{\n  \"a\": 1\n}"), None);
        match compare(&p, "{\n  \"a\": 2\n}") {
            Some(Drift::Changed { diff }) => assert!(
                diff.contains("-  \"a\": 1") && diff.contains("+  \"a\": 2"),
                "{diff}"
            ),
            other => panic!("expected a change, got {other:?}"),
        }
        let pending = write(&p, "x", "{}", false).unwrap();
        assert!(pending.to_string_lossy().ends_with("c.snap.new"));
        assert_eq!(
            read(&p).as_deref(),
            Some("{\n  \"a\": 1\n}"),
            "a pending write leaves the snapshot alone"
        );
    }

    #[test]
    fn a_long_diff_compares_a_bounded_window_from_the_first_difference() {
        let old: String = (0..80_000).map(|i| format!("{i}\n")).collect();
        let new = old.replacen("50000\n", "changed\n", 1);
        let d = diff(&old, &new);
        assert!(
            d.starts_with(
                "…[diff cut: the snapshot has 80000 lines, the observations 80000; lines 49998…"
            ),
            "{d}"
        );
        assert!(d.contains("-50000") && d.contains("+changed"), "{d}");
        let other: String = (0..80_000).map(|i| format!("x{i}\n")).collect();
        let d = diff(&old, &other);
        assert!(
            d.lines().count() <= 2 * MAX_DIFF_LINES + 8,
            "{}",
            d.lines().count()
        );
        // Short bodies diff as they always have.
        assert_eq!(diff("a\n", "b\n"), unified("a\n", "b\n"));
    }

    #[test]
    fn a_new_snapshot_is_written_outside_ci_and_left_pending_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let key = Key {
            suite: "suite-a",
            id: "c",
            name: "suite-a::01::c",
            source: Path::new("vectors/suite-a/01/c.json"),
        };
        let snap = path(dir.path(), "rt", "suite-a", "c");
        let pending_file = snap.with_extension("snap.new");
        // Under CI: new, pending, no snapshot.
        let (drift, written) = check(dir.path(), "rt", &key, &[1], Policy::Ci)
            .unwrap()
            .unwrap();
        assert_eq!((drift, &written), (Drift::New, &pending_file));
        assert!(!snap.exists());
        assert_eq!(pending(dir.path()).unwrap(), vec![pending_file.clone()]);
        assert_eq!(accepted_path(&pending_file), snap);
        // Outside CI: new, written as the snapshot, the pending one gone.
        let (drift, written) = check(dir.path(), "rt", &key, &[1], Policy::Check)
            .unwrap()
            .unwrap();
        assert_eq!((drift, &written), (Drift::New, &snap));
        assert!(!pending_file.exists());
        assert!(matches!(
            check(dir.path(), "rt", &key, &[1], Policy::Check),
            Ok(None)
        ));
        // A change is pending in both, the snapshot untouched.
        for policy in [Policy::Check, Policy::Ci] {
            let (drift, written) = check(dir.path(), "rt", &key, &[2], policy)
                .unwrap()
                .unwrap();
            assert!(matches!(drift, Drift::Changed { .. }), "{drift:?}");
            assert_eq!(written, pending_file);
            assert!(read(&snap).unwrap().contains("1"));
        }
        // Agreeing again clears the stale pending file.
        assert!(matches!(
            check(dir.path(), "rt", &key, &[1], Policy::Ci),
            Ok(None)
        ));
        assert!(pending(dir.path()).unwrap().is_empty());
        // A CRLF checkout is the same snapshot, not a new one.
        let crlf = std::fs::read_to_string(&snap)
            .unwrap()
            .replace('\n', "\r\n");
        std::fs::write(&snap, crlf).unwrap();
        assert!(matches!(
            check(dir.path(), "rt", &key, &[1], Policy::Ci),
            Ok(None)
        ));
    }
}
