//! `artifact.read` and `artifact.write` (section 4b) as hcpspec's core answers them: the run's
//! session's artifacts only, chunks within `limits.chunkBytes`, offsets received in order, the
//! last chunk acknowledged again, an idempotent `key`, `effectId` provenance.

use super::model::{Reply, Upload, World};
use crate::knob::Class;
use crate::suites::core_api::knobs::{Mutant, Variant};
use serde_json::{json, Value};

pub use super::b64;
use super::unb64;

// The World answers artifact requests through these methods, so that the model never imports
// this module back.
impl World {
    /// `artifact.read`.
    pub fn artifact_read(&mut self, p: &Value) -> Reply {
        read(self, p)
    }
    /// `artifact.write`.
    pub fn artifact_write(&mut self, p: &Value) -> Reply {
        write(self, p)
    }
    /// A run's open uploads, ended with it (they store nothing).
    pub fn end_uploads_of(&mut self, run: &str) {
        end_uploads_of(self, run)
    }
}

/// The run the request names, held by the asking connection (`World::held`).
fn run_of<'a>(w: &'a World, p: &Value) -> Result<&'a super::model::Run, Reply> {
    w.held(p).map(|i| &w.runs[i])
}

pub fn read(w: &mut World, p: &Value) -> Reply {
    let chunk = match run_of(w, p) {
        Ok(r) => r.limit("chunkBytes"),
        Err(e) => return e,
    };
    let id = p
        .get("artifactId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Scope: the session's own, and the Tenant-wide ones its messages named; anything else is
    // the same not_found as a missing one.
    let visible = |a: &&Value| match a["scope"].as_str() {
        _ if w.breaks(Mutant::ArtifactScopeTenantWide) => true,
        None | Some("session") => true,
        Some("tenant-named") => !w.breaks(Mutant::NamedTenantNotFound),
        Some("other-session") => w.breaks(Mutant::OtherSessionReadable),
        Some("tenant-unnamed") => w.breaks(Mutant::UnnamedTenantReadable),
        Some("agent-disk") => w.breaks(Mutant::AgentDiskReadable),
        Some(_) => false,
    };
    let Some(a) = w.artifacts.get(id).filter(visible) else {
        if w.breaks(Mutant::MissingArtifactInvalid) {
            return Reply::Err("invalid", format!("artifact {id}"));
        }
        // Mutants whose answer tells which exist: it says why, or codes one otherwise.
        let scope = w.artifacts.get(id).and_then(|a| a["scope"].as_str());
        return match scope {
            Some("other-session") if w.breaks(Mutant::OtherSessionCodedInvalid) => {
                Reply::Err("invalid", format!("artifact {id} is not this session's"))
            }
            Some("other-session") if w.breaks(Mutant::NotFoundSaysAnotherSession) => Reply::Err(
                "not_found",
                format!("artifact {id} belongs to another session"),
            ),
            Some("tenant-unnamed") if w.breaks(Mutant::NotFoundSaysNeverNamed) => Reply::Err(
                "not_found",
                format!("artifact {id} is Tenant-wide and never named by this session"),
            ),
            Some("agent-disk") if w.breaks(Mutant::NotFoundSaysAgentDisk) => Reply::Err(
                "not_found",
                format!("artifact {id} is a version on the Agent's disk"),
            ),
            _ => Reply::Err("not_found", format!("artifact {id}")),
        };
    };
    // The version asked for (default the latest); an older one is kept in `older`.
    let wanted = p.get("version").and_then(Value::as_u64);
    let a = match wanted {
        Some(v) if a["meta"]["version"] != v && !w.breaks(Mutant::ReadVersionIgnored) => {
            let older = a["older"]
                .as_array()
                .and_then(|o| o.iter().find(|x| x["meta"]["version"] == v));
            match older {
                Some(x) => x,
                None => return Reply::Err("not_found", format!("artifact {id} version {v}")),
            }
        }
        _ => a,
    };
    let bytes = unb64(a["base64"].as_str().unwrap_or_default()).unwrap_or_default();
    let asked = p.get("offset").and_then(Value::as_u64).unwrap_or(0);
    let offset = match w.breaks(Mutant::ReadOffsetIgnored) {
        true => 0,
        false => asked,
    };
    // length defaults to chunkBytes, and is held to it.
    let length = match p.get("length").and_then(Value::as_u64) {
        Some(_) if w.breaks(Mutant::ReadLengthIgnored) => chunk,
        None if w.breaks(Mutant::ReadLengthDefaultUnbounded) => u64::MAX,
        None => chunk,
        Some(l) if w.breaks(Mutant::ReadLengthUnbounded) => l,
        // "at most length": a core may answer an asked range short (the freedom variant's
        // shapes: half of it, at least one byte), and the harness reads on from there.
        Some(l)
            if crate::suites::core_api::freedom::coin(&w.knobs(), Class::Shapes, "short-reads") =>
        {
            l.min(chunk).div_ceil(2)
        }
        Some(l) => l.min(chunk),
    };
    let length = if length == 0 && w.breaks(Mutant::MetadataReadSendsBytes) {
        chunk
    } else {
        length
    };
    if offset > bytes.len() as u64 && !w.breaks(Mutant::ReadPastEndAccepted) {
        return Reply::Err("invalid", "offset past the end".into());
    }
    let offset = offset.min(bytes.len() as u64);
    // A folder answers its metadata, with no bytes.
    let folder = a["meta"]["kind"] == "folder" && !w.breaks(Mutant::FolderReadSendsBytes);
    let end = if folder {
        offset
    } else {
        offset.saturating_add(length).min(bytes.len() as u64)
    };
    let mut answer = json!({
        "artifact": a["meta"], "offset": asked.min(bytes.len() as u64),
        "base64": b64(&bytes[offset as usize..end as usize]),
        "eof": (folder || end == bytes.len() as u64) && !w.breaks(Mutant::EofNeverSet)
    });
    if !folder && offset == bytes.len() as u64 && w.breaks(Mutant::ReadAtTheEndSendsBytes) {
        answer["base64"] = json!(b64(&bytes));
    }
    if w.breaks(Mutant::ReadAnswerWithoutOffset) {
        answer.as_object_mut().map(|o| o.remove("offset"));
    }
    Reply::Ok(answer)
}

pub fn write(w: &mut World, p: &Value) -> Reply {
    let (chunk, turn) = match run_of(w, p) {
        Ok(r) => (r.limit("chunkBytes"), r.turn_id.clone()),
        Err(e) => return e,
    };
    let op = p.get("op").and_then(Value::as_str).unwrap_or_default();
    // The mutant takes a write that names no op for a begin.
    let op = match op {
        "" if w.breaks(Mutant::MissingOpBegins) => "begin",
        op => op,
    };
    let data = match p.get("base64").map(|b| b.as_str().and_then(unb64)) {
        None => None,
        Some(Some(d)) => Some(d),
        Some(None) => return Reply::Err("invalid", "base64 is not base64".into()),
    };
    if data.as_ref().is_some_and(|d| d.len() as u64 > chunk)
        && !w.breaks(Mutant::ChunkLimitUnchecked)
    {
        return w.over_limit("chunkBytes", chunk, "");
    }
    match op {
        "begin" => begin(w, p, &turn, data),
        "chunk" => append(w, p, data),
        "commit" => {
            let id = p
                .get("uploadId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !w.uploads.contains_key(&id) {
                return Reply::Err("invalid", format!("no upload {id}"));
            }
            commit(w, &id)
        }
        "abort" => abort(w, p),
        // A folder upload's file (section 4b's "file by file").
        "file" => super::folders::file(w, p, data),
        _ if w.breaks(Mutant::UnknownOpOk) => Reply::Ok(json!({})),
        other => Reply::Err("invalid", format!("unknown op `{other}`")),
    }
}

/// `op: "begin"`: a write under a key already written answers its version; else an upload
/// opens (its provenance and the artifact it versions checked), or the whole body commits.
fn begin(w: &mut World, p: &Value, turn: &str, data: Option<Vec<u8>>) -> Reply {
    if let Some(k) = p
        .get("key")
        .and_then(Value::as_str)
        .filter(|_| !w.breaks(Mutant::KeyIgnored))
    {
        let run = p["runId"].as_str().unwrap_or_default();
        if let Some(id) = w.keys_written.get(&key_in(w, run, k)) {
            let mut meta = w.artifacts[id]["meta"].clone();
            if w.breaks(Mutant::RepeatedKeyAnswersAnotherVersion) {
                meta["version"] = json!(meta["version"].as_u64().unwrap_or(0) + 1);
            }
            return Reply::Ok(
                json!({ "status": "written", "created": w.breaks(Mutant::RepeatedKeyAnswersCreated), "artifact": meta }),
            );
        }
    }
    let effect = p
        .get("effectId")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(e) = &effect {
        // Provenance: a tool effect of this run's turn, journaled first.
        let ok = (e.starts_with(&format!("{turn}:")) || w.breaks(Mutant::ProvenanceOfAnyTurn))
            && (e.split(':').nth(2) == Some("tool") || w.breaks(Mutant::ProvenanceOfAnyKind))
            && w.journal.contains_key(e);
        if (!ok && !w.breaks(Mutant::ProvenanceUnchecked))
            || w.breaks(Mutant::ProvenanceAlwaysRefused)
        {
            return Reply::Err(
                "invalid",
                format!("effectId {e} is no journaled tool effect of this turn"),
            );
        }
    }
    // A new version: only of one of the session's own file artifacts.
    let of = match w.decides(Variant::VersionsByName) {
        // A core that versions by name: a begin of the name of one of the session's own file
        // artifacts writes its new version (the artifactId a begin names is not read).
        true => {
            let name = p.get("name").and_then(Value::as_str);
            w.artifacts
                .iter()
                .find(|(_, x)| {
                    (x["scope"].is_null() || x["scope"] == "session")
                        && x["meta"]["kind"] == "file"
                        && x["meta"]["name"].as_str() == name
                })
                .map(|(a, _)| a.clone())
        }
        false => p
            .get("artifactId")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    if let Some(a) = &of {
        let own = w
            .artifacts
            .get(a)
            .is_some_and(|x| x["scope"].is_null() || x["scope"] == "session");
        if !own && !w.breaks(Mutant::VersionsAnyArtifact) {
            return Reply::Err("not_found", format!("artifact {a}"));
        }
    }
    let upload = Upload {
        run: p
            .get("runId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        name: p
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("artifact")
            .into(),
        bytes: Vec::new(),
        last: None,
        max: {
            let file = w.sc.file_bytes.unwrap_or(64 << 20);
            let file = match w.breaks(Mutant::MaxBytesDoubled) {
                true => file.saturating_mul(2),
                false => file,
            };
            let (tenant, agent) = left(w);
            if w.breaks(Mutant::MaxBytesIsTheFileLimit) {
                file
            } else {
                file.min(tenant).min(agent)
            }
        },
        key: p.get("key").and_then(Value::as_str).map(str::to_string),
        effect,
        content_type: match crate::suites::core_api::freedom::content_type(
            &w.knobs(),
            p.get("name").and_then(Value::as_str).unwrap_or_default(),
        ) {
            Some(t) => t.to_string(),
            None => p
                .get("contentType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream")
                .to_string(),
        },
        of,
        folder: None,
    };
    if let Some(size) = p.get("size").and_then(Value::as_u64) {
        if size > upload.max && !w.breaks(Mutant::DeclaredSizeUnchecked) {
            return w.over_limit("limitBytes", upload.max, "");
        }
    }
    let mut upload = upload;
    if p["kind"] == "folder" {
        open_folder(w, p, &mut upload);
    }
    let id = w.next_id().replace("core", "upload");
    let id = crate::suites::core_api::freedom::id(&w.knobs(), "uploadId", &id);
    w.uploads.insert(id.clone(), upload);
    match data.filter(|_| !w.breaks(Mutant::BeginBodyNotCommitted)) {
        Some(d) => {
            w.uploads.get_mut(&id).expect("just put").bytes = d;
            commit(w, &id)
        }
        None if p["kind"] == "folder" => {
            // A folder's limits: maxEntries (folderEntries), maxFileBytes, maxBytes.
            let max = w.uploads[&id].max;
            let entries = w
                .runs
                .iter()
                .find(|r| Some(r.id.as_str()) == p["runId"].as_str())
                .map_or(10_000, |r| r.limit("folderEntries"));
            let mut answer = json!({ "uploadId": id, "maxEntries": entries, "maxFileBytes": w.sc.file_bytes.unwrap_or(64 << 20), "maxBytes": max });
            if w.breaks(Mutant::FolderBeginWithoutMaxEntries) {
                answer.as_object_mut().map(|o| o.remove("maxEntries"));
            }
            Reply::Ok(answer)
        }
        None => {
            let max = w.uploads[&id].max;
            Reply::Ok(json!({ "uploadId": id, "maxBytes": max }))
        }
    }
}

/// A folder upload's limits: maxEntries (folderEntries), maxFileBytes (the file limit) and
/// maxBytes, what its files may hold together (what is left of the totals).
fn open_folder(w: &World, p: &Value, upload: &mut Upload) {
    let file = w.sc.file_bytes.unwrap_or(64 << 20);
    let entries = run_of(w, p).map_or(10_000, |r| r.limit("folderEntries"));
    let (tenant, agent) = left(w);
    upload.max = match tenant.min(agent) {
        u64::MAX => file.saturating_mul(entries),
        t => t,
    };
    upload.folder = Some(super::folders::FolderUpload {
        files: Default::default(),
        max_entries: entries,
        max_file: file,
    });
}

/// `op: "chunk"`: the bytes at the upload's end (a repeat of the last chunk taken once).
fn append(w: &mut World, p: &Value, data: Option<Vec<u8>>) -> Reply {
    let id = p
        .get("uploadId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let twice = w.breaks(Mutant::RepeatChunkTakenTwice);
    let any_offset = w.breaks(Mutant::ChunkOffsetUnchecked);
    let survives = w.breaks(Mutant::UploadSurvivesRun);
    let unchecked = w.breaks(Mutant::UploadBytesUnchecked);
    let second_dropped = w.breaks(Mutant::LaterChunksDropped);
    let older_taken = w.breaks(Mutant::OlderOffsetAcknowledged);
    let Some(u) = w.uploads.get_mut(id) else {
        return Reply::Err("invalid", format!("no upload {id}"));
    };
    // An upload the run left open ended with it.
    if p.get("runId").and_then(Value::as_str) != Some(u.run.as_str()) && !survives {
        return Reply::Err("invalid", format!("no upload {id} in this run"));
    }
    let offset = p.get("offset").and_then(Value::as_u64).unwrap_or(u64::MAX);
    let d = data.unwrap_or_default();
    // The mutant takes any offset already received for a repeat.
    let older = older_taken && offset < u.bytes.len() as u64;
    if (u.last == Some((offset, d.len())) || older) && !twice {
        return Reply::Ok(json!({ "received": u.bytes.len() }));
    }
    if offset != u.bytes.len() as u64 && !twice && !any_offset {
        return Reply::Err(
            "invalid",
            format!("offset {offset}: {} bytes received", u.bytes.len()),
        );
    }
    u.last = Some((offset, d.len()));
    if offset == 0 || !second_dropped {
        u.bytes.extend_from_slice(&d);
    }
    if u.bytes.len() as u64 > u.max && !unchecked {
        let max = u.max;
        return w.over_limit("limitBytes", max, "");
    }
    Reply::Ok(json!({ "received": u.bytes.len() }))
}

/// `op: "abort"`: the upload ends, nothing written.
fn abort(w: &mut World, p: &Value) -> Reply {
    let id = p
        .get("uploadId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let gone = if w.breaks(Mutant::AbortKeepsUpload) {
        !w.uploads.contains_key(id)
    } else {
        w.uploads.remove(id).is_none()
    };
    let status = if gone && !w.breaks(Mutant::AbortOfGoneUploadRefused) {
        "aborted"
    } else if gone {
        return Reply::Err("invalid", format!("no upload {id}"));
    } else {
        "ended"
    };
    Reply::Ok(json!({ "status": status }))
}

/// An artifact that exists outside what the run wrote (the control protocol's `artifact.seed`):
/// `scope` is `session`, `tenant-named` (Tenant-wide, named by the session's messages),
/// `tenant-unnamed`, `other-session` or `agent-disk`; `kind` is `file` or `folder` (a folder
/// version whose files hold `bytes`).
pub fn seed(w: &mut World, name: &str, bytes: &[u8], scope: &str, kind: &str) -> Value {
    let aid = format!("art-{}", w.artifacts.len() + 1);
    let aid = crate::suites::core_api::freedom::id(&w.knobs(), "artifactId", &aid);
    let kind = if kind == "folder" { "folder" } else { "file" };
    let meta = json!({
        "artifactId": aid, "kind": kind, "name": name, "version": 1,
        "contentType": "application/octet-stream", "size": bytes.len(),
        "sha256": crate::hash::sha256_hex(bytes),
        "tenantWide": scope.starts_with("tenant")
    });
    w.artifacts.insert(
        aid.clone(),
        json!({ "meta": meta, "base64": b64(bytes), "scope": scope }),
    );
    json!({ "artifactId": aid, "version": 1 })
}

/// Issue 43 (harness role): a file artifact of the session a scenario's messages name, under
/// the id the scenario gives it.
pub fn seed_file(w: &mut World, aid: &str, name: &str, content_type: &str, bytes: &[u8]) {
    let meta = json!({
        "artifactId": aid, "kind": "file", "name": name, "version": 1,
        "contentType": content_type, "size": bytes.len(),
        "sha256": crate::hash::sha256_hex(bytes), "tenantWide": false
    });
    w.artifacts.insert(
        aid.to_string(),
        json!({ "meta": meta, "base64": b64(bytes), "scope": "session" }),
    );
}

/// An artifact's `sha256`: the SHA-256 of its bytes (the mutant's is another hash).
fn sha256_of(w: &World, bytes: &[u8]) -> String {
    if w.breaks(Mutant::ArtifactSha256NotItsBytes) {
        return format!("{:016x}", crate::hash::fnv1a64(bytes));
    }
    if w.decides(Variant::Sha256Prefixed) {
        return format!("sha256:{}", crate::hash::sha256_hex(bytes));
    }
    crate::hash::sha256_hex(bytes)
}

/// What is left of the Tenant's total and of the Agent's (every artifact stored counts for the
/// Tenant; the session's own, and the other sessions' and disk versions of its Agent, for the
/// Agent), `u64::MAX` for a total not set.
fn left(w: &World) -> (u64, u64) {
    let size = |a: &Value| -> u64 {
        let versions = a["older"].as_array().map_or(0, |o| {
            o.iter()
                .map(|x| x["meta"]["size"].as_u64().unwrap_or(0))
                .sum()
        });
        a["meta"]["size"].as_u64().unwrap_or(0) + versions
    };
    let tenant: u64 = w.artifacts.values().map(size).sum();
    let agent: u64 = w
        .artifacts
        .values()
        .filter(|a| !a["scope"].as_str().is_some_and(|s| s.starts_with("tenant")))
        .map(size)
        .sum();
    let of = |total: Option<u64>, used: u64| total.map_or(u64::MAX, |t| t.saturating_sub(used));
    (of(w.sc.tenant_bytes, tenant), of(w.sc.agent_bytes, agent))
}

/// An upload a run left open ends with it, and nothing of it is stored (the mutant stores it).
pub fn end_uploads_of(w: &mut World, run: &str) {
    let open: Vec<String> = w
        .uploads
        .iter()
        .filter(|(_, u)| u.run == run)
        .map(|(id, _)| id.clone())
        .collect();
    for id in open {
        if w.breaks(Mutant::OpenUploadCommittedAtRunEnd) {
            let _ = commit(w, &id);
        } else if !w.breaks(Mutant::UploadSurvivesRun) {
            w.uploads.remove(&id);
        }
    }
}

fn commit(w: &mut World, id: &str) -> Reply {
    if w.uploads[id].folder.is_some() {
        let totals = left(w);
        return super::folders::commit(w, id, totals);
    }
    // The totals are checked again at commit.
    let (tenant, agent) = left(w);
    let size = w.uploads[id].bytes.len() as u64;
    if size > tenant.min(agent) && !w.breaks(Mutant::TotalsUncheckedAtCommit) {
        w.uploads.remove(id);
        let name = if tenant <= agent {
            "tenant_total"
        } else {
            "environment_total"
        };
        return w.over_limit("limitBytes", tenant.min(agent), &format!(" ({name})"));
    }
    let u = w.uploads.remove(id).expect("checked");
    // A new version keeps the ones before it readable by their version.
    let (aid, version, older) = super::next_version(w, u.of.as_deref(), &["meta", "base64"]);
    let meta = json!({
        "artifactId": aid, "kind": "file", "name": u.name, "version": version,
        "contentType": u.content_type, "size": u.bytes.len(),
        "sha256": sha256_of(w, &u.bytes), "tenantWide": false
    });
    let mut meta = meta;
    w.drop_broken(&mut meta, &[(Mutant::ContentTypeMissing, "contentType")]);
    w.artifacts.insert(
        aid.clone(),
        json!({ "meta": meta, "base64": b64(&u.bytes), "effectId": u.effect, "older": older }),
    );
    if let Some(k) = u.key {
        let k = key_in(w, &u.run, &k);
        w.keys_written.insert(k, aid);
    }
    Reply::Ok(json!({ "status": "written", "created": true, "artifact": meta }))
}

/// A key is the session's ("idempotent within the session"); the mutant keeps it per run.
fn key_in(w: &World, run: &str, key: &str) -> String {
    match w.breaks(Mutant::KeyPerRun) {
        true => format!("{run}\u{0}{key}"),
        false => key.to_string(),
    }
}
