//! Mutants: the reference runtime with exactly one rule broken. The suite proves each of its
//! MUST cases able to fail by turning red on at least one mutant of the case's section.

crate::mutants! {
    pub enum Mutant {
    ParseErrorTolerated = "parse-error-tolerated", ["1"], "reads the first JSON value of a pack file and ignores what follows";
    SchemaSkipped = "schema-skipped", ["1"], "loads any JSON serde can read, ignoring the pack schemas (unknown fields, wrong shapes)";
    PolicyInvented = "policy-invented", ["1", "must-not"], "invents a read Policy row per command when policy.json is missing";
    BadPackDropped = "bad-pack-dropped", ["1"], "installs the packs that load and silently drops the rest";
    DuplicatePackIdAccepted = "duplicate-pack-id-accepted", ["1"], "installs the first of two packs with one pack_id and silently skips the other";
    LintSkipped = "lint-skipped", ["2"], "installs packs without linting them";
    DefaultAllow = "default-allow", ["3"], "allows every exec and activation when the Principal holds no grants";
    ReadWriteCollapsed = "read-write-collapsed", ["3", "must-not"], "any verb.exec.* or pack.connect grant on a pack allows reads and writes alike";
    GrantScopeIgnored = "grant-scope-ignored", ["3"], "ignores a grant's verb_keys and tenant_id scope";
    UnknownCapabilityHonoured = "unknown-capability-honoured", ["3", "must-not"], "treats a grant of an unknown capability (an extension) as allowing everything on its pack";
    BrainWithoutProject = "brain-without-project", ["3"], "allows privacy.land brain without a project_id";
    NoConfirmGate = "no-confirm-gate", ["4"], "runs confirm writes without confirm";
    ConfirmStringTrue = "confirm-string-true", ["4"], "accepts any truthy confirm or apply (\"true\", 1, \"yes\")";
    ConfirmAfterAdapter = "confirm-after-adapter", ["4"], "runs the adapter first and checks confirm afterwards";
    EnvTokenFallback = "env-token-fallback", ["5", "must-not"], "uses a *_TOKEN variable of its environment when the hub's mint fails";
    MothershipWithoutElevation = "mothership-without-elevation", ["5", "must-not"], "mints a mothership Binding without binding.elevate";
    ExecWithoutBinding = "exec-without-binding", ["5"], "execs a non-public pack that was never connected";
    UnknownBinAllowed = "unknown-bin-allowed", ["6", "7"], "spawns bins that are not on the allow-list";
    ShellArgv = "shell-argv", ["6"], "renders the argv into one shell string and splits it on whitespace";
    VerbRunsFirstCommand = "verb-runs-first-command", ["2", "6"], "runs every verb_key of a pack with the wrap template of its first named command";
    BinPathResolved = "bin-path-resolved", ["6"], "resolves a wrap bin given as a path (absolute, or relative to its bin path)";
    InprocUnknownAccepted = "inproc-unknown-accepted", ["6"], "runs an unknown in-process adapter as if it were echo";
    RequiredArgUnchecked = "required-arg-unchecked", ["6"], "renders a missing arg as an empty string instead of denying";
    ExitCodeIgnored = "exit-code-ignored", ["6"], "reports ok when the adapter exits non-zero";
    NoCwdJail = "no-cwd-jail", ["7"], "spawns adapters in the runtime's own working directory";
    InheritedEnv = "inherited-env", ["7"], "passes its whole environment to adapters";
    NoAuditOnWrite = "no-audit-on-write", ["8"], "does not audit writes";
    AuditWithoutPrincipal = "audit-without-principal", ["8"], "audits writes without the Principal";
    AvailabilityWithoutReason = "availability-without-reason", ["9"], "reports false availability flags without reasons";
    AvailabilityOptimistic = "availability-optimistic", ["9"], "reports every installed command as executable";
    UndeclaredTriggerDelivered = "undeclared-trigger-delivered", ["10", "must-not"], "accepts Sense triggers the pack does not declare";
    SenseWhileDisabled = "sense-while-disabled", ["10"], "accepts Sense events while sense.enable is off";
    SenseWhileDisabledAfterConnect = "sense-while-disabled-after-connect", ["10"], "delivers Sense events of a Binding pack only once connected (the allowed choice sense-after-connect) and accepts them although sense.enable is false";
    // Over-strict: each refuses what the spec allows, so the allow-path cases prove they can fail.
    WhitespaceJsonRefused = "whitespace-json-refused", ["1"], "refuses a pack file with whitespace before its JSON value";
    ReadGrantRefused = "read-grant-refused", ["3"], "denies every read, whatever the grants";
    BrainAlwaysDenied = "brain-always-denied", ["3"], "denies privacy.land brain even with a project_id";
    ConfirmNeverEnough = "confirm-never-enough", ["4"], "refuses confirm writes even with confirm: true";
    ApplyIgnored = "apply-ignored", ["4"], "does not take apply: true as a confirmation";
    EveryWriteGated = "every-write-gated", ["4", "must-not"], "gates every write on confirm, whatever its Policy row says";
    PublicNeedsConnect = "public-needs-connect", ["5"], "denies an exec of a public pack until it is connected";
    DeclaredTriggerDropped = "declared-trigger-dropped", ["10"], "drops Sense events of declared triggers too";
    SkillFormatEnforced = "skill-format-enforced", ["1", "2"], "rejects a Skill that is not a Markdown document opening with a `#` heading";
    PassThroughRejected = "pass-through-rejected", ["2"], "rejects a wrap with pass_through: true";
    ExtraTriggerRowRejected = "extra-trigger-row-rejected", ["2"], "rejects a Policy row for a trigger the surface does not declare";
    WriteGrantRefused = "write-grant-refused", ["3"], "denies every write, whatever the grants";
    PublicPackMinted = "public-pack-minted", ["5"], "mints through the hub for public packs too, and denies when that fails";
    BindingNotPassed = "binding-not-passed", ["5"], "mints a Binding but runs the adapter without it";
    // Rules no case checked before.
    ReasonlessDenial = "reasonless-denial", ["3"], "denies execs with ok: false but no error text";
    UndeclaredVerbPassedThrough = "undeclared-verb-passed-through", ["3"], "passes a verb the surface does not declare through to a pass_through bin";
    ActivationSkipped = "activation-skipped", ["3"], "runs execs of installed packs that were never activated";
    GrantsFromEnv = "grants-from-env", ["3", "must-not"], "takes grants from an HCP_GRANTS variable of its environment when runtime.create gives none";
    ConfirmBeforeGrants = "confirm-before-grants", ["3", "4"], "checks the confirm gate before the capability axes";
    PackRewritten = "pack-rewritten", ["must-not"], "writes its own state file into every pack directory on activate";
    ListPacksEmpty = "list-packs-empty", ["1"], "lists no packs, whatever is installed";
    TokenInConnect = "token-in-connect", ["5"], "shows the minted token to the harness as the Binding's identity";
    PollingAsSense = "polling-as-sense", ["10", "must-not"], "records a Sense event for every exec of a pack that declares triggers";
    SenseAudited = "sense-audited", ["10"], "audits accepted Sense events as writes";
    // Holes a too-loose case would hide.
    AllowListBasename = "allow-list-basename", ["6", "7"], "matches a wrap bin given as a path against the allow-list by its file name";
    ConnectWithoutGrant = "connect-without-grant", ["3"], "mints on connect without checking pack.connect";
    // Issue 23: one narrow killer per sentence of the ledger (vectors/COVERAGE.md).
    GrantTenantIgnored = "grant-tenant-ignored", ["3"], "ignores a grant's tenant_id scope (its verb_keys still count)";
    GrantVerbKeysIgnored = "grant-verb-keys-ignored", ["3"], "ignores a grant's verb_keys scope (its tenant_id still counts)";
    TenantlessPrincipalAllowed = "tenantless-principal-allowed", ["3"], "lets a tenant-scoped grant hold for a Principal with no tenant";
    GrantPackIgnored = "grant-pack-ignored", ["3"], "lets a grant on any pack count for every pack";
    AbsentGrantsAllow = "absent-grants-allow", ["3"], "reads grants left out of runtime.create as a local demo that allows everything (an empty list still denies)";
    ActivationAuthorisesExec = "activation-authorises-exec", ["3"], "runs any exec of an activated pack without checking verb.exec.read or verb.exec.write";
    WriteCheckedAsRead = "write-checked-as-read", ["3"], "checks a write verb against verb.exec.read instead of verb.exec.write";
    ExecGrantAllowsConnect = "exec-grant-allows-connect", ["3"], "takes a verb.exec.* grant on a pack as pack.connect too";
    ActivationSpreads = "activation-spreads", ["3"], "activating one pack activates every installed pack";
    ProjectBeforeCapability = "project-before-capability", ["3"], "checks privacy.land brain's project_id before the exec capability";
    ConfirmBeforeBrain = "confirm-before-brain", ["3"], "checks the confirm gate before privacy.land brain's project_id";
    BindingBeforeConfirm = "binding-before-confirm", ["4"], "checks the Binding (connected, or minted) before the confirm gate";
    AdapterBeforeBinding = "adapter-before-binding", ["5"], "checks the adapter's bin before the Binding";
    EnvelopeWithoutIds = "envelope-without-ids", ["3", "6"], "answers every exec with an envelope whose pack_id and verb_key are empty";
    UnknownPackBareDenial = "unknown-pack-bare-denial", ["3"], "denies an exec of an unknown pack with an envelope that leaves out pack_id and verb_key";
    ExecUnimplemented = "exec-unimplemented", ["3", "6"], "has no exec: every exec answers ok: false, not implemented";
    OnePolicyRowForAll = "one-policy-row-for-all", ["1", "2"], "enforces a pack's first Policy row (by verb_key) for every verb of the pack";
    HcpVersionUnchecked = "hcp-version-unchecked", ["1"], "installs a surface.json of any hcp version as 1.0";
    PolicyCoverageUnlinted = "policy-coverage-unlinted", ["2"], "does not lint that Policy covers every command and trigger";
    SkillUnlinted = "skill-unlinted", ["2"], "does not lint that the Skill is present";
    WrapUnlinted = "wrap-unlinted", ["2"], "does not lint that wrap has named commands or pass_through";
    WrapEmptyCommandsAccepted = "wrap-empty-commands-accepted", ["2"], "lints that wrap has a `commands` member or pass_through, not that it names a command (an empty `commands: {}` passes)";
    MintFailOpen = "mint-fail-open", ["5"], "connects without a Binding when the hub's mint fails, and runs execs unbound";
    BindingHubRenamed = "binding-hub-renamed", ["5"], "mints every Binding through a hub of its own, whatever hub the pack names";
    InprocArgvDropped = "inproc-argv-dropped", ["6"], "calls an in-process adapter without the rendered argv";
    SandboxOffByDefault = "sandbox-off-by-default", ["7"], "runs native-local when runtime.create leaves sandbox out";
    AuditWithoutBinding = "audit-without-binding", ["8"], "audits writes without the Binding identity";
    AuditTokenAsBinding = "audit-token-as-binding", ["8"], "audits the minted token as the write's Binding, not the Binding's identity";
    PrincipalKindDropped = "principal-kind-dropped", ["8"], "audits the Principal's id without its kind";
    ActivatedFlagStale = "activated-flag-stale", ["9"], "reports activated: false (with a reason) in availability, even once the pack is activated";
    ConnectedFlagStale = "connected-flag-stale", ["9"], "reports connected: false (with a reason) for a Binding pack, even once it is connected";
    AvailabilityShapeWrong = "availability-shape-wrong", ["9"], "reports every command's operation as read and its land as local";
    SenseSinkUnrecorded = "sense-sink-unrecorded", ["10"], "accepts declared Sense events but records none in the sink";
    DenialThrown = "denial-thrown", ["3"], "throws an exception for a denied exec instead of answering the denial envelope";
    DenialFlaggedOk = "denial-flagged-ok", ["3"], "answers a denied exec with ok: true and the denial in error, so an agent cannot branch on ok";
    GetPackFirstInstalled = "get-pack-first-installed", ["1"], "answers getPack of any installed pack_id with the first pack it lists";
    SkillNotExposed = "skill-not-exposed", ["1"], "loads and lints HARNESS.md but shows the harness a Skill of its own making (the pack's name as a heading)";
    CliRunsAnotherCommand = "cli-runs-another-command", ["6"], "its CLI face runs the command after the one named (the JSON face is right)";
    CliFaceUnimplemented = "cli-face-unimplemented", ["6"], "claims a CLI face (the feature cli) and answers every command through it ok: false, not implemented";
    PollingOnATimer = "polling-on-a-timer", ["10", "must-not"], "polls every activated pack that declares triggers on a 5 ms timer and records each poll as a Sense event";
    // issue 44, shim: what the protocol's additions reach (runtime.setSense, runtime.grants,
    // a driver without connect).
    SenseEnableCached = "sense-enable-cached", ["10"], "reads sense.enable once at create: runtime.setSense answers ok and changes nothing";
    GrantsImplicitAdded = "grants-implicit-added", ["3"], "holds a pack.activate grant on every installed pack besides the grants runtime.create gave";
    GrantsScopeWidened = "grants-scope-widened", ["3"], "holds (and enforces) each grant given without its verb_keys and tenant_id scope";
    GrantsGrowOnActivate = "grants-grow-on-activate", ["3"], "records a pack.activate grant on each pack it activates, besides the grants given";
    ConnectlessRunsUnbound = "connectless-runs-unbound", ["5"], "a driver without connect (connect: false in initialize) that runs a Binding pack's execs without any Binding";
    ConnectlessRefusesPublic = "connectless-refuses-public", ["5"], "a driver without connect that refuses every exec as not connected, a public pack's too";
    JailFollowsLink = "jail-follows-link", ["7"], "jails each adapter in workdir/PACK_ID, made with create_dir_all, which follows a link already there out of the jail";
    // issue 44, order: the pipeline's misorders as a runtime without a denial map shows them
    // (no class tells which step denied; what ran does), and a spawn answered as a denial.
    ConfirmBeforeGrantsUnmapped = "confirm-before-grants-unmapped", ["3", "4"], "checks the confirm gate before the capability axes, and declares no denial map";
    ProjectBeforeCapabilityUnmapped = "project-before-capability-unmapped", ["3"], "checks privacy.land brain's project_id before the exec capability, and declares no denial map";
    ConfirmBeforeBrainUnmapped = "confirm-before-brain-unmapped", ["3"], "checks the confirm gate before privacy.land brain's project_id, and declares no denial map";
    BindingBeforeConfirmUnmapped = "binding-before-confirm-unmapped", ["4"], "checks the Binding (connected, or minted) before the confirm gate, and declares no denial map";
    AdapterBeforeBindingUnmapped = "adapter-before-binding-unmapped", ["5"], "checks the adapter's bin before the Binding, and declares no denial map";
    MintBeforeGrants = "mint-before-grants", ["3", "5"], "mints the pack's Binding inside exec before the capability axes (a failed mint denies), and declares no denial map";
    MintBeforeConfirm = "mint-before-confirm", ["4", "5"], "mints the pack's Binding inside exec after the capability axes but before the confirm gate (a failed mint denies), and declares no denial map";
    AdapterFailureAsDenial = "adapter-failure-as-denial", ["6"], "spawns the wrap bin for an exec missing a required arg (the hole rendered empty) and answers ok: false with the adapter's failure as the error, and declares no denial map";
    // issue 44, rules: the ways a stranger breaks a rule the older killer broke one way only.
    PackIdFromDirectory = "pack-id-from-directory", ["1"], "installs a pack under the name of its directory, not the pack_id of its surface.json";
    PolicyJsonIgnored = "policy-json-ignored", ["1"], "lints policy.json but enforces a Policy of defaults (every verb a read on land local, no confirm)";
    HarnessMdJsonParsed = "harness-md-json-parsed", ["1"], "parses HARNESS.md with the JSON parser of the other two files and rejects a Skill that is not JSON";
    HarnessMdFirstLine = "harness-md-first-line", ["1"], "loads only the first line of HARNESS.md (its heading) as the pack's Skill";
    PackIdOptional = "pack-id-optional", ["1"], "installs a surface.json without pack_id under its directory's name";
    UnknownSurfaceMemberIgnored = "unknown-surface-member-ignored", ["1", "must-not"], "drops surface.json members HCP/1.x does not define (a connector) instead of rejecting them";
    BindingModeUnchecked = "binding-mode-unchecked", ["1"], "takes an unknown binding.mode as user";
    OperationUnchecked = "operation-unchecked", ["1"], "takes a Policy row's unknown operation as read";
    OperationDefaultsToRead = "operation-defaults-to-read", ["1"], "takes a Policy row without operation as a read";
    ConfirmCoerced = "confirm-coerced", ["1"], "coerces a Policy row's non-boolean confirm by truthiness instead of rejecting it";
    LandUnchecked = "land-unchecked", ["1", "must-not"], "takes a Policy row's unknown privacy.land as local";
    PrivacyDefaultsToLocal = "privacy-defaults-to-local", ["1"], "takes a Policy row without privacy (or without privacy.land) as land local";
    AuditWithoutTenant = "audit-without-tenant", ["8"], "audits writes without the tenant_id";
    AuditWithoutProject = "audit-without-project", ["8"], "audits writes without the project_id";
    AuditBrainScopeDropped = "audit-brain-scope-dropped", ["8"], "audits writes on land brain without tenant_id and project_id (land local's records are whole)";
    AuditInprocScopeDropped = "audit-inproc-scope-dropped", ["8"], "audits writes of in-process adapters without tenant_id and project_id";
    AuditPublicScopeDropped = "audit-public-scope-dropped", ["8"], "audits writes of a public pack (no Binding) without tenant_id and project_id";
    AuditMothershipAsService = "audit-mothership-as-service", ["8"], "audits writes under a mothership Binding as the service's: without the Principal, tenant_id and project_id";
    ConnectGrantUncheckedLocal = "connect-grant-unchecked-local", ["3"], "mints a local Binding on connect without checking pack.connect (user and mothership are checked)";
    ElevationAllowsConnect = "elevation-allows-connect", ["3"], "takes binding.elevate on a mothership pack as pack.connect too";
    PolicyOnlyTriggerDelivered = "policy-only-trigger-delivered", ["10", "must-not"], "accepts a Sense trigger that has a Policy row, whether or not surface.json declares it";
    AnyPacksTriggerDelivered = "any-packs-trigger-delivered", ["10", "must-not"], "accepts a Sense trigger for a pack when any installed pack declares it";
    PollingOnActivate = "polling-on-activate", ["10", "must-not"], "polls every activated pack that declares triggers at once on activation, then every 5 s, and records each poll as a Sense event";
    HarnessMdUnread = "harness-md-unread", ["1"], "lints that HARNESS.md is there but never reads it: the harness is shown an empty Skill";
    UnboundWriteUnaudited = "unbound-write-unaudited", ["8"], "audits only writes run under a Binding: a public pack's writes go unrecorded";
    BrainWriteUnaudited = "brain-write-unaudited", ["8"], "audits writes on land local only: a write on land brain goes unrecorded";
    HcpOptional = "hcp-optional", ["1"], "installs a surface.json without hcp as HCP/1.0";
    CommandsOptional = "commands-optional", ["1"], "installs a surface.json without commands as a pack with none";
    AuditWithoutVerbKey = "audit-without-verb-key", ["8"], "audits writes by pack only: the record's verb_key is empty";
}
}
