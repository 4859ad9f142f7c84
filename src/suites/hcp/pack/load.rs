//! Contract point 1: load `surface.json`, `policy.json` and `HARNESS.md`; reject on parse error.
//!
//! Each JSON file is read by serde straight into the typed model, which accepts exactly what
//! its JSON Schema accepts (`deny_unknown_fields`, no `null` for an absent member, objects only,
//! and [`Surface::conforms`] for the patterns). Only a file the types reject is read again as a
//! `Value` and run through the compiled schema, which names every violation by JSON pointer:
//! the issues of a rejected file are the schema's, exactly as when every file went that way
//! ([`load_files_schema_first`], kept to prove it).

use super::model::de::Object;
use super::{Issue, Pack, Policy, Surface};
use crate::schema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

pub const SURFACE: &str = "surface.json";
pub const POLICY: &str = "policy.json";
pub const SKILL: &str = "HARNESS.md";

/// The raw bytes of a pack directory; `None` for a file that is not there.
#[derive(Debug, Clone, Default)]
pub struct PackFiles {
    /// How issues name the directory (its path, or a label for in-memory packs).
    pub label: String,
    pub surface: Option<Vec<u8>>,
    pub policy: Option<Vec<u8>>,
    pub skill: Option<Vec<u8>>,
}

impl PackFiles {
    pub fn read(dir: &Path) -> PackFiles {
        let read = |name: &str| std::fs::read(dir.join(name)).ok();
        PackFiles {
            label: dir.display().to_string(),
            surface: read(SURFACE),
            policy: read(POLICY),
            skill: read(SKILL),
        }
    }
    /// How issues name `file` of this pack.
    pub fn path(&self, file: &str) -> String {
        if self.label.is_empty() {
            file.to_string()
        } else {
            format!("{}/{}", self.label.trim_end_matches('/'), file)
        }
    }
}

pub fn load_dir(dir: &Path) -> Result<Pack, Vec<Issue>> {
    load_files(&PackFiles::read(dir))
}

/// Parse and schema-check both JSON files; collect every issue of both before rejecting.
pub fn load_files(files: &PackFiles) -> Result<Pack, Vec<Issue>> {
    load(files, true)
}

/// [`load_files`] with every file parsed into a `Value` and validated by the schema before the
/// typed conversion (the loader before the typed fast path). Same result, several times slower;
/// the fuzz targets and tests check that both agree.
#[doc(hidden)]
pub fn load_files_schema_first(files: &PackFiles) -> Result<Pack, Vec<Issue>> {
    load(files, false)
}

fn load(files: &PackFiles, typed_first: bool) -> Result<Pack, Vec<Issue>> {
    let mut issues = Vec::new();
    let surface: Option<Surface> = parse(
        &files.path(SURFACE),
        files.surface.as_deref(),
        schema::surface(),
        typed_first.then_some(Surface::conforms),
        &mut issues,
    );
    let policy: Option<Policy> = parse(
        &files.path(POLICY),
        files.policy.as_deref(),
        schema::policy(),
        typed_first.then_some(|_: &Policy| true),
        &mut issues,
    );
    // HARNESS.md is free text; its absence is a lint issue (point 2), not a load error.
    let skill = match files.skill.as_deref().map(std::str::from_utf8) {
        None => None,
        Some(Ok(text)) => Some(text.to_string()),
        Some(Err(e)) => {
            issues.push(Issue::new(
                &files.path(SKILL),
                "",
                "parse",
                format!("not UTF-8: {e}"),
            ));
            None
        }
    };
    match (surface, policy) {
        (Some(surface), Some(policy)) if issues.is_empty() => Ok(Pack {
            surface,
            policy,
            skill,
        }),
        _ => Err(issues),
    }
}

/// One JSON file: typed directly when `conforms` is given and the types take it and it
/// conforms; otherwise through a `Value` and the schema, for the issues.
fn parse<T: DeserializeOwned>(
    path: &str,
    bytes: Option<&[u8]>,
    validator: &jsonschema::Validator,
    conforms: Option<fn(&T) -> bool>,
    issues: &mut Vec<Issue>,
) -> Option<T> {
    let Some(bytes) = bytes else {
        issues.push(Issue::new(path, "", "missing-file", "file not found"));
        return None;
    };
    if let Some(conforms) = conforms {
        if let Ok(Object(t)) = serde_json::from_slice::<Object<T>>(bytes) {
            if conforms(&t) {
                return Some(t);
            }
        }
    }
    // serde_json rejects trailing characters after the value, so `{}}` is a parse error.
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            issues.push(Issue::new(
                path,
                "",
                "parse",
                format!("line {} column {}: {e}", e.line(), e.column()),
            ));
            return None;
        }
    };
    // On the typed path a file gets here because the types refused it, so it is almost never
    // valid: every error at once, without `violations`' `is_valid` pass first.
    let violations: Vec<(String, String)> = if conforms.is_some() {
        validator
            .iter_errors(&value)
            .map(|e| (e.instance_path().to_string(), e.to_string()))
            .collect()
    } else {
        schema::violations(validator, &value)
    };
    if !violations.is_empty() {
        for (pointer, message) in violations {
            issues.push(Issue::new(path, &pointer, "schema", message));
        }
        return None;
    }
    match serde_json::from_value(value) {
        Ok(t) => Some(t),
        Err(e) => {
            issues.push(Issue::new(path, "", "schema", e.to_string()));
            None
        }
    }
}
