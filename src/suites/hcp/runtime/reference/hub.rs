//! Contract point 5: the Binding hub. Scripted per pack by the case; a failed mint denies.

use crate::suites::hcp::runtime::{Denied, MintOutcome};
use std::collections::{BTreeMap, VecDeque};

#[derive(Debug, Default)]
pub struct Hub {
    script: BTreeMap<String, VecDeque<MintOutcome>>,
    minted: u32,
    /// Variant hub-used-up-mints: a used-up script mints instead of repeating its last outcome.
    pub used_up_mints: bool,
    /// The freedom variant: the tokens and identities it mints itself, in its words.
    pub freedom: Option<crate::knob::Freedom>,
}

/// A minted Binding: the token goes to the adapter only; the identity goes to audit.
#[derive(Debug, Clone)]
pub struct Minted {
    pub token: String,
    pub identity: String,
}

impl Hub {
    pub fn new(script: &BTreeMap<String, Vec<MintOutcome>>) -> Self {
        Hub {
            script: script
                .iter()
                .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
                .collect(),
            minted: 0,
            used_up_mints: false,
            freedom: None,
        }
    }

    /// Mint for `pack_id` through hub `hub`: the next scripted outcome, the last one again once
    /// the script is used up, or a fresh token for a pack with no script.
    pub fn mint(&mut self, pack_id: &str, hub: &str, principal_id: &str) -> Result<Minted, Denied> {
        self.minted += 1;
        let first_text = self.used_up_mints;
        let next = self.script.get_mut(pack_id).and_then(|q| {
            if q.len() > 1 || first_text {
                q.pop_front()
            } else {
                q.front().cloned()
            }
        });
        // What the script does not give, this hub mints in its own words.
        let own = |site: &str, text: String| match self.freedom {
            Some(f) => f.word(site, &text),
            None => text,
        };
        let token = || own("token", format!("tok-{pack_id}-{}", self.minted));
        let identity = || own("identity", format!("{hub}:{principal_id}"));
        match next {
            Some(o) if o.ok => Ok(Minted {
                token: o.token.unwrap_or_else(token),
                identity: o.identity.unwrap_or_else(identity),
            }),
            Some(o) => Err(Denied(o.error.unwrap_or_else(|| "hub refused".into()))),
            None => Ok(Minted {
                token: token(),
                identity: identity(),
            }),
        }
    }
}
