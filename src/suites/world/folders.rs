//! A folder upload (section 4b's "Folders"): a begin with `kind: "folder"`, then one file request
//! per file (`op: "file"`, `{uploadId, path, sha256, base64}`: spec 004 names the step and its
//! members' meaning, not their names, which a core renames in core.start's `names`), then commit.
//! Every file's bytes are taken and held to their sha256; the folder's limits are checked per
//! file request; a version whose files are the folder's latest is not added.

pub use super::model::FolderUpload;
use super::model::{Reply, World};
use crate::suites::core_api::knobs::Mutant;
use serde_json::{json, Value};
use std::collections::BTreeMap;

use super::{b64, unb64};

/// A sha256 as bare lowercase hex (a `sha256:` prefix taken off).
fn bare(sha: &str) -> String {
    sha.strip_prefix("sha256:")
        .unwrap_or(sha)
        .to_ascii_lowercase()
}

/// Content the store holds under a sha256: a file artifact's bytes, or a folder's file.
fn stored(w: &World, sha: &str) -> Option<Vec<u8>> {
    w.artifacts.values().find_map(|a| {
        let own = unb64(a["base64"].as_str().unwrap_or_default())?;
        if crate::hash::sha256_hex(&own) == sha && a["meta"]["kind"] == "file" {
            return Some(own);
        }
        a["files"].as_object()?.values().find_map(|f| {
            let b = unb64(f.as_str()?)?;
            (crate::hash::sha256_hex(&b) == sha).then_some(b)
        })
    })
}

/// `op: "file"`: one file of a folder upload.
pub fn file(w: &mut World, p: &Value, data: Option<Vec<u8>>) -> Reply {
    let id = p["uploadId"].as_str().unwrap_or_default().to_string();
    let Some(u) = w.uploads.get(&id) else {
        return Reply::Err("invalid", format!("no upload {id}"));
    };
    if p["runId"].as_str() != Some(u.run.as_str()) {
        return Reply::Err("invalid", format!("no upload {id} in this run"));
    }
    let Some(folder) = u.folder.clone() else {
        return Reply::Err("invalid", format!("upload {id} is no folder"));
    };
    let path = match p["path"].as_str() {
        Some(path) if !path.is_empty() => path.to_string(),
        _ => return Reply::Err("invalid", "a folder's file names its path".into()),
    };
    let Some(sha) = p["sha256"].as_str().map(bare) else {
        return Reply::Err("invalid", "a folder's file names its sha256".into());
    };
    // Every byte: a hash alone never names content (the mutant takes what the store holds).
    let bytes = match data {
        None if w.breaks(Mutant::FolderFileByHashAlone) => stored(w, &sha).unwrap_or_default(),
        d => d.unwrap_or_default(),
    };
    // A file whose bytes do not match its sha256 is invalid, and the upload ends.
    if crate::hash::sha256_hex(&bytes) != sha && !w.breaks(Mutant::FolderFileHashUnchecked) {
        if !w.breaks(Mutant::FolderUploadSurvivesABadFile) {
            w.uploads.remove(&id);
        }
        let code = match w.breaks(Mutant::FolderBadHashNotInvalid) {
            true => "effect_drift",
            false => "invalid",
        };
        return Reply::Err(code, format!("{path}: its bytes do not match its sha256"));
    }
    // The folder's limits: maxEntries, maxFileBytes, maxBytes; past one, limit_exceeded.
    let held: u64 = folder
        .files
        .iter()
        .filter(|(p, _)| **p != path)
        .map(|(_, b)| b.len() as u64)
        .sum();
    let entries = folder.files.len() as u64 + u64::from(!folder.files.contains_key(&path));
    let size = bytes.len() as u64;
    let past = if entries > folder.max_entries && !w.breaks(Mutant::FolderEntriesUnchecked) {
        Some(("maxEntries", folder.max_entries))
    } else if size > folder.max_file && !w.breaks(Mutant::FolderFileLimitUnchecked) {
        Some(("maxFileBytes", folder.max_file))
    } else if held + size > u.max && !w.breaks(Mutant::FolderTotalUnchecked) {
        Some(("maxBytes", u.max))
    } else {
        None
    };
    if let Some((name, limit)) = past {
        if w.breaks(Mutant::FolderLimitAsInvalid) {
            return Reply::Err("invalid", format!("{name} {limit}"));
        }
        return w.over_limit(name, limit, "");
    }
    let u = w.uploads.get_mut(&id).expect("checked");
    let f = u.folder.as_mut().expect("checked");
    f.files.insert(path.clone(), bytes);
    Reply::Ok(json!({ "path": path, "size": size, "received": f.files.len() }))
}

/// The refusal of a folder version whose new content (the files whose content the store does
/// not hold yet, each content once) passes what is left of the Tenant's or the Agent's total.
fn past_a_total(
    w: &World,
    files: &BTreeMap<String, Vec<u8>>,
    (tenant, agent): (u64, u64),
) -> Option<Reply> {
    let all = w.breaks(Mutant::FolderCommitWithoutDedupe);
    let mut new = BTreeMap::new();
    for b in files.values() {
        let sha = crate::hash::sha256_hex(b);
        if all || stored(w, &sha).is_none() {
            new.insert(
                if all { format!("{}", new.len()) } else { sha },
                b.len() as u64,
            );
        }
    }
    let size: u64 = new.values().sum();
    if w.breaks(Mutant::FolderTotalsUncheckedAtCommit) || size <= tenant.min(agent) {
        return None;
    }
    let reason = match tenant <= agent || w.breaks(Mutant::FolderTotalReasonAlwaysTenant) {
        true => "tenant_total",
        false => "environment_total",
    };
    Some(w.over_limit("limitBytes", tenant.min(agent), &format!(" ({reason})")))
}

/// A folder upload's commit: a folder version of the session (not added when its files are the
/// folder's latest).
/// `left`: what is left of the Tenant's and the Agent's totals.
pub fn commit(w: &mut World, id: &str, left: (u64, u64)) -> Reply {
    let u = w.uploads.remove(id).expect("checked");
    let files = u.folder.clone().unwrap_or_default().files;
    let size: usize = files.values().map(Vec::len).sum();
    // The folder's content: its files' paths and hashes, one a line, in path order.
    let listing: String = files
        .iter()
        .map(|(p, b)| format!("{p} {}\n", crate::hash::sha256_hex(b)))
        .collect();
    let encoded: serde_json::Map<String, Value> = files
        .iter()
        .map(|(p, b)| (p.clone(), json!(b64(b))))
        .collect();
    // The folder this writes a version of: the one the begin named, else the session's own
    // folder of that name.
    let of = u.of.clone().or_else(|| {
        w.artifacts
            .iter()
            .find(|(_, a)| {
                a["meta"]["kind"] == "folder"
                    && (a["scope"].is_null() || a["scope"] == "session")
                    && a["meta"]["name"].as_str() == Some(u.name.as_str())
            })
            .map(|(k, _)| k.clone())
    });
    // At commit, the version's new content (after dedupe) must fit the totals.
    if let Some(refused) = past_a_total(w, &files, left) {
        return refused;
    }
    if let Some(a) = of.as_ref().and_then(|a| w.artifacts.get(a)) {
        let same = a["files"] == Value::Object(encoded.clone());
        if same && !w.breaks(Mutant::UnchangedFolderVersionAdded) {
            let mut answer = json!({ "status": "written", "created": false, "unchanged": true, "artifact": a["meta"] });
            if w.breaks(Mutant::UnchangedFolderNotMarked) {
                answer.as_object_mut().map(|o| o.remove("unchanged"));
            }
            return Reply::Ok(answer);
        }
    }
    let (aid, version, older) = super::next_version(w, of.as_deref(), &["meta", "base64", "files"]);
    let kind = match w.breaks(Mutant::FolderWrittenAsFile) {
        true => "file",
        false => "folder",
    };
    let meta = json!({
        "artifactId": aid, "kind": kind, "name": u.name, "version": version,
        "contentType": "inode/directory", "size": size,
        "sha256": crate::hash::sha256_hex(listing.as_bytes()), "tenantWide": false
    });
    w.artifacts.insert(
        aid,
        json!({ "meta": meta, "base64": b64(listing.as_bytes()), "files": encoded, "effectId": u.effect, "older": older }),
    );
    if let Some(k) = u.key {
        w.keys_written.insert(
            k,
            meta["artifactId"].as_str().unwrap_or_default().to_string(),
        );
    }
    Reply::Ok(json!({ "status": "written", "created": true, "artifact": meta }))
}
