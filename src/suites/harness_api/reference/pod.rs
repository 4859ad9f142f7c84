//! The reference harness as a pod's host (§ 9, the launch contract's pod-host mode): it joins
//! with its pod's parameters, connects with the join answer's host token, renews at the cadence
//! it was told, and joins again when a renewal is refused.

use super::{Knobs, Mutant, Owned};
use crate::suites::harness_api::env::{LaunchEnv, PodEnv};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const JOIN: &str = "/nylorun/harness/v1/host/join";
const RENEW: &str = "/nylorun/harness/v1/host/renew";

/// A joined host: the host token it holds now, and its renewals running.
pub(super) struct Host {
    token: Arc<Mutex<String>>,
    join_token: String,
    _renewals: Owned,
}

impl Host {
    /// Join, then keep joined: renewals every `renew_ms`, a new join after a refused one.
    pub(super) async fn join(env: &LaunchEnv, pod: &PodEnv, k: Knobs) -> Result<Host, String> {
        let http = crate::adapter::client::new_client();
        let base = base(&env.core_url)?;
        let token = Arc::new(Mutex::new(join(&http, &base, pod, k).await?));
        let renewals = tokio::spawn(keep(http, base, pod.clone(), k, token.clone()));
        Ok(Host {
            token,
            join_token: pod.join_token.clone(),
            _renewals: Owned(renewals),
        })
    }

    /// The WebSocket bearer: the host token.
    pub(super) fn bearer(&self, k: Knobs) -> String {
        match k.breaks(Mutant::HostBearerJoinToken) {
            true => self.join_token.clone(),
            false => self.token.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }
}

/// The join and renewal routes' base: core's listener over HTTP (`ws://HOST:PORT/…` →
/// `http://HOST:PORT`).
fn base(core_url: &str) -> Result<String, String> {
    let rest = core_url
        .strip_prefix("ws://")
        .ok_or_else(|| format!("NYLORUN_CORE_URL is not ws://…: {core_url}"))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    Ok(format!("http://{authority}"))
}

/// `POST .../host/join {sandboxId, podUid, joinToken}`: the answer's host token.
async fn join(
    http: &reqwest::Client,
    base: &str,
    pod: &PodEnv,
    k: Knobs,
) -> Result<String, String> {
    let mut body =
        json!({ "sandboxId": pod.sandbox_id, "podUid": pod.pod_uid, "joinToken": pod.join_token });
    if k.breaks(Mutant::JoinWithoutPodUid) {
        body.as_object_mut().map(|o| o.remove("podUid"));
    }
    // Members of its own: the spec prints the join's members, not a closed schema.
    if let Some(f) = k.freedom {
        f.extra("host.join", &mut body);
    }
    let answer: Value = http
        .post(format!("{base}{JOIN}"))
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    answer["hostToken"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("a join answered without hostToken: {answer}"))
}

/// Renew every `renew_ms` with the host token; join again when a renewal is refused.
async fn keep(
    http: reqwest::Client,
    base: String,
    pod: PodEnv,
    k: Knobs,
    token: Arc<Mutex<String>>,
) {
    if k.breaks(Mutant::HostNeverRenews) {
        return;
    }
    let every = match k.breaks(Mutant::HostRenewsTooOften) {
        true => pod.renew_ms / 20,
        false => pod.renew_ms,
    };
    // The host token a renewal carries: the one held now, but for the mutants'.
    let mut stale: Option<String> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(every.max(1))).await;
        let held = token.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let bearer = match k.breaks(Mutant::HostRenewsWithJoinToken) {
            true => pod.join_token.clone(),
            false => stale.clone().unwrap_or_else(|| held.clone()),
        };
        let renewed = http
            .post(format!("{base}{RENEW}"))
            .bearer_auth(&bearer)
            .json(&json!({}))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if renewed || k.breaks(Mutant::HostRenewRefusalIgnored) {
            continue;
        }
        if let Ok(new) = join(&http, &base, &pod, k).await {
            if k.breaks(Mutant::HostRejoinKeepsOldToken) {
                stale.get_or_insert(held);
            }
            *token.lock().unwrap_or_else(|p| p.into_inner()) = new;
        }
    }
}
