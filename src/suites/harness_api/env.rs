//! What the launch contract (docs/harness-api.md § 1) gives a harness: `NYLORUN_CORE_URL`,
//! `NYLORUN_HARNESS_TOKEN`, `NYLORUN_GATES_URL` and `HARNESS_NAME`; in the pod-host mode (§ 9),
//! a pod's join parameters instead of the harness token. `launch` starts harnesses with it and
//! the reference harness reads it; neither imports the other for it.

/// What a harness is given.
#[derive(Debug, Clone)]
pub struct LaunchEnv {
    pub core_url: String,
    /// The harness token (not given to a pod's host, which "holds no harness token").
    pub token: String,
    pub gates_url: String,
    pub name: String,
    /// The pod-host mode: the harness is a pod's host and joins with these.
    pub pod: Option<PodEnv>,
}

/// What a pod's environment gives its host (§ 9): the join parameters, and the renewal cadence
/// ("Every 5 minutes", scaled down like every timer of a scenario).
#[derive(Debug, Clone)]
pub struct PodEnv {
    pub sandbox_id: String,
    pub pod_uid: String,
    pub join_token: String,
    pub renew_ms: u64,
}

impl LaunchEnv {
    /// What a launched harness reads from its environment: the three common variables, and
    /// the harness token or a pod's join parameters.
    pub fn of_process() -> Option<LaunchEnv> {
        let v = |k| std::env::var(k).ok();
        let pod = match v("NYLORUN_JOIN_TOKEN") {
            Some(join_token) => Some(PodEnv {
                sandbox_id: v("NYLORUN_SANDBOX_ID")?,
                pod_uid: v("NYLORUN_POD_UID")?,
                join_token,
                renew_ms: v("NYLORUN_HOST_RENEW_MS")?.parse().ok()?,
            }),
            None => None,
        };
        Some(LaunchEnv {
            core_url: v("NYLORUN_CORE_URL")?,
            token: match pod {
                Some(_) => String::new(),
                None => v("NYLORUN_HARNESS_TOKEN")?,
            },
            gates_url: v("NYLORUN_GATES_URL")?,
            name: v("HARNESS_NAME")?,
            pod,
        })
    }

    pub fn vars(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![
            ("NYLORUN_CORE_URL", self.core_url.clone()),
            ("NYLORUN_GATES_URL", self.gates_url.clone()),
            ("HARNESS_NAME", self.name.clone()),
        ];
        match &self.pod {
            None => out.push(("NYLORUN_HARNESS_TOKEN", self.token.clone())),
            Some(p) => out.extend([
                ("NYLORUN_SANDBOX_ID", p.sandbox_id.clone()),
                ("NYLORUN_POD_UID", p.pod_uid.clone()),
                ("NYLORUN_JOIN_TOKEN", p.join_token.clone()),
                ("NYLORUN_HOST_RENEW_MS", p.renew_ms.to_string()),
            ]),
        }
        out
    }

    /// The variable by which hcpspec knows the harness's processes (an orphan's too): its
    /// token, or its pod's join token.
    pub fn marker(&self) -> String {
        match &self.pod {
            None => format!("NYLORUN_HARNESS_TOKEN={}", self.token),
            Some(p) => format!("NYLORUN_JOIN_TOKEN={}", p.join_token),
        }
    }
}
