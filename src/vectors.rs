//! The vectors a command reads: the tree embedded in the binary at build time (`build.rs`), or
//! a folder on disk named by `--vectors DIR` or `HCPSPEC_VECTORS`.
//!
//! The loaders read files, so the embedded tree is materialised once per build, on first use,
//! under the user's cache (`$XDG_CACHE_HOME/hcpspec`, else `~/.cache/hcpspec`, else the temp
//! dir): `vectors-<sha256 prefix>/vectors/…`. A folder is written beside it and renamed into
//! place, so processes racing to write it agree; before each use it is compared with the
//! embedded bytes file by file, and a folder that differs (edited, cut short) is replaced.

use crate::error::BadInput;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Every embedded file, by its path from the crate's root (`spec/…`, `vectors/…`), depth first
/// in name order.
pub fn files() -> &'static [(&'static str, &'static [u8])] {
    embedded::FILES
}

/// Where a run's vectors came from, as `result.json` records it: `embedded` or the folder, and
/// the case-set hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// `embedded`, or the folder given.
    pub origin: String,
    /// SHA-256 of the tree (see [`tree_sha256`]), lowercase hex.
    pub sha256: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (sha256 {})", self.origin, self.sha256)
    }
}

/// The case-set hash: SHA-256 over the tree's regular files but hidden ones, in path order,
/// each as its path from the tree's root, a 0 byte, its length (8 bytes, little-endian) and its
/// bytes. The embedded tree and the same tree on disk hash alike.
pub fn tree_sha256<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for (path, bytes) in files {
        h.update(path.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The embedded vectors' files, by their path under `vectors/`.
#[cfg(test)]
fn embedded_vectors() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    files()
        .iter()
        .filter_map(|(p, b)| Some((p.strip_prefix("vectors/")?, *b)))
}

/// The embedded case set's hash, taken by `build.rs` ([`tree_sha256`] of the embedded vectors:
/// a test keeps the two equal).
pub fn embedded_sha256() -> &'static str {
    embedded::SHA256
}

/// The vectors a command reads.
#[derive(Debug, Clone)]
pub struct Vectors {
    /// The folder the loaders read.
    pub root: PathBuf,
    /// Given on the command line or in `HCPSPEC_VECTORS`, or the embedded tree.
    pub given: Option<PathBuf>,
}

impl Vectors {
    /// `dir` when given, else the embedded tree (materialised).
    pub fn resolve(dir: Option<&Path>) -> Result<Vectors, BadInput> {
        Ok(match dir {
            Some(d) => Vectors {
                root: d.to_path_buf(),
                given: Some(d.to_path_buf()),
            },
            None => Vectors {
                root: embedded_root()?.to_path_buf(),
                given: None,
            },
        })
    }

    /// Where they came from and their hash.
    pub fn origin(&self) -> Result<Origin, BadInput> {
        Ok(match &self.given {
            None => Origin {
                origin: "embedded".into(),
                sha256: embedded_sha256().into(),
            },
            Some(d) => {
                use sha2::Digest;
                let mut h = sha2::Sha256::new();
                hash_tree(d, &mut h)?;
                Origin {
                    origin: d.display().to_string(),
                    sha256: h.finalize().iter().map(|b| format!("{b:02x}")).collect(),
                }
            }
        })
    }
}

/// Each regular file of a folder but hidden ones, depth first in name order (as `build.rs`
/// lists them): its path from `root`, where it is, and its length. Symbolic links are
/// followed, as the loaders follow them.
fn walk(
    root: &Path,
    rel: &str,
    file: &mut dyn FnMut(&str, &Path, u64) -> Result<(), String>,
) -> Result<(), String> {
    let dir = root.join(rel);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let Ok(meta) = std::fs::metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            walk(root, &path, file)?;
        } else if meta.is_file() {
            file(&path, &e.path(), meta.len())?;
        }
    }
    Ok(())
}

/// [`tree_sha256`] of a folder's files ([`walk`]), each read in pieces as it is hashed: a file
/// of gigabytes anywhere in the folder is never held.
fn hash_tree(root: &Path, h: &mut sha2::Sha256) -> Result<(), String> {
    use sha2::Digest;
    use std::io::Read;
    let mut buf = vec![0u8; 64 << 10];
    walk(root, "", &mut |path, at, len| {
        let err = |err: std::io::Error| format!("{path}: {err}");
        let mut f = std::fs::File::open(at).map_err(err)?;
        h.update(path.as_bytes());
        h.update([0]);
        h.update(len.to_le_bytes());
        let mut read = 0u64;
        loop {
            let n = f.read(&mut buf).map_err(err)?;
            if n == 0 {
                break;
            }
            read += n as u64;
            h.update(&buf[..n]);
        }
        match read == len {
            true => Ok(()),
            false => Err(format!("{path}: changed while it was read")),
        }
    })
}

/// A folder's files ([`walk`]) and their bytes: the materialised cache's, compared with the
/// embedded tree.
fn read_tree(root: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    walk(root, "", &mut |path, at, _| {
        let bytes = std::fs::read(at).map_err(|err| format!("{path}: {err}"))?;
        out.push((path.to_string(), bytes));
        Ok(())
    })?;
    Ok(out)
}

/// The materialised tree, once written (or the reason it could not be).
static MATERIALISED: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The folder the embedded vectors are materialised in, written on first use in this process.
pub fn embedded_root() -> Result<&'static Path, BadInput> {
    MATERIALISED
        .get_or_init(materialise)
        .as_ref()
        .map(|p| p.as_path())
        .map_err(Clone::clone)
        .map_err(BadInput)
}

/// A path under the materialised tree as the repository names it (`vectors/host/…`), for
/// reports and snapshots; any other path as it is. Writes nothing: a run of a folder on disk
/// never materialises the embedded tree.
pub fn shown(path: &Path) -> PathBuf {
    let base = MATERIALISED
        .get()
        .and_then(|r| r.as_ref().ok())
        .and_then(|r| r.parent());
    match base.and_then(|b| path.strip_prefix(b).ok()) {
        Some(rel) => rel.to_path_buf(),
        None => path.to_path_buf(),
    }
}

fn cache_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("XDG_CACHE_HOME") {
        return d.join("hcpspec");
    }
    if let Some(h) = env("HOME") {
        return h.join(".cache").join("hcpspec");
    }
    std::env::temp_dir().join(format!("hcpspec-cache-{}", unsafe { libc::getuid() }))
}

/// Does `dir` hold exactly the embedded files, byte for byte?
fn intact(dir: &Path) -> bool {
    let Ok(found) = read_tree(dir) else {
        return false;
    };
    if found.len() != files().len() {
        return false;
    }
    // Both lists are depth first in name order (build.rs walks `spec` before `vectors`).
    found
        .iter()
        .zip(files())
        .all(|((p, b), (q, c))| p == q && b.as_slice() == *c)
}

fn write_tree(dir: &Path) -> std::io::Result<()> {
    for (path, bytes) in files() {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(file, bytes)?;
    }
    Ok(())
}

fn materialise() -> Result<PathBuf, String> {
    let cache = cache_dir();
    let name = format!("vectors-{}", &embedded_sha256()[..16]);
    let dir = cache.join(&name);
    if intact(&dir) {
        return Ok(dir.join("vectors"));
    }
    let why = |e: std::io::Error| {
        format!(
            "the embedded vectors could not be written under {} ({e}); give a vectors folder \
             with --vectors DIR or HCPSPEC_VECTORS",
            cache.display()
        )
    };
    std::fs::create_dir_all(&cache).map_err(why)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let fresh = cache.join(format!("{name}.{}-{nanos}", std::process::id()));
    write_tree(&fresh).map_err(why)?;
    // The first process to rename wins; the others use its folder once it checks out. A folder
    // that is there but differs (edited by hand, cut short) is replaced; should that fail, this
    // process reads its own copy.
    if std::fs::rename(&fresh, &dir).is_ok() {
        return Ok(dir.join("vectors"));
    }
    if intact(&dir) {
        let _ = std::fs::remove_dir_all(&fresh);
        return Ok(dir.join("vectors"));
    }
    if std::fs::remove_dir_all(&dir).is_ok() && std::fs::rename(&fresh, &dir).is_ok() {
        return Ok(dir.join("vectors"));
    }
    Ok(fresh.join("vectors"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_tree_is_the_checkout_s() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let on_disk = Vectors::resolve(Some(&root.join("vectors")))
            .and_then(|v| v.origin())
            .unwrap();
        assert_eq!(on_disk.sha256, embedded_sha256());
        assert_eq!(tree_sha256(embedded_vectors()), embedded_sha256());
        assert!(files().iter().any(|(p, _)| *p == "vectors/denials.json"));
        assert!(files()
            .iter()
            .any(|(p, _)| *p == "spec/004_0d5b24e47247e871.txt"));
    }

    #[test]
    fn the_hash_covers_names_and_bounds() {
        let a = tree_sha256([("a", b"bc".as_slice())]);
        assert_ne!(a, tree_sha256([("ab", b"c".as_slice())]));
        assert_ne!(
            a,
            tree_sha256([("a", b"b".as_slice()), ("c", b"".as_slice())])
        );
    }

    #[test]
    fn a_materialised_tree_that_differs_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path()).unwrap();
        assert!(intact(tmp.path()));
        std::fs::write(tmp.path().join("vectors/host/extra.json"), "{}").unwrap();
        assert!(!intact(tmp.path()));
        std::fs::remove_file(tmp.path().join("vectors/host/extra.json")).unwrap();
        std::fs::write(tmp.path().join("vectors/denials.json"), "{}").unwrap();
        assert!(!intact(tmp.path()));
    }
}
