//! The pod probe (§ 9, "Inside the pod"): hcpspec's own pod host, run as a pod Agent's image by
//! a core's control shim (`pod.probe`, docs/core-protocol.md). From inside the pod it joins core
//! with what the pod's environment gave it, and reports what only the pod shows: its uid,
//! whether `/` takes a write, whether each folder the spec names writable takes one, and what
//! it found in `/harness` before writing there (nothing of our harness is copied in). The
//! report is POSTed as JSON to `NYLORUN_PROBE_REPORT`.
//!
//! `hcpspec-pod-probe` runs it on the real system; the reference core runs it in-process over a
//! pod of its own making ([`Simulated`]), whose mutants break § 9's workload sentence.

use serde_json::{json, Value};

/// The folders § 9 names writable ("with /workspace, /harness, /tmp and /skills writable").
pub const WRITABLE: [&str; 4] = ["/workspace", "/harness", "/tmp", "/skills"];

/// What the probe reads of the pod it runs in.
pub trait PodView {
    /// The uid the workload runs as.
    fn uid(&self) -> u32;
    /// Whether a new file can be written in `dir` (it is removed again).
    fn writes(&self, dir: &str) -> bool;
    /// The names in `dir` (none when it is not there).
    fn names(&self, dir: &str) -> Vec<String>;
}

/// The real system: the pod the probe's process runs in.
pub struct Os;

impl PodView for Os {
    fn uid(&self) -> u32 {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }

    fn writes(&self, dir: &str) -> bool {
        let path = std::path::Path::new(dir).join(format!(".hcpspec-probe-{}", std::process::id()));
        let wrote = std::fs::write(&path, b"probe").is_ok();
        let _ = std::fs::remove_file(&path);
        wrote
    }

    fn names(&self, dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "lost+found")
            .collect();
        names.sort();
        names
    }
}

/// The reference core's pod: uid 1000, a read-only root, the four folders writable and
/// `/harness` empty, but for what a mutant breaks.
pub struct Simulated {
    pub uid: u32,
    pub root_writable: bool,
    pub read_only: Vec<&'static str>,
    pub harness: Vec<String>,
}

impl PodView for Simulated {
    fn uid(&self) -> u32 {
        self.uid
    }
    fn writes(&self, dir: &str) -> bool {
        match dir {
            "/" => self.root_writable,
            d => WRITABLE.contains(&d) && !self.read_only.contains(&d),
        }
    }
    fn names(&self, dir: &str) -> Vec<String> {
        match dir {
            "/harness" => self.harness.clone(),
            _ => vec![],
        }
    }
}

/// What the probe reports of its pod: `/harness` is listed before the probe writes there.
pub fn facts(v: &dyn PodView) -> Value {
    let harness = v.names("/harness");
    let writable: serde_json::Map<String, Value> = WRITABLE
        .iter()
        .map(|d| (d.to_string(), json!(v.writes(d))))
        .collect();
    json!({
        "uid": v.uid(),
        "rootWritable": v.writes("/"),
        "writable": writable,
        "harness": harness,
    })
}

/// Where the probe joins and reports: what the pod's environment gives its host, and the
/// report's URL.
#[derive(Debug, Clone)]
pub struct Told {
    pub core_url: String,
    pub sandbox_id: String,
    pub pod_uid: String,
    pub join_token: String,
    pub report: String,
}

impl Told {
    /// From the process's environment (`hcpspec-pod-probe`).
    pub(crate) fn of_process() -> Result<Told, String> {
        let v = |k: &str| std::env::var(k).map_err(|_| format!("{k} is not set"));
        Ok(Told {
            core_url: v("NYLORUN_CORE_URL")?,
            sandbox_id: v("NYLORUN_SANDBOX_ID")?,
            pod_uid: v("NYLORUN_POD_UID")?,
            join_token: v("NYLORUN_JOIN_TOKEN")?,
            report: v("NYLORUN_PROBE_REPORT")?,
        })
    }
}

/// Join from the pod, then report: `{joined, joinStatus, uid, rootWritable, writable,
/// harness}`. The facts are read first, so a join's answer cannot change them.
pub(crate) async fn run(told: &Told, view: &dyn PodView) -> Result<(), String> {
    let mut report = facts(view);
    let http = crate::adapter::client::new_client();
    let authority = told
        .core_url
        .strip_prefix("ws://")
        .and_then(|r| r.split('/').next())
        .ok_or_else(|| {
            format!(
                "NYLORUN_CORE_URL is not ws://HOST:PORT/…: {}",
                told.core_url
            )
        })?;
    let join = http
        .post(format!("http://{authority}{}", super::pods::JOIN))
        .json(&json!({ "sandboxId": told.sandbox_id, "podUid": told.pod_uid, "joinToken": told.join_token }))
        .send()
        .await;
    let (status, answer) = match join {
        Ok(r) => (
            r.status().as_u16(),
            r.json::<Value>().await.unwrap_or(Value::Null),
        ),
        Err(e) => (0, json!({ "error": e.to_string() })),
    };
    report["joinStatus"] = json!(status);
    report["joined"] = json!((200..300).contains(&status) && answer["hostToken"].is_string());
    http.post(&told.report)
        .json(&report)
        .send()
        .await
        .map_err(|e| format!("the report to {}: {e}", told.report))?;
    Ok(())
}

/// `hcpspec-pod-probe`: 0 when the report was sent, 1 when not (why on stderr).
pub fn main() -> i32 {
    let told = match Told::of_process() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("hcpspec-pod-probe: {e}");
            return 1;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hcpspec-pod-probe: {e}");
            return 1;
        }
    };
    match rt.block_on(run(&told, &Os)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("hcpspec-pod-probe: {e}");
            1
        }
    }
}

/// The reference core's `pod.probe {pod, report}`: it runs pod `pod`'s Agent with the probe as
/// its image, in-process over its [`Simulated`] pod, and answers once the probe has exited.
pub(crate) fn reference(
    rt: &tokio::runtime::Runtime,
    w: &crate::suites::world::model::Shared,
    core_url: &str,
    params: &Value,
) -> Result<Value, String> {
    use super::knobs::Mutant;
    let (told, pod) = {
        let g = crate::suites::world::model::lock(w);
        let envs = super::pods::environments(&g);
        let pod = params["pod"].as_u64().unwrap_or(0) as usize;
        let env = envs.get(pod).ok_or_else(|| {
            format!(
                "pod.probe: pod {} is no index of core.start's pods",
                params["pod"]
            )
        })?;
        let text = |k: &str| env[k].as_str().unwrap_or_default().to_string();
        let told = Told {
            core_url: core_url.to_string(),
            sandbox_id: text("sandboxId"),
            pod_uid: text("podUid"),
            join_token: text("joinToken"),
            report: params["report"].as_str().unwrap_or_default().to_string(),
        };
        let b = |m| g.breaks(m);
        let pod_view = Simulated {
            uid: if b(Mutant::PodRunsAsRoot) { 0 } else { 1000 },
            root_writable: b(Mutant::PodRootWritable),
            read_only: if b(Mutant::PodSkillsReadOnly) {
                vec!["/skills"]
            } else {
                vec![]
            },
            harness: match b(Mutant::PodHarnessCopiedIn) {
                true => vec!["nylorun-harness".to_string()],
                false => vec![],
            },
        };
        // A core that starts its own entrypoint in the pod never runs the image's.
        (
            told,
            (!b(Mutant::PodEntrypointReplaced)).then_some(pod_view),
        )
    };
    if let Some(view) = pod {
        rt.block_on(run(&told, &view))?;
    }
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real view reads the process it runs in: its uid, and a folder it can write.
    #[test]
    fn the_os_view_reads_this_process() {
        let f = facts(&Os);
        assert_eq!(f["uid"], json!(unsafe { libc::geteuid() }));
        assert!(Os.writes(&std::env::temp_dir().to_string_lossy()));
        assert!(!Os.writes("/no/such/folder/of/hcpspec"));
        assert!(f["writable"].as_object().is_some_and(|w| w.len() == 4));
    }

    /// The reference's pod is § 9's workload unless a mutant breaks it.
    #[test]
    fn the_simulated_pod_is_the_spec_s_workload() {
        let pod = Simulated {
            uid: 1000,
            root_writable: false,
            read_only: vec![],
            harness: vec![],
        };
        let f = facts(&pod);
        assert_eq!(f["uid"], 1000);
        assert_eq!(f["rootWritable"], false);
        assert!(WRITABLE.iter().all(|d| f["writable"][d] == true));
        assert_eq!(f["harness"], json!([]));
    }
}
