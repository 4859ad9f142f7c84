//! Reading the files hcpspec is handed (result files, expectations, case files, `suite.json`,
//! `denials.json`): regular files only, each within a cap, read in bounded chunks. A FIFO,
//! a device (`/dev/zero`), a directory or a file over its cap is refused with a message saying
//! which, never read until the kernel stops it.

use crate::error::BadInput;
use std::io::Read;
use std::path::Path;

/// The largest result file `hcpspec report` reads, in bytes (64 MiB). A run's own result.json
/// is far smaller: texts are cut at 4 KiB and observations at 16 KiB.
pub const MAX_RESULT: u64 = 64 << 20;

/// The most JSON values (each key, number, string, array and object counts) a result file
/// may hold: 2 Mi, some 25 times the contract suite's own result over three runtimes. Parsed,
/// a JSON value takes some 70 bytes, so a file of 64 MiB of `0,0,0,…` (32 Mi values) would take
/// gigabytes; within this cap `hcpspec report` stays within a few hundred MiB.
pub const MAX_RESULT_VALUES: usize = 2 << 20;

/// How many JSON values `text` holds, at most: the bytes outside strings that start one or
/// follow a separator (`[`, `{`, `,`, `:`), plus one. A quick bound taken before parsing.
pub fn json_values(text: &str) -> usize {
    let (mut n, mut in_string, mut escaped) = (1usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' | b',' | b':' => n += 1,
                _ => {}
            }
        }
    }
    n
}

/// The largest case file, `suite.json`, `denials.json` or expectations file hcpspec reads, in
/// bytes (8 MiB).
pub const MAX_CASE: u64 = 8 << 20;

/// The text of the regular file at `path`, at most `cap` bytes of UTF-8. The error says why
/// (not a regular file, over the cap, not UTF-8, an I/O error) without naming the file: the
/// caller does, in its own format.
pub fn read_capped(path: &Path, cap: u64) -> Result<String, BadInput> {
    use std::os::unix::fs::OpenOptionsExt;
    // Refuse what is not a regular file before opening it (opening a FIFO blocks until a
    // writer comes); O_NONBLOCK keeps the open from blocking should it be swapped for one.
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(BadInput(format!(
            "cannot read: not a regular file ({})",
            kind(&meta.file_type())
        )));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(BadInput(format!(
            "cannot read: not a regular file ({})",
            kind(&meta.file_type())
        )));
    }
    if meta.len() > cap {
        return Err(BadInput(over(meta.len(), cap)));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > cap {
        // It grew while being read.
        return Err(BadInput(over(bytes.len() as u64, cap)));
    }
    String::from_utf8(bytes)
        .map_err(|e| {
            format!(
                "not UTF-8 (an invalid byte at byte {})",
                e.utf8_error().valid_up_to()
            )
        })
        .map_err(BadInput)
}

fn over(size: u64, cap: u64) -> String {
    format!(
        "{size} bytes is over the cap of {cap} bytes ({} MiB)",
        cap >> 20
    )
}

fn kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.json");
        std::fs::write(&f, "{}").unwrap();
        assert_eq!(read_capped(&f, 2).unwrap(), "{}");
        assert!(read_capped(&f, 1).unwrap_err().0.contains("over the cap"));
        let e = read_capped(Path::new("/dev/zero"), MAX_RESULT).unwrap_err();
        assert!(
            e.0.contains("not a regular file (a character device)"),
            "{e}"
        );
        let e = read_capped(dir.path(), MAX_RESULT).unwrap_err();
        assert!(e.0.contains("a directory"), "{e}");
        std::fs::write(&f, b"\xff").unwrap();
        assert!(read_capped(&f, 2).unwrap_err().0.contains("not UTF-8"));
    }

    #[test]
    fn json_values_bounds_the_values_of_a_text() {
        assert_eq!(json_values("0"), 1);
        assert_eq!(json_values(r#"{"a,[:{": [1, 2, {"b": "\\\"],"}]}"#), 8);
        let v: serde_json::Value = serde_json::from_str(r#"{"a": [1, 2, {"b": null}]}"#).unwrap();
        assert!(json_values(&v.to_string()) >= 6);
    }
}
