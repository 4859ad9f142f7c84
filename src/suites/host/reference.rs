//! hcpspec's reference adapter: spec 003's `harnessruntime` in Rust, over the renderings of
//! `seams`. Its mutants break one rule each ([`Mutant`]); its variants decide an open point
//! otherwise ([`Variant`]). Both are knobs of this one adapter, so each differs from the reference
//! by exactly its rule.

use super::core::Dialect;
use super::seams::*;
use crate::knob::Class;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

crate::mutants! {
    /// The rules this adapter's mutants break, one each.
    pub enum Mutant {
        AttemptCloserOptional = "attempt-closer-optional", ["0"], "binds a session whose applier is not an AttemptCloser";
        NilFaultChannelAccepted = "nil-fault-channel-accepted", ["0"], "binds a session whose fault channel is nil";
        NoReleaseOnRefusal = "no-release-on-refusal", ["0"], "does not release a session bind refuses";
        ReleaseUnderLaunchContext = "release-under-launch-context", ["0"], "releases a refused session under the launch context";
        ReleaseErrorDropped = "release-error-dropped", ["0"], "a failed release is not joined to the refusal";
        FaultReporterOptional = "fault-reporter-optional", ["0"], "treats PersistenceFaultReporter as optional";
        AbandonerOptional = "abandoner-optional", ["0"], "treats ResidencyAbandoner as optional";
        RequiredSixUnchecked = "required-six-unchecked", ["0"], "binds a session that lacks one of the six required capabilities";
        AttemptCloseNotForwarded = "attempt-close-not-forwarded", ["0"], "the bound AttemptCloser does not forward to harness";
        NoLegacyLivePair = "no-legacy-live-pair", ["0"], "the bound session lacks the older live/reasoning pair";
        LiveNotRelayed = "live-not-relayed", ["0"], "no live relay carries a preview frame: LiveOptionsSubscriber relays none, nor does the older pair through it";
        DropsUncounted = "drops-uncounted", ["0"], "EphemeralDrops does not count refused preview frames";
        PrincipalDroppedOnInterrupt = "principal-dropped-on-interrupt", ["0"], "an interrupt crosses without its Principal";
        MetadataDroppedOnCreate = "metadata-dropped-on-create", ["0"], "a create crosses without its Metadata";
        NoRigSessionId = "no-rig-session-id", ["0"], "a create launches without the binding's RigSessionID";
        OneRecoveryCapability = "one-recovery-capability", ["0"], "the target declares one recovery capability";
        RecoveryWrongPair = "recovery-wrong-pair", ["0"], "the target declares two recovery capabilities, attempt closing and residency abandoning, not persistence faults";
        OneRigForAll = "one-rig-for-all", ["1"], "RigPerTenant routes every tenant to one rig";
        SharedRigAcmeOnly = "shared-rig-acme-only", ["1"], "SharedRig serves one tenant's sessions only";
        CompatIdNormalised = "compat-id-normalised", ["1"], "the compatibility id is trimmed and lower-cased";
        OpensStore = "opens-store", ["1"], "opens the tenant's journal store at bind";
        ProductDecoderIgnored = "product-decoder-ignored", ["1"], "WithBlockDecoder's decoder is not used";
        UnwrapsWrapper = "unwraps-wrapper", ["H0"], "binds through a wrapper's Unwrap";
        WaitIdleNotForwarded = "wait-idle-not-forwarded", ["H0"], "the bound IdleWaiter does not forward WaitIdle to harness";
        RequestFieldsDropped = "request-fields-dropped", ["H1"], "the rig seam receives only the tenant";
        RestoreRequestDropped = "restore-request-dropped", ["H2"], "a restore's request never reaches the rig seam";
        RestoreWrongUuid = "restore-wrong-uuid", ["H2"], "RestoreSession is given Host's session id, not the rig's UUID";
        ResumeFromNow = "resume-from-now", ["H3"], "a non-empty resume point is served from now";
        PublicationWithoutTenant = "publication-without-tenant", ["H4"], "a publication lacks the launch's tenant";
        PublicationRigSession = "publication-rig-session", ["H4"], "a publication names the rig's session, not Host's";
        UncommittedForwarded = "uncommitted-forwarded", ["H4"], "forwards deliveries that are not committed publications";
        BindTimeEpoch = "bind-time-epoch", ["H5"], "the epoch is read once, at bind";
        ResidencyEpoch = "residency-epoch", ["H5"], "Host's residency epoch is stamped as the journal epoch";
        EpochZeroStamped = "epoch-zero-stamped", ["H5"], "a session holding no grant gets epoch 0";
        CreateMessageDropped = "create-message-dropped", ["H6"], "a create's first message is dropped";
        CreateNotRepresented = "create-not-represented", ["H6"], "a create's body reaches the decoder as it came";
        RestoreWithBlocks = "restore-with-blocks", ["H6"], "a restore carries the blocks of its payload";
        GateSourceAgent = "gate-source-agent", ["H6"], "a gate_response's source is not the user";
        GateAttemptDropped = "gate-attempt-dropped", ["H6"], "a gate_response lacks the authorized attempt";
        CreateRefused = "create-refused", ["H6"], "create and restore are refused (before harness v0.36.0)";
        DefaultDecoderStrict = "default-decoder-strict", ["H6"], "the default decoder refuses principal and metadata";
        AnyKindAdmitted = "any-kind-admitted", ["H6"], "a command of an unknown kind is admitted";
        EmptyInputAdmitted = "empty-input-admitted", ["H7"], "an input that decodes to no blocks is admitted";
        NoDefaultDecoder = "no-default-decoder", ["H7"], "without WithBlockDecoder every input is refused";
        PayloadRefDereferenced = "payload-ref-dereferenced", ["H8"], "the adapter reads a referenced payload's object";
        PayloadRefIgnored = "payload-ref-ignored", ["H8"], "an unresolved PayloadRef is admitted without a payload";
        RecoveryUnheld = "recovery-unheld-at-bind", ["0"], "declares both recovery capabilities but holds neither at bind: binds a session whose applier is no AttemptCloser or whose fault channel is nil";
        OptionalAsInDepartment = "optional-as-in-department", ["0"], "treats PersistenceFaultReporter and ResidencyAbandoner as optional, as department does";
        ReleaseErrorReplacesRefusal = "release-error-replaces-refusal", ["0"], "a failed release's error replaces the refusal instead of being joined to it";
        LegacyPairSilent = "legacy-pair-silent", ["0"], "the older live/reasoning pair is exposed but relays no frame";
        DoneNotForwarded = "done-not-forwarded", ["0"], "the bound Liveness does not forward Done to harness";
        ReleaseNotForwarded = "release-not-forwarded", ["0"], "the bound Releaser does not forward ReleaseResidency to harness";
        SessionIdNotHarness = "session-id-not-harness", ["H0"], "RigSession.ID answers Host's session id, not harness's SessionID";
        CoveredThroughDropped = "covered-through-dropped", ["H4"], "a publication's CoveredThrough is not the delivery's";
        GateResponseUndecoded = "gate-response-undecoded", ["H6"], "a gate_response is admitted without harness's decoded answer";
        GateResponseRefused = "gate-response-refused", ["H6"], "a gate_response is refused (before harness v0.35.0)";
        RegistrationAgentDropped = "registration-agent-dropped", ["0"], "Registration registers the target under no agent id";
        NewSessionRestores = "new-session-restores", ["0"], "a create bind launches through the rig's RestoreSession, not its NewSession";
        RestoreViaNewSession = "restore-via-new-session", ["H2"], "a restore bind launches through the rig's NewSession, not its RestoreSession";
        SubscriptionNotForwarded = "subscription-not-forwarded", ["H4"], "PublicationSubscriber answers without subscribing to harness's committed public events";
        ApplyNotForwarded = "apply-not-forwarded", ["0"], "CommandApplier answers applied without handing the command to harness's applier";
        LeaseEpochResidency = "lease-epoch-residency", ["H5"], "the bound LeaseEpochReporter answers Host's residency epoch, not the session's";
        EmptyCreateRefused = "empty-create-refused", ["H6"], "a create without blocks (an idle create) is refused";
        // The two rules the encoding cases guard, broken by an adapter whose Core encodes its
        // bodies otherwise: the cases must still fail them once they speak that Core's format.
        PrincipalDroppedOtherEncoding = "principal-dropped-other-encoding", ["0"], "on another Core encoding, a gate_response crosses without its Principal";
        GateSourceAgentOtherEncoding = "gate-source-agent-other-encoding", ["H6"], "on another Core encoding, a gate_response's source is not the user";
        // issue 44, host: the seams' other ways to break (a failure swallowed, an answer before
        // harness's, a channel of its own), a structural twin, an object read before a refusal.
        StructuralTwin = "structural-twin", ["H0"], "discovers a capability by its methods' names (a structural twin), so binds a wrapper that forwards them by name without declaring harness's interface";
        WaitIdleErrorDropped = "wait-idle-error-dropped", ["H0"], "WaitIdle is forwarded to harness, but harness's failure is answered as idle";
        WaitIdleAsync = "wait-idle-async", ["H0"], "WaitIdle is forwarded to harness without waiting for it: it answers before the session is idle";
        DoneOwnChannel = "done-own-channel", ["0"], "Done is forwarded to harness, but answers a channel of the adapter's own that never closes";
        ReleaseErrorSwallowed = "release-error-swallowed", ["0"], "the bound Releaser forwards ReleaseResidency, but answers released when harness's release failed";
        PayloadRefReadThenRefused = "payload-ref-read-then-refused", ["H8"], "reads a referenced payload's object (to check it), then refuses the command as unresolved";
        ReleaseOnlyRecoveryRefusals = "release-only-recovery-refusals", ["0"], "releases a session refused for the recovery declaration (no AttemptCloser, a nil fault channel), not one refused for another missing capability";
        NoReleaseOnRestoreRefusal = "no-release-on-restore-refusal", ["0"], "releases a refused session on a create bind, not on a restore bind";
        PayloadRefIgnoredOnCreate = "payload-ref-ignored-on-create", ["H8"], "an unresolved PayloadRef is refused where an input body is read, but a create carrying one is admitted as an idle create";
        PayloadRefIgnoredOnRestore = "payload-ref-ignored-on-restore", ["H8"], "an unresolved PayloadRef on a restore is admitted, a restore carrying nothing";
        CloseAttemptErrorDropped = "close-attempt-error-dropped", ["0"], "the bound AttemptCloser forwards to harness's, but answers closed when harness's failed";
        EpochCheckedOnInputOnly = "epoch-checked-on-input-only", ["H5"], "a session holding no grant is refused an input, but its other commands are stamped epoch 0";
        RegistrationDefaultCapabilities = "registration-default-capabilities", ["0"], "Registration carries the department's default capabilities, not the target's";
        PublicationRigSessionOnRestore = "publication-rig-session-on-restore", ["H4"], "a restored session's publications name the rig's UUID, not Host's session id (a created one's are right)";
        RestoreOnFirstRig = "restore-on-first-rig", ["1"], "RigPerTenant routes a create to its tenant's rig, but every restore to the first tenant's";
        KindCaseFolded = "kind-case-folded", ["H6"], "a command's kind is matched without regard to case, so `Input` is admitted as an input";
        RecoveryUnheldOnRestore = "recovery-unheld-on-restore", ["0"], "holds the recovery declaration at a create bind only: a restored session without an AttemptCloser, or with a nil fault channel, is bound";
        RequiredUncheckedOnRestore = "required-unchecked-on-restore", ["0"], "checks the capabilities a bound session must have at a create bind only: a restored session lacking one is bound";
        LivePathSkipsFirst = "live-path-skips-first", ["H3", "H4"], "a subscription without a resume point takes the first delivery as its position and delivers only those after it";
        EmptyProductInputAdmitted = "empty-product-input-admitted", ["H7"], "an input the default decoder reads to no blocks is refused, but one WithBlockDecoder's decoder reads to none is admitted";
        CapabilityRefusalUnderLaunch = "capability-refusal-under-launch", ["0"], "a session refused for the recovery declaration is released detached, one refused for a missing capability under the launch context";
        CapabilityRefusalErrorDropped = "capability-refusal-error-dropped", ["0"], "a failed release is joined to a refusal for the recovery declaration, not to one for a missing capability";
        ApplyErrorSwallowed = "apply-error-swallowed", ["0"], "CommandApplier hands the command to harness's applier, but answers applied when harness's failed";
        ResumePointTrimmed = "resume-point-trimmed", ["H3"], "a resume point of white space only is taken for none and served from now";
        ResumeFilteredFromLive = "resume-filtered-from-live", ["H3"], "a resume point among the live deliveries is served from after it (refused only when it is not among them)";
        AdapterDecidesRelay = "adapter-decides-relay", ["0"], "the adapter decides what is relayed: tool steps are not, text and reasoning steps are";
        PairDropsUncounted = "pair-drops-uncounted", ["0"], "EphemeralDrops counts frames LiveOptionsSubscriber's subscriber refused, not those the older pair's refused";
    }
}

crate::variants! {
    /// The open points this adapter's allowed variants decide otherwise.
    pub enum Variant {
        ProbeEpochAtBind = "probe-epoch-at-bind", "reads the epoch at bind too (and ignores it)";
        MetadataEverywhere = "metadata-everywhere", "Metadata crosses on all five kinds, not only create and input";
        RepresentPrincipal = "represent-principal", "the re-presented create body carries principal and metadata";
        OtherRefusalKinds = "other-refusal-kinds", "kinds the spec does not name are all `invalid`";
        UnknownTenantShared = "unknown-tenant-shared", "a tenant without a rig of its own is refused by kind `unsupported`";
        OtherBodyEncoding = "other-body-encoding", "its Core encodes InputRequest, CreateRequest, blocks and the stored gate body otherwise (its shim answers host.encode)";
        PayloadRefWithBytesAdmitted = "payload-ref-with-bytes-admitted", "a command carrying payload bytes and a PayloadRef is admitted from its bytes (the reference counts as resolved)";
    }
}

/// Which mutant or variant this adapter is, if any.
pub type Knobs = crate::knob::Knobs<Mutant, Variant>;

/// The Core this adapter is built on: the reference's, or another encoding (the freedom
/// variant's seed may take the other: how Core encodes its bodies is Core's, A2, A3).
pub fn dialect(k: &Knobs) -> Dialect {
    let other = k.decides(Variant::OtherBodyEncoding)
        || k.breaks(Mutant::PrincipalDroppedOtherEncoding)
        || k.breaks(Mutant::GateSourceAgentOtherEncoding)
        || shape(k, "core");
    if other {
        Dialect::Other
    } else {
        Dialect::Reference
    }
}

/// The freedom variant's coin for an open shape at `site` (false for every other adapter).
fn shape(k: &Knobs, site: &str) -> bool {
    k.free(Class::Shapes)
        .is_some_and(|f| f.coin(Class::Shapes, site))
}

/// Whether the freedom variant demands the precondition at `site`.
fn demands(k: &Knobs, site: &str) -> bool {
    k.free(Class::Preconditions)
        .is_some_and(|f| f.coin(Class::Preconditions, site))
}

/// A refusal, as a value: the adapter's own text and the texts of others' errors joined to it
/// (harness's, a fake's), which travel whole.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub kind: &'static str,
    pub message: String,
    pub joined: Vec<String>,
}

impl Refusal {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            message: message.into(),
            joined: vec![],
        }
    }

    /// Another error's text joined to this refusal (Go's `errors.Join`).
    pub fn join(mut self, text: impl Into<String>) -> Refusal {
        self.joined.push(text.into());
        self
    }

    /// An open point's refusal: `invalid` under the variant that names every one so, any of
    /// the three under the freedom variant.
    fn open(knob: &Knobs, kind: &'static str, message: impl Into<String>) -> Refusal {
        let message = message.into();
        let kind = match knob.free(Class::Shapes) {
            _ if knob.decides(Variant::OtherRefusalKinds) => "invalid",
            Some(f) => ["incapable", "unsupported", "invalid"]
                [f.below(Class::Shapes, &format!("kind:{message}"), 3) as usize],
            None => kind,
        };
        Refusal::new(kind, message)
    }
}

/// The three rig shapes (Go `SharedRig`, `RigPerTenant`, `RigsFunc`).
pub enum Rigs {
    Shared(Arc<dyn Rig>),
    PerTenant(BTreeMap<String, Arc<dyn Rig>>),
    Func(RigsFn),
}

impl Rigs {
    fn rig_for(&self, req: &Request, mode: Mode, k: &Knobs) -> Result<Arc<dyn Rig>, Refusal> {
        match self {
            Rigs::Shared(_) if k.breaks(Mutant::SharedRigAcmeOnly) && req.tenant_id != "acme" => {
                Err(Refusal::new("incapable", "the shared rig serves acme only"))
            }
            Rigs::Shared(r) => Ok(r.clone()),
            Rigs::PerTenant(m)
                if k.breaks(Mutant::OneRigForAll)
                    || (k.breaks(Mutant::RestoreOnFirstRig) && mode == Mode::Restore) =>
            {
                m.values()
                    .next()
                    .cloned()
                    .ok_or_else(|| Refusal::new("invalid", "no rigs"))
            }
            Rigs::PerTenant(m) => m.get(&req.tenant_id).cloned().ok_or_else(|| {
                let kind = if k.decides(Variant::UnknownTenantShared) {
                    "unsupported"
                } else {
                    "incapable"
                };
                Refusal::open(k, kind, format!("no rig for tenant {:?}", req.tenant_id))
            }),
            Rigs::Func(f) => {
                let given = match mode {
                    _ if k.breaks(Mutant::RequestFieldsDropped) => Request {
                        tenant_id: req.tenant_id.clone(),
                        ..Request::default()
                    },
                    Mode::Restore if k.breaks(Mutant::RestoreRequestDropped) => Request::default(),
                    _ => req.clone(),
                };
                f(&given, mode).map_err(|e| Refusal::new("incapable", e))
            }
        }
    }
}

/// The department target: rigs, the product's compatibility id, its decoder.
pub struct Target {
    rigs: Rigs,
    compatibility_id: String,
    decoder: Option<BlockDecoder>,
    env: Arc<dyn Environment>,
    knob: Knobs,
    /// The department capabilities the product declared, passed through.
    pub capabilities: Value,
}

/// The harness counterparts of the six capabilities every bound session has.
const SIX: [&str; 6] = [
    "IdleWaiter",
    "Liveness",
    "Releaser",
    "CommittedPublicEventProvider",
    "Applier",
    "LeaseEpochReporter",
];

/// What else bind requires: the two department treats as optional, and the applier's
/// AttemptCloser.
const ALSO: [&str; 3] = [
    "PersistenceFaultReporter",
    "ResidencyAbandoner",
    "AttemptCloser",
];

const KINDS: [&str; 5] = ["create", "restore", "input", "interrupt", "gate_response"];

impl Target {
    pub fn new(
        rigs: Rigs,
        compatibility_id: &str,
        decoder: Option<BlockDecoder>,
        env: Arc<dyn Environment>,
        knob: Knobs,
    ) -> Target {
        Target {
            rigs,
            compatibility_id: compatibility_id.to_string(),
            decoder,
            env,
            knob,
            capabilities: Value::Null,
        }
    }

    /// `Registration(agent, target)`: the department registration of this target for `agent`.
    pub fn registration(&self, agent: &str) -> Value {
        let agent = if self.knob.breaks(Mutant::RegistrationAgentDropped) {
            ""
        } else {
            agent
        };
        json!({
            "agentId": agent,
            "compatibilityId": self.compatibility_id(),
            "capabilities": if self.knob.breaks(Mutant::RegistrationDefaultCapabilities) {
                json!({})
            } else {
                self.capabilities.clone()
            },
        })
    }

    pub fn compatibility_id(&self) -> String {
        if self.knob.breaks(Mutant::CompatIdNormalised) {
            return self.compatibility_id.trim().to_lowercase();
        }
        self.compatibility_id.clone()
    }

    /// `department.Recovery`, in this adapter's words: attempt closing and persistence faults,
    /// both held true at bind.
    pub fn recovery(&self) -> Vec<&'static str> {
        if self.knob.breaks(Mutant::OneRecoveryCapability) {
            return vec!["attempt-close"];
        }
        if self.knob.breaks(Mutant::RecoveryWrongPair) {
            return vec!["attempt-close", "residency-abandon"];
        }
        vec!["attempt-close", "persistence-faults"]
    }

    /// Launch and bind one session, or refuse it (released first).
    pub fn bind(
        &self,
        launch: Ctx,
        mode: Mode,
        request: Request,
        rig_session_id: &str,
        residency_epoch: u64,
    ) -> Result<Bound, Refusal> {
        let k = &self.knob;
        if k.breaks(Mutant::CreateRefused) {
            return Err(Refusal::new(
                "unsupported",
                "create and restore are not applied",
            ));
        }
        if k.breaks(Mutant::OpensStore) {
            self.env.open_store("journal", &request.tenant_id);
        }
        let rig = self.rigs.rig_for(&request, mode, k)?;
        let session = match mode {
            Mode::Create if k.breaks(Mutant::NewSessionRestores) => {
                rig.restore_session(launch, rig_session_id)
            }
            Mode::Restore if k.breaks(Mutant::RestoreViaNewSession) => {
                rig.new_session(launch, Some(rig_session_id))
            }
            Mode::Create => {
                let id = (!k.breaks(Mutant::NoRigSessionId)).then_some(rig_session_id);
                rig.new_session(launch, id)
            }
            Mode::Restore if k.breaks(Mutant::RestoreWrongUuid) => {
                rig.restore_session(launch, &request.session_id)
            }
            Mode::Restore => rig.restore_session(launch, rig_session_id),
        }
        .map_err(|e| Refusal::new("incapable", e))?;
        let session = match session.unwrap() {
            Some(inner) if k.breaks(Mutant::UnwrapsWrapper) => inner,
            _ => session,
        };
        if let Some(missing) = self.missing(&*session).filter(|m| !self.skipped(m, mode)) {
            let recovery = missing.contains("AttemptCloser") || missing.contains("fault channel");
            let unreleased = (k.breaks(Mutant::ReleaseOnlyRecoveryRefusals) && !recovery)
                || (k.breaks(Mutant::NoReleaseOnRestoreRefusal) && mode == Mode::Restore);
            return Err(self.refuse(launch, &*session, missing, unreleased));
        }
        let probe = k.decides(Variant::ProbeEpochAtBind) || shape(k, "probe-epoch-at-bind");
        let bind_epoch = if k.breaks(Mutant::BindTimeEpoch) || probe {
            session.lease_epoch_reporter().and_then(|r| r.lease_epoch())
        } else {
            None
        };
        Ok(Bound {
            session,
            request,
            restored: mode == Mode::Restore,
            residency_epoch,
            bind_epoch,
            decoder: self.decoder.clone(),
            env: self.env.clone(),
            drops: AtomicU64::new(0),
            knob: self.knob,
        })
    }

    /// Whether a mutant leaves this refusal's check out of a restore bind.
    fn skipped(&self, missing: &str, mode: Mode) -> bool {
        let k = &self.knob;
        let recovery = missing.contains("AttemptCloser") || missing.contains("fault channel");
        mode == Mode::Restore
            && ((recovery && k.breaks(Mutant::RecoveryUnheldOnRestore))
                || (!recovery && k.breaks(Mutant::RequiredUncheckedOnRestore)))
    }

    /// What bind requires that `s` lacks, discovered on each published interface.
    fn missing(&self, s: &dyn Session) -> Option<String> {
        let k = &self.knob;
        let has = |cap: &str| match cap {
            _ if k.breaks(Mutant::RequiredSixUnchecked) && SIX.contains(&cap) => true,
            // A twin of the interface's method set finds methods forwarded by name.
            _ if k.breaks(Mutant::StructuralTwin) && s.by_name(cap).is_some() => true,
            "IdleWaiter" => s.idle_waiter().is_some(),
            "Liveness" => s.liveness().is_some(),
            "Releaser" => s.releaser().is_some(),
            "CommittedPublicEventProvider" => s.events().is_some(),
            "Applier" => s.applier().is_some(),
            "LeaseEpochReporter" => s.lease_epoch_reporter().is_some(),
            "PersistenceFaultReporter" => {
                s.persistence_fault_reporter().is_some()
                    || k.breaks(Mutant::FaultReporterOptional)
                    || k.breaks(Mutant::OptionalAsInDepartment)
            }
            "ResidencyAbandoner" => {
                s.residency_abandoner().is_some()
                    || k.breaks(Mutant::AbandonerOptional)
                    || k.breaks(Mutant::OptionalAsInDepartment)
            }
            _ => {
                s.attempt_closer().is_some()
                    || k.breaks(Mutant::AttemptCloserOptional)
                    || k.breaks(Mutant::RecoveryUnheld)
            }
        };
        if let Some(cap) = SIX.iter().chain(&ALSO).find(|c| !has(c)) {
            return Some(format!("the session is no {cap}"));
        }
        let nil = s
            .persistence_fault_reporter()
            .is_some_and(|r| !r.has_fault_channel());
        (nil && !k.breaks(Mutant::NilFaultChannelAccepted) && !k.breaks(Mutant::RecoveryUnheld))
            .then(|| "the session's fault channel is nil".to_string())
    }

    /// Refuse a launched session: release it first, detached from the launch context, and join
    /// a failed release to the refusal.
    fn refuse(&self, launch: Ctx, s: &dyn Session, why: String, unreleased: bool) -> Refusal {
        let k = &self.knob;
        let refusal = Refusal::new(
            "incapable",
            format!("incapable session {}: {why}", s.session_id()),
        );
        let Some(r) = s
            .releaser()
            .filter(|_| !k.breaks(Mutant::NoReleaseOnRefusal) && !unreleased)
        else {
            return refusal;
        };
        // The refusal's other path: a capability missing, not the recovery declaration.
        let other = !why.contains("AttemptCloser") && !why.contains("fault channel");
        let ctx = if k.breaks(Mutant::ReleaseUnderLaunchContext)
            || (other && k.breaks(Mutant::CapabilityRefusalUnderLaunch))
        {
            launch
        } else {
            Ctx::default()
        };
        match r.release_residency(ctx) {
            Err(_) if k.breaks(Mutant::ReleaseErrorDropped) => refusal,
            Err(_) if other && k.breaks(Mutant::CapabilityRefusalErrorDropped) => refusal,
            // The release's error returned in the refusal's place: no longer the refusal, a
            // shim classifies it as it would any other error.
            Err(e) if k.breaks(Mutant::ReleaseErrorReplacesRefusal) => Refusal::new("invalid", e),
            Err(e) => refusal.join(format!("release: {e}")),
            Ok(()) => refusal,
        }
    }
}

/// Which of the three kinds a preview frame is (`text`, `reasoning`, `tool`).
fn frame_kind(f: &Value) -> Option<&'static str> {
    ["text", "reasoning", "tool"]
        .into_iter()
        .find(|k| f.get(*k).is_some())
}

/// `frames` with each kind's frames in their order and the kinds interleaved by `f`'s order.
fn interleave(f: &crate::knob::Freedom, frames: Vec<Value>) -> Vec<Value> {
    let mut slots: Vec<Option<&'static str>> = frames.iter().map(frame_kind).collect();
    f.permute("live-interleave", &mut slots);
    let mut queues: BTreeMap<Option<&'static str>, std::collections::VecDeque<Value>> =
        BTreeMap::new();
    for fr in frames {
        queues.entry(frame_kind(&fr)).or_default().push_back(fr);
    }
    slots
        .into_iter()
        .filter_map(|k| queues.get_mut(&k).and_then(|q| q.pop_front()))
        .collect()
}

/// A bound session, as Host sees it.
pub struct Bound {
    session: Arc<dyn Session>,
    request: Request,
    /// Launched by the rig's RestoreSession.
    restored: bool,
    residency_epoch: u64,
    bind_epoch: Option<u64>,
    decoder: Option<BlockDecoder>,
    env: Arc<dyn Environment>,
    drops: AtomicU64,
    knob: Knobs,
}

impl Bound {
    /// What Host discovers on the bound session.
    pub fn capabilities(&self) -> Vec<&'static str> {
        let mut c = vec![
            "IdleWaiter",
            "Liveness",
            "Releaser",
            "PublicationSubscriber",
            "CommandApplier",
            "LeaseEpochReporter",
            "PersistenceFaultReporter",
            "ResidencyAbandoner",
            "AttemptCloser",
            "LiveOptionsSubscriber",
        ];
        if !self.knob.breaks(Mutant::NoLegacyLivePair) {
            c.extend(["LiveTextSubscriber", "ReasoningSubscriber"]);
        }
        c.push("EphemeralDrops");
        // A set: the order Host discovers them in is nobody's.
        if let Some(f) = self.knob.free(Class::Order) {
            f.permute("capabilities", &mut c);
        }
        c
    }

    fn decode(&self, bytes: &[u8]) -> Result<Vec<Value>, Refusal> {
        let k = &self.knob;
        if k.breaks(Mutant::DefaultDecoderStrict) {
            let body: Value = serde_json::from_slice(bytes).unwrap_or_default();
            if body.get("principal").is_some() || body.get("metadata").is_some() {
                return Err(Refusal::new("invalid", "unknown field in InputRequest"));
            }
        }
        match &self.decoder {
            Some(d) if !k.breaks(Mutant::ProductDecoderIgnored) => d(bytes),
            None if k.breaks(Mutant::NoDefaultDecoder) => Err("no block decoder".into()),
            // DecodeInputBlocks: Core's InputRequest, principal and metadata allowed (whether
            // it refuses a member InputRequest lacks is its own: the freedom's may).
            _ => dialect(k)
                .input_blocks(bytes, shape(k, "default-decoder-strict"))
                .map_err(String::from),
        }
        .map_err(|e| Refusal::open(k, "invalid", e))
    }

    /// Admit one runtime command to harness, or refuse it.
    pub fn apply(&self, cmd: RuntimeCommand) -> Result<(), Refusal> {
        let k = &self.knob;
        let folded = cmd.kind.to_lowercase();
        let kind = if k.breaks(Mutant::KindCaseFolded) {
            folded.as_str()
        } else {
            cmd.kind.as_str()
        };
        if !KINDS.contains(&kind) && !k.breaks(Mutant::AnyKindAdmitted) {
            return Err(Refusal::open(
                k,
                "invalid",
                format!("unknown command kind {kind:?}"),
            ));
        }
        if k.breaks(Mutant::GateResponseRefused) && kind == "gate_response" {
            return Err(Refusal::new("unsupported", "gate_response is not applied"));
        }
        if k.breaks(Mutant::CreateRefused) && matches!(kind, "create" | "restore") {
            return Err(Refusal::new(
                "unsupported",
                "create and restore are not applied",
            ));
        }
        // Preconditions an adapter may demand of what Host always sends: the record's Principal
        // and its authorized attempt.
        if cmd.principal.is_null() && demands(k, "principal") {
            return Err(Refusal::open(k, "invalid", "a command without a Principal"));
        }
        if cmd.attempt.is_empty() && demands(k, "attempt") {
            return Err(Refusal::open(k, "invalid", "a command without an attempt"));
        }
        let mut payload = cmd.payload.clone();
        let has_bytes = payload.as_ref().is_some_and(|b| !b.is_empty());
        let ignored = (k.breaks(Mutant::PayloadRefIgnoredOnCreate) && kind == "create")
            || (k.breaks(Mutant::PayloadRefIgnoredOnRestore) && kind == "restore");
        if let Some(r) = cmd.payload_ref.as_ref().filter(|_| !ignored) {
            let admits = k.decides(Variant::PayloadRefWithBytesAdmitted) || shape(k, "ref-bytes");
            if admits && has_bytes {
                // Open point (A20): bytes beside a reference are taken as its resolved body.
            } else if k.breaks(Mutant::PayloadRefDereferenced) {
                payload = Some(self.env.read_object(r));
            } else if k.breaks(Mutant::PayloadRefReadThenRefused) {
                self.env.read_object(r);
                return Err(Refusal::open(
                    k,
                    "invalid",
                    format!("unresolved payload reference {r:?}"),
                ));
            } else if !k.breaks(Mutant::PayloadRefIgnored) {
                return Err(Refusal::open(
                    k,
                    "invalid",
                    format!("unresolved payload reference {r:?}"),
                ));
            }
        }
        let bytes = payload.unwrap_or_default();
        // Preconditions an adapter may demand (A12, A24): a restore with no payload, a create
        // with a CreateRequest's bytes.
        if kind == "restore" && !bytes.is_empty() && demands(k, "restore-without-payload") {
            return Err(Refusal::open(k, "invalid", "a restore carries no payload"));
        }
        if kind == "create" && bytes.is_empty() && demands(k, "create-body") {
            return Err(Refusal::open(k, "invalid", "no bytes are no CreateRequest"));
        }
        let (blocks, gate_response) = match kind {
            "input" => {
                let b = self.decode(&bytes)?;
                let product = self.decoder.is_some() && k.breaks(Mutant::EmptyProductInputAdmitted);
                if b.is_empty() && !k.breaks(Mutant::EmptyInputAdmitted) && !product {
                    return Err(Refusal::open(
                        k,
                        "invalid",
                        "the input decodes to no blocks",
                    ));
                }
                (b, None)
            }
            "create" => (self.create_blocks(&cmd, &bytes)?, None),
            "restore" if k.breaks(Mutant::RestoreWithBlocks) && !bytes.is_empty() => {
                (self.decode(&bytes)?, None)
            }
            "gate_response" if k.breaks(Mutant::GateResponseUndecoded) => (vec![], None),
            "gate_response" => (vec![], Some(self.gate_response(&cmd, &bytes)?)),
            _ => (vec![], None),
        };
        let lease_epoch = match self.epoch() {
            Err(_) if k.breaks(Mutant::EpochCheckedOnInputOnly) && kind != "input" => 0,
            r => r?,
        };
        let dropped = (k.breaks(Mutant::PrincipalDroppedOnInterrupt) && kind == "interrupt")
            || (k.breaks(Mutant::PrincipalDroppedOtherEncoding) && kind == "gate_response");
        let principal = if dropped {
            Value::Null
        } else {
            cmd.principal.clone()
        };
        let carries = matches!(kind, "create" | "input")
            || k.decides(Variant::MetadataEverywhere)
            || shape(k, "metadata-everywhere");
        let metadata =
            if carries && !(k.breaks(Mutant::MetadataDroppedOnCreate) && kind == "create") {
                cmd.metadata.clone()
            } else {
                Value::Null
            };
        let admitted = Admitted {
            kind: kind.to_string(),
            blocks,
            lease_epoch,
            gate_response,
            principal,
            metadata,
            attempt: cmd.attempt.clone(),
        };
        let Some(applier) = self.session.applier() else {
            return Err(Refusal::new(
                "incapable",
                "the session has no command applier",
            ));
        };
        if k.breaks(Mutant::ApplyNotForwarded) {
            return Ok(());
        }
        let out = applier.apply_runtime_command(Ctx::default(), admitted);
        if k.breaks(Mutant::ApplyErrorSwallowed) {
            return Ok(());
        }
        out.map_err(|e| Refusal::open(k, "invalid", "harness refused the command").join(e))
    }

    /// A create's body is Core's CreateRequest; its blocks, if any, are re-presented to the
    /// decoder in the input-shaped body.
    fn create_blocks(&self, cmd: &RuntimeCommand, bytes: &[u8]) -> Result<Vec<Value>, Refusal> {
        let k = &self.knob;
        let blocks = dialect(k)
            .create_blocks(bytes)
            .map_err(|e| Refusal::open(k, "invalid", e))?;
        if blocks.is_empty() && k.breaks(Mutant::EmptyCreateRefused) {
            return Err(Refusal::new(
                "invalid",
                "the create carries no first message",
            ));
        }
        if blocks.is_empty() || k.breaks(Mutant::CreateMessageDropped) {
            return Ok(vec![]);
        }
        if k.breaks(Mutant::CreateNotRepresented) {
            return self.decode(bytes);
        }
        let (principal, metadata) =
            if k.decides(Variant::RepresentPrincipal) || shape(k, "represent-principal") {
                (cmd.principal.clone(), cmd.metadata.clone())
            } else {
                (Value::Null, Value::Null)
            };
        self.decode(&dialect(k).input_request(&blocks, &principal, &metadata))
    }

    /// Core's stored gate_response body, decoded: the user is its source, the record's attempt
    /// its attempt.
    fn gate_response(&self, cmd: &RuntimeCommand, bytes: &[u8]) -> Result<Value, Refusal> {
        let k = &self.knob;
        let (id, answer) = dialect(k)
            .gate_body(bytes)
            .map_err(|e| Refusal::open(k, "invalid", e))?;
        let source = if k.breaks(Mutant::GateSourceAgent)
            || k.breaks(Mutant::GateSourceAgentOtherEncoding)
        {
            "agent"
        } else {
            "user"
        };
        let attempt = if k.breaks(Mutant::GateAttemptDropped) {
            ""
        } else {
            cmd.attempt.as_str()
        };
        Ok(json!({
            "interactionId": id,
            "answer": answer,
            "source": source,
            "attempt": attempt,
        }))
    }

    /// The journal epoch, read from the session for this command.
    fn epoch(&self) -> Result<u64, Refusal> {
        let k = &self.knob;
        if k.breaks(Mutant::ResidencyEpoch) {
            return Ok(self.residency_epoch);
        }
        let read = if k.breaks(Mutant::BindTimeEpoch) {
            self.bind_epoch
        } else {
            self.session
                .lease_epoch_reporter()
                .and_then(|r| r.lease_epoch())
        };
        match read {
            Some(e) => Ok(e),
            None if k.breaks(Mutant::EpochZeroStamped) => Ok(0),
            None => Err(Refusal::new(
                "unsupported",
                "the session reports no held lease grant",
            )),
        }
    }

    /// Committed publications after `after` (none: the live path from now). A resume point
    /// cannot be honoured, so it is refused.
    pub fn subscribe(&self, after: &str) -> Result<Vec<Value>, Refusal> {
        let k = &self.knob;
        let after = if k.breaks(Mutant::ResumePointTrimmed) {
            after.trim()
        } else {
            after
        };
        let filtered = k.breaks(Mutant::ResumeFilteredFromLive)
            && self
                .session
                .events()
                .is_some_and(|e| e.subscribe().iter().any(|d| d.event_id == after));
        if filtered {
            let pubs = self.subscribe("")?;
            let at = pubs
                .iter()
                .position(|p| p["eventId"] == after)
                .map_or(0, |i| i + 1);
            return Ok(pubs[at..].to_vec());
        }
        if !after.is_empty() && !k.breaks(Mutant::ResumeFromNow) {
            return Err(Refusal::new(
                "unsupported",
                format!("the subscription cannot be positioned after {after:?}"),
            ));
        }
        if k.breaks(Mutant::SubscriptionNotForwarded) {
            return Ok(vec![]);
        }
        let Some(events) = self.session.events() else {
            return Err(Refusal::new("incapable", "the session publishes no events"));
        };
        let skip = usize::from(k.breaks(Mutant::LivePathSkipsFirst));
        Ok(events
            .subscribe()
            .into_iter()
            .skip(skip)
            .filter(|d| d.committed || k.breaks(Mutant::UncommittedForwarded))
            .map(|d| {
                let mut p = json!({
                    "tenantId": self.request.tenant_id,
                    "sessionId": self.request.session_id,
                    "eventId": d.event_id, "journalSeq": d.journal_seq,
                    "publicBody": d.public_body, "coveredThrough": d.covered_through,
                });
                if k.breaks(Mutant::PublicationWithoutTenant) {
                    p.as_object_mut().map(|o| o.remove("tenantId"));
                }
                if k.breaks(Mutant::CoveredThroughDropped) {
                    p["coveredThrough"] = json!(d.journal_seq);
                }
                let on_restore = k.breaks(Mutant::PublicationRigSessionOnRestore) && self.restored;
                if k.breaks(Mutant::PublicationRigSession) || on_restore {
                    p["sessionId"] = json!(self.session.session_id());
                }
                p
            })
            .collect())
    }

    /// Relay the session's preview frames to `take`; a frame it refuses is a drop.
    pub fn live(&self, take: &mut dyn FnMut(Value) -> bool) {
        if self.knob.breaks(Mutant::LiveNotRelayed) {
            return;
        }
        let Some(l) = self.session.live_options() else {
            return;
        };
        let mut relay = |f: Value| {
            if self.knob.breaks(Mutant::AdapterDecidesRelay) && frame_kind(&f) == Some("tool") {
                return;
            }
            if !take(f) && !self.knob.breaks(Mutant::DropsUncounted) {
                self.drops.fetch_add(1, Ordering::Relaxed);
            }
        };
        match self.knob.free(Class::Order) {
            None => l.subscribe_live(&mut relay),
            // Text, reasoning and tool steps relayed as separate streams: each stream's frames
            // in their order, the streams interleaved as the seed says.
            Some(f) => {
                let mut frames = Vec::new();
                l.subscribe_live(&mut |fr| frames.push(fr));
                for fr in interleave(&f, frames) {
                    relay(fr);
                }
            }
        }
    }

    /// The older pair: `LiveTextSubscriber` (`kind` `text`) or `ReasoningSubscriber`
    /// (`reasoning`) relays the frames of its kind; a frame of another kind is not its own (no
    /// drop), a frame of its kind the subscriber refuses is.
    pub fn live_pair(&self, kind: &str, take: &mut dyn FnMut(Value) -> bool) -> Fallible {
        if self.knob.breaks(Mutant::NoLegacyLivePair) {
            return Err("the session has no older live/reasoning pair".into());
        }
        if self.knob.breaks(Mutant::LegacyPairSilent) {
            return Ok(());
        }
        // The freedom variant's pair may carry steps of other kinds too, as the text it hands
        // the subscriber (A25), which the subscriber takes as a frame of this relay's kind.
        let free = self.knob.free(Class::Shapes);
        self.live(&mut |f| match frame_kind(&f) {
            Some(k) if k == kind => take(f) || self.knob.breaks(Mutant::PairDropsUncounted),
            Some(k)
                if free.is_some_and(|fr| fr.coin(Class::Shapes, &format!("pair:{kind}:{k}"))) =>
            {
                take(json!({ kind: f[k] }))
            }
            _ => true,
        });
        Ok(())
    }

    /// `department.LeaseEpochReporter`, forwarded to harness's: `None` is no held grant.
    pub fn lease_epoch(&self) -> Option<u64> {
        if self.knob.breaks(Mutant::LeaseEpochResidency) {
            return Some(self.residency_epoch);
        }
        self.session
            .lease_epoch_reporter()
            .and_then(|r| r.lease_epoch())
    }

    /// `department.RigSession.ID`: harness's `Session.SessionID`.
    pub fn id(&self) -> String {
        if self.knob.breaks(Mutant::SessionIdNotHarness) {
            return self.request.session_id.clone();
        }
        self.session.session_id()
    }

    pub fn ephemeral_drops(&self) -> u64 {
        self.drops.load(Ordering::Relaxed)
    }

    pub fn wait_idle(&self) -> Fallible {
        let k = &self.knob;
        if k.breaks(Mutant::WaitIdleNotForwarded) {
            return Ok(());
        }
        if k.breaks(Mutant::WaitIdleAsync) {
            let s = self.session.clone();
            std::thread::spawn(move || s.idle_waiter().map(|w| w.wait_idle(Ctx::default())));
            return Ok(());
        }
        match self.session.idle_waiter() {
            Some(w) => w.wait_idle(Ctx::default()).or_else(|e| {
                if k.breaks(Mutant::WaitIdleErrorDropped) {
                    Ok(())
                } else {
                    Err(e)
                }
            }),
            None => Err("the session is no IdleWaiter".into()),
        }
    }

    /// `Liveness.Done`: whether harness's channel is closed.
    pub fn done(&self) -> bool {
        if self.knob.breaks(Mutant::DoneNotForwarded) {
            return false;
        }
        let closed = self.session.liveness().is_some_and(|l| l.done());
        closed && !self.knob.breaks(Mutant::DoneOwnChannel)
    }

    pub fn release(&self) -> Fallible {
        if self.knob.breaks(Mutant::ReleaseNotForwarded) {
            return Ok(());
        }
        match self.session.releaser() {
            Some(r) => {
                let out = r.release_residency(Ctx::default());
                if self.knob.breaks(Mutant::ReleaseErrorSwallowed) {
                    return Ok(());
                }
                out
            }
            None => Err("the session is no Releaser".into()),
        }
    }

    /// `department.AttemptCloser`, forwarded to harness's.
    pub fn close_attempt(&self, attempt: &str) -> Fallible {
        if self.knob.breaks(Mutant::AttemptCloseNotForwarded) {
            return Ok(());
        }
        match self.session.attempt_closer() {
            Some(_) if self.knob.breaks(Mutant::CloseAttemptErrorDropped) => {
                let _ = self
                    .session
                    .attempt_closer()
                    .map(|c| c.close_attempt(Ctx::default(), attempt));
                Ok(())
            }
            Some(c) => c.close_attempt(Ctx::default(), attempt),
            None => Err("the session's applier is no AttemptCloser".into()),
        }
    }
}
