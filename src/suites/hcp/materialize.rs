//! Turn a case's setup into files: fixture and inline packs under the case's temp directory,
//! and `${…}` variables into the case's own paths.

use super::steps::{InlinePack, PackRef};
use crate::adapter::CallError;
use crate::case::{paths, CaseError};
use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The paths one case may name in its steps and expectations.
pub struct Vars {
    pub tmp: PathBuf,
    pub workdir: PathBuf,
}

impl Vars {
    pub fn report(&self, name: Option<&str>) -> PathBuf {
        let file = match name {
            Some(n) => format!("report.{n}.json"),
            None => "report.json".to_string(),
        };
        self.tmp.join("probe").join(file)
    }

    /// Replace `${workdir}`, `${tmp}`, `${report}` and `${report.NAME}` in every string.
    pub fn substitute(&self, v: &Value) -> Value {
        static RE: OnceLock<Regex> = OnceLock::new();
        let re = RE.get_or_init(|| {
            Regex::new(r"\$\{(workdir|tmp|report)(?:\.([A-Za-z0-9_-]+))?\}").expect("static regex")
        });
        match v {
            Value::String(s) if s.contains("${") => Value::String(
                re.replace_all(s, |c: &regex::Captures| {
                    let path = match &c[1] {
                        "workdir" => self.workdir.clone(),
                        "tmp" => self.tmp.clone(),
                        _ => self.report(c.get(2).map(|m| m.as_str())),
                    };
                    path.display().to_string()
                })
                .into_owned(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.substitute(x)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), self.substitute(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

const PACK_FILES: [&str; 3] = ["surface.json", "policy.json", "HARNESS.md"];

/// Write one pack of the setup to `into/<name>`; returns the directory.
pub fn pack(
    case_file: &Path,
    index: usize,
    pack: &PackRef,
    fixtures: &Path,
    into: &Path,
) -> Result<PathBuf, CaseError> {
    let here = format!("/setup/packs/{index}");
    let fail = |pointer: &str, message: String| CaseError {
        file: case_file.to_path_buf(),
        pointer: pointer.into(),
        message,
    };
    let inline = match pack {
        PackRef::Fixture(name) => InlinePack {
            from: Some(name.clone()),
            ..Default::default()
        },
        PackRef::Inline(p) => p.clone(),
    };
    let name = inline
        .name
        .clone()
        .or_else(|| inline.from.clone())
        .unwrap_or_else(|| format!("inline-{index}"));
    // Checked again here (the fuzzers build cases that never went through `parse_case`):
    // nothing is created, copied, written or deleted outside `into`.
    paths::plain_name(&name).map_err(|m| fail(&here, String::from(m)))?;
    let dir = paths::inside(into, &name).map_err(|m| fail(&here, String::from(m)))?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(&here, format!("cannot create {}: {e}", dir.display())))?;
    if let Some(from) = &inline.from {
        let src = paths::fixture_dir(fixtures, from).map_err(|m| fail(&here, String::from(m)))?;
        for f in PACK_FILES {
            let Ok(real) = src.join(f).canonicalize() else {
                continue;
            };
            if !real.starts_with(&src) {
                return Err(fail(
                    &here,
                    format!("fixture pack `{from}`: {f} resolves outside the pack"),
                ));
            }
            // A FIFO would block the copy until a writer came; a device would never end.
            if !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) {
                return Err(fail(
                    &here,
                    format!("fixture pack `{from}`: {f} is not a regular file"),
                ));
            }
            std::fs::copy(&real, dir.join(f))
                .map_err(|e| fail(&here, format!("cannot copy {f}: {e}")))?;
        }
    }
    for (file, content) in &inline.files {
        let at = format!("{here}/files/{}", paths::segment(file));
        let path = paths::inside(&dir, file).map_err(|m| fail(&at, String::from(m)))?;
        let written = match content {
            Value::Null => std::fs::remove_file(&path).or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            }),
            Value::String(raw) => std::fs::write(&path, raw),
            json => std::fs::write(
                &path,
                serde_json::to_string_pretty(json).unwrap_or_default(),
            ),
        };
        written.map_err(|e| fail(&at, e.to_string()))?;
    }
    for (file, edits) in &inline.patch {
        let at = format!("{here}/patch/{}", paths::segment(file));
        let path = paths::inside(&dir, file).map_err(|m| fail(&at, String::from(m)))?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(&at, format!("cannot read {file} to patch: {e}")))?;
        let mut doc: Value = serde_json::from_str(&text)
            .map_err(|e| fail(&at, format!("{file} is not JSON: {e}")))?;
        for (pointer, value) in edits.as_object().into_iter().flatten() {
            crate::case::patch::set(&mut doc, pointer, (!value.is_null()).then(|| value.clone()))
                .map_err(|m| {
                fail(
                    &format!("{at}/{}", paths::segment(pointer)),
                    String::from(m),
                )
            })?;
        }
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&doc).unwrap_or_default(),
        )
        .map_err(|e| fail(&at, e.to_string()))?;
    }
    Ok(dir)
}

/// The largest probe report read, in bytes (the probe writes a few KiB).
pub const MAX_PROBE_REPORT: u64 = 1 << 20;

/// A probe step: the probe's report as JSON (a string when it is not JSON), or `null` when
/// there is none. Only a file inside the case's temp dir is read, symlinks resolved: a case
/// cannot name `/proc/self/environ`, and a runtime cannot plant a link to it in the report's
/// place.
pub fn read_probe(vars: &Vars, path: &str) -> Result<Value, CallError> {
    use std::io::Read;
    paths::probe_path(path).map_err(|m| CallError::Transport(format!("probe {m}")))?;
    let full = vars.substitute(&Value::String(path.to_string()));
    let full = PathBuf::from(full.as_str().unwrap_or_default());
    let root = vars.tmp.canonicalize().unwrap_or_else(|_| vars.tmp.clone());
    let Ok(real) = full.canonicalize() else {
        return Ok(Value::Null);
    };
    if !real.starts_with(&root) {
        return Err(CallError::Transport(format!(
            "probe: the report {} resolves outside the case's temp dir (to {}); not read",
            full.display(),
            real.display()
        )));
    }
    if !real.is_file() {
        return Ok(Value::Null);
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&real)
        .and_then(|f| f.take(MAX_PROBE_REPORT + 1).read_to_end(&mut bytes))
        .map_err(|e| CallError::Transport(format!("probe: cannot read {}: {e}", full.display())))?;
    if bytes.len() as u64 > MAX_PROBE_REPORT {
        return Err(CallError::Transport(format!(
            "probe: the report {} is over {} bytes; not read",
            full.display(),
            MAX_PROBE_REPORT
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.into_owned())))
}
