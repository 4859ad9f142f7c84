//! Embeds `vectors/` and `spec/` into the binary: every regular file but hidden ones, by its
//! path from the crate's root ("vectors/host/suite.json"). `include_bytes!` keeps no path in the
//! binary; the list is sorted so that the case-set hash is the same on every machine. The hash
//! (docs/vectors.md) is taken here, once, so no process pays for it at start.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(root: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(root.join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = format!("{rel}/{name}");
        let kind = e.file_type().unwrap_or_else(|e| panic!("{path}: {e}"));
        if kind.is_dir() {
            walk(root, &path, out);
        } else if kind.is_file() {
            out.push((path, e.path()));
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut files = Vec::new();
    // In name order, as a walk of the materialised folder meets them (src/vectors.rs `intact`).
    for dir in ["spec", "vectors"] {
        // A folder: cargo re-runs this script when any file under it changes, is added or goes.
        println!("cargo:rerun-if-changed={dir}");
        walk(&root, dir, &mut files);
    }
    let mut sha = sha2::Sha256::default();
    for (name, path) in &files {
        let Some(rel) = name.strip_prefix("vectors/") else {
            continue;
        };
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        sha2::Digest::update(&mut sha, rel.as_bytes());
        sha2::Digest::update(&mut sha, [0]);
        sha2::Digest::update(&mut sha, (bytes.len() as u64).to_le_bytes());
        sha2::Digest::update(&mut sha, &bytes);
    }
    let hex: String = sha2::Digest::finalize(sha)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut code = format!("pub const SHA256: &str = {hex:?};\n");
    code.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (name, path) in &files {
        let _ = writeln!(
            code,
            "    ({name:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("embedded.rs"), code).expect("OUT_DIR is writable");
}
