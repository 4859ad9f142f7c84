//! Turn a case's setup into files: fixture and inline packs under the case's temp directory,
//! and `${…}` variables into the case's own paths.

use crate::case::{CaseError, InlinePack, PackRef};
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
    let dir = into.join(&name);
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(&here, format!("cannot create {}: {e}", dir.display())))?;
    if let Some(from) = &inline.from {
        let src = fixtures.join(from);
        if !src.is_dir() || from.contains("..") {
            return Err(fail(
                &here,
                format!("no fixture pack `{from}` under {}", fixtures.display()),
            ));
        }
        for f in PACK_FILES {
            if src.join(f).exists() {
                std::fs::copy(src.join(f), dir.join(f))
                    .map_err(|e| fail(&here, format!("cannot copy {f}: {e}")))?;
            }
        }
    }
    for (file, content) in &inline.files {
        let path = dir.join(file);
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
        written.map_err(|e| fail(&format!("{here}/files/{file}"), e.to_string()))?;
    }
    for (file, edits) in &inline.patch {
        let at = format!("{here}/patch/{file}");
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(&at, format!("cannot read {file} to patch: {e}")))?;
        let mut doc: Value = serde_json::from_str(&text)
            .map_err(|e| fail(&at, format!("{file} is not JSON: {e}")))?;
        for (pointer, value) in edits.as_object().into_iter().flatten() {
            crate::case::patch::set(&mut doc, pointer, (!value.is_null()).then(|| value.clone()))
                .map_err(|m| fail(&format!("{at}/{pointer}"), m))?;
        }
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&doc).unwrap_or_default(),
        )
        .map_err(|e| fail(&at, e.to_string()))?;
    }
    Ok(dir)
}
