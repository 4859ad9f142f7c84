//! Issue 44, order: the mutants a runtime without a denial map shows only by what ran. The
//! pipeline's misorders twinned without a map (judged by the cases that require one), a Binding
//! minted inside exec ahead of the checks it must follow, and an adapter's failure answered as a
//! denial after its bin ran.

use super::{mint_in_exec, with_blank_args, Reference};
use crate::suites::hcp::pack::Pack;
use crate::suites::hcp::runtime::mutant::Mutant;
use crate::suites::hcp::runtime::ExecRequest;
use serde_json::Value;

/// The misorder mutants without a denial map: each and the mutant it twins.
fn mapped_twin(m: Mutant) -> Option<Mutant> {
    Some(match m {
        Mutant::ConfirmBeforeGrantsUnmapped => Mutant::ConfirmBeforeGrants,
        Mutant::ProjectBeforeCapabilityUnmapped => Mutant::ProjectBeforeCapability,
        Mutant::ConfirmBeforeBrainUnmapped => Mutant::ConfirmBeforeBrain,
        Mutant::BindingBeforeConfirmUnmapped => Mutant::BindingBeforeConfirm,
        Mutant::AdapterBeforeBindingUnmapped => Mutant::AdapterBeforeBinding,
        _ => return None,
    })
}

/// The mutants that declare no denial map: a runtime may leave it out, and then only what ran
/// (or a case's requirement of the map) tells them apart.
pub(super) fn unmapped(m: Mutant) -> bool {
    mapped_twin(m).is_some()
        || matches!(
            m,
            Mutant::MintBeforeGrants | Mutant::MintBeforeConfirm | Mutant::AdapterFailureAsDenial
        )
}

impl Reference {
    /// A misorder of the pipeline, by its mutant or that mutant's twin without a denial map.
    pub(super) fn misorders(&self, m: Mutant) -> bool {
        self.broken(m) || self.knobs.mutant.and_then(mapped_twin) == Some(m)
    }

    /// mint-before-grants, mint-before-confirm (`m`): the exec's Binding minted ahead of the
    /// checks it must follow, as a runtime minting in every exec does; a failed mint denies. A
    /// Binding minted is this exec's only (it connects nothing), so only the order is broken.
    pub(super) fn mint_early(&mut self, m: Mutant, req: &ExecRequest) -> Result<(), String> {
        if !self.broken(m) {
            return Ok(());
        }
        let pack = &self.packs[&req.pack_id];
        let elevation = self.elevation_denial(pack);
        let principal = &self.config.principal.id;
        mint_in_exec(&mut self.hub, elevation, pack, req, principal).map(|_| ())
    }

    /// adapter-failure-as-denial: an exec whose args do not render spawns its bin anyway (every
    /// missing arg blank) and answers the adapter's failure as its error.
    pub(super) fn failure_as_denial(
        &self,
        pack: &Pack,
        req: &ExecRequest,
        result: Result<Value, String>,
    ) -> Result<Value, String> {
        match result {
            Err(e)
                if self.broken(Mutant::AdapterFailureAsDenial) && e.starts_with("invalid args") =>
            {
                let blank = ExecRequest {
                    args: with_blank_args(pack, &req.verb_key, &req.args),
                    ..req.clone()
                };
                Err(match self.run_adapter(pack, &blank, None) {
                    Ok(_) => "adapter failed: exit 2 (usage: missing argument)".into(),
                    Err(e) => format!("adapter failed: {e}"),
                })
            }
            other => other,
        }
    }
}
