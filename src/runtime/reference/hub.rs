//! Contract point 5: the Binding hub. Scripted per pack by the case; a failed mint denies.

use crate::runtime::MintOutcome;
use std::collections::{BTreeMap, VecDeque};

#[derive(Debug, Default)]
pub struct Hub {
    script: BTreeMap<String, VecDeque<MintOutcome>>,
    minted: u32,
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
        }
    }

    /// Mint for `pack_id` through hub `hub`: the next scripted outcome, or a fresh token when
    /// the script has none left.
    pub fn mint(&mut self, pack_id: &str, hub: &str, principal_id: &str) -> Result<Minted, String> {
        self.minted += 1;
        match self.script.get_mut(pack_id).and_then(|q| q.pop_front()) {
            Some(o) if o.ok => Ok(Minted {
                token: o
                    .token
                    .unwrap_or_else(|| format!("tok-{pack_id}-{}", self.minted)),
                identity: o
                    .identity
                    .unwrap_or_else(|| format!("{hub}:{principal_id}")),
            }),
            Some(o) => Err(o.error.unwrap_or_else(|| "hub refused".into())),
            None => Ok(Minted {
                token: format!("tok-{pack_id}-{}", self.minted),
                identity: format!("{hub}:{principal_id}"),
            }),
        }
    }
}
