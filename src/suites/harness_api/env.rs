//! What the launch contract (docs/harness-api.md § 1) gives a harness: `NYLORUN_CORE_URL`,
//! `NYLORUN_HARNESS_TOKEN`, `NYLORUN_GATES_URL` and `HARNESS_NAME`. `launch` starts harnesses
//! with it and the reference harness reads it; neither imports the other for it.

/// What a harness is given.
#[derive(Debug, Clone)]
pub struct LaunchEnv {
    pub core_url: String,
    pub token: String,
    pub gates_url: String,
    pub name: String,
}

impl LaunchEnv {
    /// What a launched harness reads from its environment, if all four are set.
    pub fn of_process() -> Option<LaunchEnv> {
        let v = |k| std::env::var(k).ok();
        Some(LaunchEnv {
            core_url: v("NYLORUN_CORE_URL")?,
            token: v("NYLORUN_HARNESS_TOKEN")?,
            gates_url: v("NYLORUN_GATES_URL")?,
            name: v("HARNESS_NAME")?,
        })
    }

    pub fn vars(&self) -> [(&'static str, String); 4] {
        [
            ("NYLORUN_CORE_URL", self.core_url.clone()),
            ("NYLORUN_HARNESS_TOKEN", self.token.clone()),
            ("NYLORUN_GATES_URL", self.gates_url.clone()),
            ("HARNESS_NAME", self.name.clone()),
        ]
    }
}
