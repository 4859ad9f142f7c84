//! The reference core's knobs: its mutants (each breaks one rule, which a MUST case of its own
//! section must catch) and its allowed variants (each decides an open point otherwise, and must
//! pass every MUST case). The `World`, its listener and gates ask them by member; the core-api
//! suite names them `inproc:mutant:NAME` and `inproc:variant:NAME`.

crate::mutants! {
    /// Mutants of the reference core: name, the section whose MUST cases must catch it, the rule.
    pub enum Mutant {
        AnyPathAccepted = "any-path-accepted", ["1"],
            "upgrades on any path instead of answering 404";
        AnyTokenAccepted = "any-token-accepted", ["1"],
            "upgrades without a known token instead of answering 401";
        No426 = "no-426", ["1"],
            "upgrades without Nylorun-Harness-Api: 1";
        ClosedTenantAccepted = "closed-tenant-accepted", ["1"],
            "upgrades a harness of a closed Tenant instead of answering 503";
        EveryUpgradeRefused = "every-upgrade-refused", ["1"],
            "refuses even a correct upgrade";
        UnknownMethodOk = "unknown-method-ok", ["1"],
            "answers a request of an unknown method ok";
        HelloWithoutRenewEvery = "hello-without-renew-every", ["2"],
            "answers hello without renewEveryMs";
        GrantWithoutToken = "grant-without-token", ["2"],
            "offers a run without its run token";
        RenewRefusesHeldRun = "renew-refuses-held-run", ["2"],
            "answers a renewal of a held run {ok: false}";
        NoTokenSwitch = "no-token-switch", ["2"],
            "never switches the run token";
        ReleaseKeepsRun = "release-keeps-run", ["2"],
            "keeps a released run held";
        IntentNeverExecute = "intent-never-execute", ["4"],
            "answers every new intent pending";
        OutcomeNotRecorded = "outcome-not-recorded", ["4"],
            "answers an outcome but records nothing";
        NoReplayedOutcomes = "no-replayed-outcomes", ["4"],
            "offers a segment again without its completed outcomes";
        KeyIgnored = "key-ignored", ["4b"],
            "writes a new version for a key already written";
        ProvenanceUnchecked = "provenance-unchecked", ["4b"],
            "takes any effectId as provenance";
        ReadPastEndAccepted = "read-past-end-accepted", ["4b"],
            "answers a read past the end with no bytes";
        AnyGateToken = "any-gate-token", ["5"],
            "runs gate calls without the run token";
        KeyNotRequired = "key-not-required", ["5"],
            "runs gate calls without Idempotency-Key";
        OutputKeepsRun = "output-keeps-run", ["7"],
            "keeps a run held after its output";
        LeaseWithoutInput = "lease-without-input", ["2"],
            "offers a run without its TurnStart";
        OutcomeAnswerEmpty = "outcome-answer-empty", ["4"],
            "answers an outcome completed without the outcome";
        EofNeverSet = "eof-never-set", ["4b"],
            "never says eof on a read";
        ProvenanceAlwaysRefused = "provenance-always-refused", ["4b"],
            "refuses every effectId as provenance";
        BeginBodyNotCommitted = "begin-body-not-committed", ["4b"],
            "opens an upload for a begin that carries the whole body";
        MissingArtifactInvalid = "missing-artifact-invalid", ["4b"],
            "answers a missing artifact invalid, not not_found";
        ModelGateFails = "model-gate-fails", ["5"],
            "answers a journaled model call with a gate error";
        OutputWithoutCursor = "output-without-cursor", ["7"],
            "answers an output without the cursor";
        NoPings = "no-pings", ["1"],
            "never pings a harness";
        NoSilenceDrop = "no-silence-drop", ["1"],
            "never drops a harness it has not heard from";
        LostRunNotOfferedAgain = "lost-run-not-offered-again", ["1"],
            "leaves a run whose connection was lost unoffered";
        LastSnapshotWins = "last-snapshot-wins", ["3"],
            "lets a later session.mcp snapshot replace the first";
        DefinitionRangeUnchecked = "definition-range-unchecked", ["3"],
            "answers a definition.file range past chunkBytes";
        UploadSurvivesRun = "upload-survives-run", ["4b"],
            "takes chunks of an upload its run left open, from another run";
        AbortOfGoneUploadRefused = "abort-of-gone-upload-refused", ["4b"],
            "refuses an abort of an upload already gone";
        MetadataReadSendsBytes = "metadata-read-sends-bytes", ["4b"],
            "answers a read of length 0 with bytes";
        TranscriptWithoutEntries = "transcript-without-entries", ["6"],
            "answers transcript.read without entries";
        CancelWithoutReason = "cancel-without-reason", ["8"],
            "sends cancel without its reason";
        Api4Accepted = "api-4-accepted", ["2"],
            "answers hello with api 4";
        AnyNameAccepted = "any-name-accepted", ["2"],
            "answers hello naming a harness that is not the credential's";
        NoEffectDrift = "no-effect-drift", ["4"],
            "answers an effect asked again with another hash as if it were the same";
        OtherSegmentReplayed = "other-segment-replayed", ["4"],
            "replays outcomes of another segment in TurnStart";
        RecordLimitUnchecked = "record-limit-unchecked", ["4"],
            "records an outcome past recordEntryBytes";
        ChunkLimitUnchecked = "chunk-limit-unchecked", ["4b"],
            "takes an artifact chunk past chunkBytes";
        RepeatChunkTakenTwice = "repeat-chunk-taken-twice", ["4b"],
            "takes a repeat of the last chunk twice";
        UnjournaledCallRun = "unjournaled-call-run", ["5"],
            "runs a gate call whose intent was not answered execute";
        NoRunStale = "no-run-stale", ["5"],
            "runs a gate call of a run that is over";
        ResendOtherBytes = "resend-other-bytes", ["5"],
            "answers a re-send under the same key anew";
        UnknownMcpToolExecutes = "unknown-mcp-tool-executes", ["4"],
            "answers execute for an MCP tool the session did not discover";
        DisabledToolExecutes = "disabled-tool-executes", ["4"],
            "answers execute for a tool the turn's manifest disables";
        UndeclaredHttpToolExecutes = "undeclared-http-tool-executes", ["4"],
            "answers execute for an HTTP tool the agent does not declare";
        SandboxWithoutSandboxExecutes = "sandbox-without-sandbox-executes", ["4"],
            "answers execute for a sandbox call of a session without one";
        NoTargetExecutes = "no-target-executes", ["4"],
            "answers execute for a tool call that names no target";
        ScheduleWakeExecutes = "schedule-wake-executes", ["4"],
            "answers schedule_wake execute instead of running it";
        MemoryOutsideAllowed = "memory-outside-allowed", ["4"],
            "writes memories outside /memories";
        MemoryReadOnlyWrites = "memory-read-only-writes", ["4"],
            "writes a read_only memory";
        PolicyOnModelName = "policy-on-model-name", ["4"],
            "matches the tool policy on the name the model called";
        PolicyIgnored = "policy-ignored", ["4"],
            "runs every call the tool policy denies or holds";
        NoToolAttemptsCap = "no-tool-attempts-cap", ["4"],
            "answers every re-send execute, past toolAttempts";
        SandboxNotInTurnStart = "sandbox-not-in-turn-start", ["3"],
            "TurnStart's agent lacks the session's sandbox";
        SelfWakeNotInTurnStart = "self-wake-not-in-turn-start", ["3"],
            "TurnStart's agent lacks selfWake";
        MemoryAccessNotPassed = "memory-access-not-passed", ["3"],
            "TurnStart's memory says read_write whatever the version sets";
        AbortIgnored = "abort-ignored", ["8"],
            "a request the harness aborted stays in flight";
        TokensNotRedacted = "tokens-not-redacted", ["log"],
            "records the tokens it signed in what a harness reports";
        TargetMismatchRuns = "target-mismatch-runs", ["5"],
            "runs a tool call on another target than its intent's";
        KeyNotPassedToTool = "key-not-passed-to-tool", ["5"],
            "hands a tool no idempotency key";
        UnknownFateSucceeds = "unknown-fate-succeeds", ["4"],
            "records a tool call whose fate is unknown as a success";
        RefusalAnsweredAsSuccess = "refusal-answered-as-success", ["4"],
            "answers a refused tool call completed with a success naming the refusal";
        ScheduleWakeWithoutSelfWakeRuns = "schedule-wake-without-self-wake-runs", ["4"],
            "runs schedule_wake for a session whose version does not set runtime.selfWake";
        ModelEffectRefused = "model-effect-refused", ["4"],
            "answers a model intent completed with a failure instead of execute";
        HarnessCallRefused = "harness-call-refused", ["4"],
            "refuses a harness call";
        DiscoveredMcpToolRefused = "discovered-mcp-tool-refused", ["4"],
            "refuses an MCP tool the agent declares, the session discovered and the turn leaves enabled";
        MemoryCallRefused = "memory-call-refused", ["4"],
            "refuses a memory call of a session whose version sets harness.memory";
        MemoryPathNotNormalised = "memory-path-not-normalised", ["4"],
            "takes a memory path that starts /memories/ but leads out of it through ..";
        MemoryWithoutHarnessMemoryRuns = "memory-without-harness-memory-runs", ["4"],
            "runs a memory call of a session whose version does not set harness.memory";
        OutcomeErrorFormRefused = "outcome-error-form-refused", ["4"],
            "refuses an effect.outcome that carries error instead of value";
        OutcomeValueMisread = "outcome-value-misread", ["4"],
            "reads an effect.outcome's value from another member (result)";
        RefusedOutcomeShaped = "refused-outcome-shaped", ["4"],
            "refuses a value past recordEntryBytes but records a result shaped to fit";
        McpKeyNotRequired = "mcp-key-not-required", ["5"],
            "runs a tool-calls call without Idempotency-Key (the other routes require it)";
        UnjournaledMcpCallRun = "unjournaled-mcp-call-run", ["5"],
            "runs a tool-calls call whose intent was not answered execute (the other routes refuse it)";
        ToolResendRunsAgain = "tool-resend-runs-again", ["5"],
            "answers a tool call's re-send under the same key with the tool's new answer";
        HttpCancelIgnored = "http-cancel-ignored", ["5"],
            "lets tool-calls/{key}/cancel abort MCP calls only, not HTTP tool calls";
        HttpCallToolMisread = "http-call-tool-misread", ["5"],
            "reads the tool an http-calls body names from its name member, not its tool";
        ToolCallArgumentsDropped = "tool-call-arguments-dropped", ["5"],
            "calls the MCP tool without the arguments the tool-calls body carries";
        ModelCallBodyUnchecked = "model-call-body-unchecked", ["5"],
            "runs a model-calls body outside ModelCallBodySchema (no call)";
        ReadOffsetIgnored = "read-offset-ignored", ["4b"],
            "answers a read's bytes from the start, whatever offset it asks";
        ReadLengthIgnored = "read-length-ignored", ["4b"],
            "answers a read chunkBytes of bytes, whatever length it asks";
        RepeatedKeyAnswersAnotherVersion = "repeated-key-answers-another-version", ["4b"],
            "answers a begin with a key already written naming another version than the one written";
        ProvenanceOfAnyKind = "provenance-of-any-kind", ["4b"],
            "takes a journaled model effect of the turn as provenance";
        ProvenanceOfAnyTurn = "provenance-of-any-turn", ["4b"],
            "takes a journaled tool effect of another turn as provenance";
        LaterChunksDropped = "later-chunks-dropped", ["4b"],
            "acknowledges an upload's chunks after the first but keeps only the first";
        ErrorWithoutMessage = "error-without-message", ["1"],
            "answers a refused request {code} without its message";
        RequestFrameMisread = "request-frame-misread", ["1"],
            "reads a request frame's params from params, not p";
        AbortFrameMisread = "abort-frame-misread", ["8"],
            "reads which request an abort frame cancels from requestId, not id";
        MessageFrameMisshapen = "message-frame-misshapen", ["8"],
            "sends a message frame's name as method, not m";
        ReleaseReasonUnchecked = "release-reason-unchecked", ["2"],
            "takes a lease.release whose reason is none of the three";
        ListedReleaseReasonRefused = "listed-release-reason-refused", ["2"],
            "refuses a lease.release whose reason is connection.lost";
        ToolReplayDriftUnchecked = "tool-replay-drift-unchecked", ["4"],
            "answers a tool effect asked again naming another target (another hash) as if it were the same";
        HelloWithoutTenant = "hello-without-tenant", ["2"],
            "answers hello without tenantId";
        HelloWithoutSandbox = "hello-without-sandbox", ["2"],
            "answers hello without sandbox";
        GrantWithoutEpoch = "grant-without-epoch", ["2"],
            "offers a run whose grant has no epoch";
        GrantWithoutExpiry = "grant-without-expiry", ["2"],
            "offers a run whose grant has no tokenExpiresAt";
        HelloParamsMisread = "hello-params-misread", ["2"],
            "reads hello's harness id from harness, not name";
        IntentParamsMisread = "intent-params-misread", ["4"],
            "reads effect.intent's effect from intent, not effect";
        TranscriptReadWithoutCursor = "transcript-read-without-cursor", ["6"],
            "answers transcript.read without its cursor";
        EventWithoutEvidence = "event-without-evidence", ["log"],
            "records events without evidence";
        FailureWithoutCode = "failure-without-code", ["5"],
            "answers a model call's failure without its code";
        ToolRowDropped = "tool-row-dropped", ["4"],
            "keeps no row at calls/tool for a tool call that ended";
        ToolRowMcpServerIsTool = "tool-row-mcp-server-is-tool", ["4"],
            "names an MCP call's row's server by the tool";
        MemoryLeftOut = "memory-left-out", ["3"],
            "sends TurnStart no memory though the version sets harness.memory";
        AgentSandboxAlways = "agent-sandbox-always", ["3"],
            "TurnStart's agent has a sandbox though the session has none";
        WorkspaceElsewhere = "workspace-elsewhere", ["3"],
            "TurnStart's agent.sandbox.workspace is another directory than /workspace";
        TurnAgentWithoutKind = "turn-agent-without-kind", ["3"],
            "TurnStart's agent has no kind";
        SandboxSpecWithoutSandbox = "sandbox-spec-without-sandbox", ["3"],
            "TurnStart's routing names a sandbox spec for a session without a sandbox";
        BearerSchemeRefused = "bearer-scheme-refused", ["1"],
            "takes the token only without its Bearer scheme";
        ListenerOnV2Path = "listener-on-v2-path", ["1"],
            "serves the harness listener at /nylorun/harness/v2";
        TimersIgnored = "timers-ignored", ["1"],
            "pings and drops on its own timers, not the Host tuning's (core.start's timers)";
        EngineMisnamed = "engine-misnamed", ["3"],
            "sends an agent turn's engine as loop";
        SwitchedTokenRefusedAtGates = "switched-token-refused-at-gates", ["2"],
            "answers a renewal with a new token the gates do not take";
        NoTurnsWithoutWorkspace = "no-turns-without-workspace", ["2"],
            "offers runs only to harnesses that declare features.workspace";
        OutputTranscriptIgnored = "output-transcript-ignored", ["6"],
            "takes an output but none of its transcript edits";
        CompactionMarkMisread = "compaction-mark-misread", ["6"],
            "reads the compaction mark's facts from facts, not compaction";
        TranscriptUpdateMisread = "transcript-update-misread", ["6"],
            "reads a TranscriptUpdate's entries from items, not entries";
        EffectIdsMisread = "effect-ids-misread", ["7"],
            "reads a waiting output's effect ids from effects, not effectIds";
        EntriesRenamed = "entries-renamed", ["6"],
            "answers transcript.read's entries with type instead of kind";
        DefinitionVersionWrong = "definition-version-wrong", ["3"],
            "sends TurnStart a definition naming another version than the session runs";
        RoutesByName = "routes-by-name", ["4"],
            "decides an MCP call by the name the model called it, not its target's tool";
        SandboxAnyToolName = "sandbox-any-tool-name", ["4"],
            "answers execute for a sandbox call of a name outside bash, read, write, edit, grep, glob";
        GrantTokenNotTheGates = "grant-token-not-the-gates", ["2", "5"],
            "grants a run token the gates do not take";
        ResendAnsweredPending = "resend-answered-pending", ["4"],
            "answers an intent for a row still invoking pending, as for another call";
        AnyEntryKind = "any-entry-kind", ["6"],
            "takes a transcript entry of a kind none of the five";
        TranscriptPerTurn = "transcript-per-turn", ["6"],
            "keeps a transcript per turn: a later turn reads none of an earlier turn's";
        ArtifactRequestsUnknown = "artifact-requests-unknown", ["4b"],
            "answers artifact.read and artifact.write as unknown methods";
        ToolTargetMisread = "tool-target-misread", ["4"],
            "reads a tool effect's target from routing, not target";
        ScheduleWakeInputMisread = "schedule-wake-input-misread", ["4"],
            "reads schedule_wake's {cancel: true} as no input";
        MemoryViewEmpty = "memory-view-empty", ["4"],
            "answers every memory view empty";
        ArtifactScopeTenantWide = "artifact-scope-tenant-wide", ["4b"],
            "reads any artifact of the Tenant, whatever session it is";
        MaxBytesDoubled = "max-bytes-doubled", ["4b"],
            "opens an upload with twice the file limit as maxBytes";
        FixtureModelIgnored = "fixture-model-ignored", ["5"],
            "answers model calls on its own, not as the Tenant's fixture model says";
        McpFactsNeverSent = "mcp-facts-never-sent", ["3"],
            "sends TurnStart no mcp facts though a run recorded the session's discovery";
        SessionMcpMisread = "session-mcp-misread", ["3"],
            "reads session.mcp's snapshot from facts, not snapshot";
        FactsServerWithoutTools = "facts-server-without-tools", ["3"],
            "sends the MCP facts' servers without their tools";
        FactsToolMembersDropped = "facts-tool-members-dropped", ["3"],
            "keeps only a tool's name and inputSchema in the MCP facts, dropping what else the server listed";
        RoutingDropped = "routing-dropped", ["3"],
            "sends TurnStart no routing";
        RecordEntryDefaultWrong = "record-entry-default-wrong", ["3"],
            "sends recordEntryBytes' default as 512 KiB, not 960 KiB";
        SkillDescriptionDropped = "skill-description-dropped", ["3"],
            "lists a skill without its description";
        FixtureProviderMisnamed = "fixture-provider-misnamed", ["3"],
            "names the fixture model's provider anthropic, not fixture";
        ModelDescriptorWithoutWindow = "model-descriptor-without-window", ["3"],
            "describes the model without its contextWindow";
        EnvironmentIdWrong = "environment-id-wrong", ["3"],
            "names the sandbox's environmentId otherwise than the Agent's id";
        ContentTypeMissing = "content-type-missing", ["4b"],
            "answers an artifact's metadata without its contentType";
        SchemasStrictForTwoOnly = "schemas-strict-for-two-only", ["11"],
            "refuses a member the schema lacks on transcript.read and lease.renew only";
        RequiredMembersCheckedForTwoOnly = "required-members-checked-for-two-only", ["0"],
            "refuses a missing required member on effect.intent and transcript.read only";
        CrashedHarnessCallExecutes = "crashed-harness-call-executes", ["4"],
            "answers a harness call a crash interrupted execute again, not tool.interrupted";
        CheckpointWithoutSegment = "checkpoint-without-segment", ["3"],
            "sends the checkpoint without its segment";
        CheckpointWithoutManifestHash = "checkpoint-without-manifest-hash", ["3"],
            "sends the checkpoint without its manifestHash";
        McpCloseTakesAUrl = "mcp-close-takes-a-url", ["5"],
            "closes an MCP server an mcp/close names by URL, not one the agent declares";
        WorkspaceExecNotSent = "workspace-exec-not-sent", ["10"],
            "answers a session sandbox route of exec without sending the harness workspace.exec";
        JoinWithoutHostToken = "join-without-host-token", ["9"],
            "answers a join without hostToken";
        JoinWithoutSandboxId = "join-without-sandbox-id", ["9"],
            "answers a join without sandboxId";
        JoinWithoutEpoch = "join-without-epoch", ["9"],
            "answers a join without epoch";
        JoinWithoutExpiry = "join-without-expiry", ["9"],
            "answers a join without expiresAt";
        JoinWithoutCaCertificate = "join-without-ca-certificate", ["9"],
            "answers a join without caCertificate";
        MemoryInsertIgnored = "memory-insert-ignored", ["4"],
            "answers a memory insert done but inserts nothing";
        MemoryDeleteIgnored = "memory-delete-ignored", ["4"],
            "answers a memory delete done but keeps the memory";
        MemoryRenameCopies = "memory-rename-copies", ["4"],
            "renames a memory by copying it, the old path kept";
        MemberTypesUnchecked = "member-types-unchecked", ["0"],
            "takes an effect.intent whose requestHash is not a string";
        SweepsToAnyHarness = "sweeps-to-any-harness", ["10"],
            "sends the sweeps and removes core starts to every harness that declared features.workspace";
        InputMetadataDropped = "input-metadata-dropped", ["3"],
            "passes a message on without its metadata";
        AudioPartsDropped = "audio-parts-dropped", ["5"],
            "drops an MCP answer's audio parts";
        BlobPartsDropped = "blob-parts-dropped", ["5"],
            "drops an MCP answer's blob resource parts";
        ManifestWithoutTools = "manifest-without-tools", ["3"],
            "sends TurnStart's manifest without the Agent's own tools";
        ManifestWithoutServers = "manifest-without-servers", ["3"],
            "sends TurnStart's manifest without the Agent's MCP servers";
        PluginDroppedFromServers = "plugin-dropped-from-servers", ["3"],
            "lists a server an Agent Plugin brought without its plugin";
        MemoryIndexBytesUnlimited = "memory-index-bytes-unlimited", ["3"],
            "sends a memory index past the Runtime limit memoryIndexBytes";
        MemoryFailureAsSuccess = "memory-failure-as-success", ["4"],
            "answers a memory call that fails completed with a success";
        CandidateWithoutOutput = "candidate-without-output", ["5"],
            "answers a model call's candidate without its output blocks";
        CandidateWithoutFinishReason = "candidate-without-finish-reason", ["5"],
            "answers a model call's candidate without its finishReason";
        CandidateWithoutUsage = "candidate-without-usage", ["5"],
            "answers a model call's candidate without its usage";
        CredentialInTurnStart = "credential-in-turn-start", ["5"],
            "sends TurnStart the tools' endpoints with their credentials";
        CredentialEchoPassed = "credential-echo-passed", ["5"],
            "passes on a credential a tool's answer echoes";
        ToolAnswerSizeUnchecked = "tool-answer-size-unchecked", ["5"],
            "passes on a tool answer past toolAnswerBytes";
        ToolFailureAsGateError = "tool-failure-as-gate-error", ["5"],
            "answers a tool's failure with a gate error";
        EndpointIgnored = "endpoint-ignored", ["5"],
            "answers a journaled tool call without calling the tool";
        OtherSessionReadable = "other-session-readable", ["4b"],
            "reads another session's artifact";
        NamedTenantNotFound = "named-tenant-not-found", ["4b"],
            "answers not_found for a Tenant-wide artifact the session named";
        UnnamedTenantReadable = "unnamed-tenant-readable", ["4b"],
            "reads a Tenant-wide artifact the session's messages never named";
        AgentDiskReadable = "agent-disk-readable", ["4b"],
            "reads an Agent's disk version";
        DeclaredSizeUnchecked = "declared-size-unchecked", ["4b"],
            "opens an upload whose declared size is past maxBytes";
        RunsOfferedToAnyHarness = "runs-offered-to-any-harness", ["2"],
            "offers a session's runs to connections of another harness";
        SessionMovesHarness = "session-moves-harness", ["2"],
            "moves a session to the harness a later message names";
        SessionReadNoHarness = "session-read-no-harness", ["2"],
            "GET /v1/sessions/{id} does not name the session's harness";
        UsageRowPerCall = "usage-row-per-call", ["5"],
            "meters a re-sent model call twice";
        CancelRouteIgnored = "cancel-route-ignored", ["5"],
            "a call's cancel route aborts nothing";
        TranscriptNotFolded = "transcript-not-folded", ["6"],
            "appends every edit, ignoring what it keeps";
        TranscriptEntryLimitUnchecked = "transcript-entry-limit-unchecked", ["6"],
            "records a transcript update past recordEntryBytes";
        StateNotReturned = "state-not-returned", ["7"],
            "gives the next segment no state";
        ReleasedRunNotReplayed = "released-run-not-replayed", ["8"],
            "offers a released segment to no other owner";
        UnknownFateRecordedAsValue = "unknown-fate-recorded-as-value", ["4"],
            "records an outcome's error as the call's value";
        ApprovalsNotCreated = "approvals-not-created", ["7"],
            "pauses a held call's turn with no approval interaction";
        ApprovalIdNotEffectId = "approval-id-not-effect-id", ["7"],
            "names an approval interaction by its own id, not the effect id";
        InteractionNamesModelName = "interaction-names-model-name", ["7"],
            "names the model's tool name as the interaction's tool";
        ApprovalAnswerIgnored = "approval-answer-ignored", ["7"],
            "treats every answer as a denial";
        ToolRowNamesModelName = "tool-row-names-model-name", ["4"],
            "a tool call's row names the model's tool name, not the target's identity";
        ToolRowHttpServerIsTool = "tool-row-http-server-is-tool", ["4"],
            "an HTTP tool call's row names the tool as its server, not the URL host";
        CompactionUnchecked = "compaction-unchecked", ["6"],
            "accepts compaction facts naming a call that is no summary of the turn";
        ContextCompactedNotWritten = "context-compacted-not-written", ["6"],
            "writes no context.compacted for a compaction";
        ArtifactEventWithoutCallId = "artifact-event-without-call-id", ["4b"],
            "artifact.created does not carry its call's callId";
        EventWithoutSource = "event-without-source", ["log"],
            "records events without their source";
        ManifestInstructionsDropped = "manifest-instructions-dropped", ["3"],
            "TurnStart's manifest lacks the agent's own instructions";
        SecretInTurnStart = "secret-in-turn-start", ["3"],
            "sends an environment_secret's value in TurnStart";
        MemoryIndexOldestFirst = "memory-index-oldest-first", ["3"],
            "lists the memory index oldest first";
        VersionsAnyArtifact = "versions-any-artifact", ["4b"],
            "writes a new version of another session's artifact";
        UndeclaredMcpServerConnected = "undeclared-mcp-server-connected", ["5"],
            "connects an MCP server the agent does not declare (a URL)";
        TenantLimitsNotSent = "tenant-limits-not-sent", ["3"],
            "sends default limits, not the Tenant's";
        MemoryInstructionsDropped = "memory-instructions-dropped", ["3"],
            "TurnStart's memory lacks the agent's memory instructions";
        UploadBytesUnchecked = "upload-bytes-unchecked", ["4b"],
            "takes chunks past an upload's maxBytes";
        ApprovalSegmentTypedTurnStart = "approval-segment-typed-turn-start", ["3"],
            "types the segment after a person answered turn.start, not approval.answer";
        InputNotTheMessage = "input-not-the-message", ["3"],
            "TurnStart's checkpoint input is not the message the session was sent";
        QueuedMessagesSplit = "queued-messages-split", ["3"],
            "offers each message that waited in the queue as a turn of its own";
        CheckpointOtherSession = "checkpoint-other-session", ["3"],
            "TurnStart's checkpoint names another session";
        LoopDropped = "loop-dropped", ["3"],
            "drops the harness section's loop";
        RuntimeSectionSent = "runtime-section-sent", ["3"],
            "sends the Agent's runtime section in TurnStart";
        FixtureModelTextOnly = "fixture-model-text-only", ["3"],
            "describes the fixture model as reading text only";
        DisabledToolInFacts = "disabled-tool-in-facts", ["3"],
            "marks a tool the turn's manifest disables enabled in the MCP facts";
        MemoryIndexUnlimited = "memory-index-unlimited", ["3"],
            "lists every memory in the index, past memoryIndexLines";
        CrashedCallExecutesAgain = "crashed-call-executes-again", ["4"],
            "answers execute again for a sandbox call a crash interrupted";
        ReservedNames = "reserved-names", ["4"],
            "routes a call named memory or schedule_wake by its name, not its target";
        MemoryMissingParameterAccepted = "memory-missing-parameter-accepted", ["4"],
            "creates a memory whose create names no file_text";
        MemoryStrReplaceIgnored = "memory-str-replace-ignored", ["4"],
            "answers a memory str_replace without replacing";
        CustomTokenTakesItsRuns = "custom-token-takes-its-runs", ["1"],
            "offers a custom harness's runs to a container holding a token for its id";
        LeaseAnswersAtOnce = "lease-answers-at-once", ["2"],
            "answers a lease at once when no run is offered";
        ManifestIdNotItsName = "manifest-id-not-its-name", ["3"],
            "TurnStart's manifest id is not the manifest's name";
        SkillFileHashWrong = "skill-file-hash-wrong", ["3"],
            "lists a skill's files with a hash that is not their SHA-256";
        SandboxSpecDropped = "sandbox-spec-dropped", ["3"],
            "TurnStart's routing lacks the sandbox spec the session pinned";
        MemoryAlwaysInTurnStart = "memory-always-in-turn-start", ["3"],
            "sends TurnStart memory when the version sets no harness.memory";
        McpFactsBeforeDiscovery = "mcp-facts-before-discovery", ["3"],
            "sends MCP facts before the session's servers were discovered";
        DeferredDropped = "deferred-dropped", ["3"],
            "drops the manifest's deferred setting from the MCP facts";
        RowSkillUnchecked = "row-skill-unchecked", ["4"],
            "a tool call's row names a skill the agent does not have";
        FlowTurnWithAgent = "flow-turn-with-agent", ["3"],
            "sends an agent in a flow's TurnStart";
        FlowTurnWithModel = "flow-turn-with-model", ["3"],
            "sends a model in a flow's TurnStart";
        ModelWithoutTenantModel = "model-without-tenant-model", ["3"],
            "sends a model in TurnStart when the Tenant has none";
        TraceNotW3c = "trace-not-w3c", ["3"],
            "sends a TurnStart trace whose traceparent is no W3C trace context";
        RootManifestDropped = "root-manifest-dropped", ["3"],
            "TurnStart's routing lacks rootManifest";
        PluginDroppedFromSkills = "plugin-dropped-from-skills", ["3"],
            "lists a plugin's skill without its plugin";
        RowPluginDropped = "row-plugin-dropped", ["4"],
            "a tool call's row lacks the plugin that brought its server";
        WorkspaceWithoutFeatureServed = "workspace-without-feature-served", ["10"],
            "serves a session sandbox route through a harness that declared no features.workspace";
        ArtifactSha256NotItsBytes = "artifact-sha256-not-its-bytes", ["4b"],
            "names an artifact's sha256 with another hash than its bytes' SHA-256";
        MaxBytesIsTheFileLimit = "max-bytes-is-the-file-limit", ["4b"],
            "opens an upload with the file limit as maxBytes, whatever is left of the totals";
        TotalsUncheckedAtCommit = "totals-unchecked-at-commit", ["4b"],
            "commits an upload past what is left of the Tenant's total";
        OpenUploadCommittedAtRunEnd = "open-upload-committed-at-run-end", ["4b"],
            "stores an upload its run left open when the run ends";
        AbortKeepsUpload = "abort-keeps-upload", ["4b"],
            "takes chunks of an upload after its abort";
        FolderBeginWithoutMaxEntries = "folder-begin-without-max-entries", ["4b"],
            "opens a folder upload without maxEntries";
        IdsShared = "ids-shared", ["1"],
            "takes a harness request whose id is one of core's own requests' for its answer";
        BinaryFramesRead = "binary-frames-read", ["1"],
            "reads a binary frame as a message";
        WorkspaceRequestNotSent = "workspace-request-not-sent", ["10"],
            "answers a session sandbox route without sending the harness its workspace request";
        WorkspaceToAnyHarness = "workspace-to-any-harness", ["10"],
            "sends a session's workspace requests to a custom harness that declared the feature";
        LostRunStillRunning = "lost-run-still-running", ["1"],
            "keeps a run whose connection was lost running at the gates";
        SchemasNotStrict = "schemas-not-strict", ["11"],
            "answers a request with a member its schema lacks";
        RequiredMembersUnchecked = "required-members-unchecked", ["0"],
            "answers a request that lacks a member its schema requires";
        OutputsExported = "outputs-exported", ["3"],
            "exports an outputs artifact at a completed turn's end";
        MemoryAccessFlips = "memory-access-flips", ["3"],
            "TurnStart's memory access changes from one turn to the next";
        MemoryIndexWithoutDescription = "memory-index-without-description", ["3"],
            "leaves a memory's frontmatter description out of its index line";
        ServerInstructionsCut = "server-instructions-cut", ["3"],
            "cuts an MCP server's instructions in the facts";
        LimitDefaultsWrong = "limit-defaults-wrong", ["3"],
            "sends a chunkBytes default other than 16 MiB";
        ModelCallDefaultWrong = "model-call-default-wrong", ["3"],
            "sends a modelCallBytes default other than 32 MiB";
        ModelFileDefaultWrong = "model-file-default-wrong", ["3"],
            "sends a modelFileBytes default other than 8 MiB";
        ToolAnswerDefaultWrong = "tool-answer-default-wrong", ["3"],
            "sends a toolAnswerBytes default other than 8 MiB";
        HarnessStateDefaultWrong = "harness-state-default-wrong", ["3"],
            "sends a harnessStateBytes default other than 256 KiB";
        FolderEntriesDefaultWrong = "folder-entries-default-wrong", ["3"],
            "sends a folderEntries default other than 10,000";
        RecordEntryCeilingUnchecked = "record-entry-ceiling-unchecked", ["3"],
            "lets a Tenant's recordEntryBytes pass its 960 KiB ceiling";
        ToolAttemptsDefault5 = "tool-attempts-default-5", ["4"],
            "counts re-sends up to 5 when the Tenant sets no toolAttempts";
        OtherRuntimeOperationExecutes = "other-runtime-operation-executes", ["4"],
            "answers execute for a runtime operation other than schedule_wake and memory";
        ToolCompletedPerAttempt = "tool-completed-per-attempt", ["4"],
            "writes a tool.completed for every intent of a re-sent call";
        ModelJsonRepaired = "model-json-repaired", ["5"],
            "closes the JSON a model's text left open";
        FailureWithoutRetryable = "failure-without-retryable", ["5"],
            "answers a model failure without retryable";
        ToolResultShaped = "tool-result-shaped", ["5"],
            "cuts a tool result's long text";
        BinaryPartsDropped = "binary-parts-dropped", ["5"],
            "drops an MCP answer's image part";
        CompactionParsedFromEntries = "compaction-parsed-from-entries", ["6"],
            "writes context.compacted for an unmarked edit whose entries hold a compaction";
        SummaryMessageRecorded = "summary-message-recorded", ["6"],
            "records message.assistant for a summary call";
        CompactionWithoutStep = "compaction-without-step", ["6"],
            "writes context.compacted without the last summary call's step";
        ToolCompletedWithoutCallId = "tool-completed-without-call-id", ["4"],
            "writes tool.completed for a tool effect with no callId";
        FolderReadSendsBytes = "folder-read-sends-bytes", ["4b"],
            "answers a read of a folder with its files' bytes";
        ReadVersionIgnored = "read-version-ignored", ["4b"],
            "answers a read of an older version with the latest";
        ReadLengthUnbounded = "read-length-unbounded", ["4b"],
            "answers a read the length it asks for, past chunkBytes";
        ReadLengthDefaultUnbounded = "read-length-default-unbounded", ["4b"],
            "answers a read without length the whole artifact, past chunkBytes";
        LimitMessageWithoutValue = "limit-message-without-value", ["1"],
            "names the limit in a limit_exceeded message, but not its value";
        ModelCallBytesUnchecked = "model-call-bytes-unchecked", ["3"],
            "runs a model call whose body is past modelCallBytes";
        ToolBodySizeUnchecked = "tool-body-size-unchecked", ["3"],
            "calls the tool with a tool call body past toolAnswerBytes";
        SmallFrameLimit = "small-frame-limit", ["1"],
            "takes messages of at most 16 MiB, not 64 MiB";
        LimitMessageUnnamed = "limit-message-unnamed", ["4"],
            "leaves the limit's name out of a limit_exceeded message";
        LimitExceededAsInvalid = "limit-exceeded-as-invalid", ["4"],
            "answers what passes a limit invalid, not limit_exceeded";
        RenewOverOk = "renew-over-ok", ["2"],
            "answers a renewal of a run that is over {ok: true}";
        UnlistedErrorCode = "unlisted-error-code", ["1"],
            "answers a request of an unknown method with a code HARNESS_ERROR_CODES does not list";
        ErrorFrameMisshapen = "error-frame-misshapen", ["1"],
            "sends an error answer's code and message as error, not e";
        PingFrameMisshapen = "ping-frame-misshapen", ["1"],
            "pings with {t: \"msg\", m: \"ping\"}, not {t: \"ping\"}";
        HeaderVersion2 = "header-version-2", ["1"],
            "upgrades with Nylorun-Harness-Api: 2 and refuses 1 with 426";
        RefusedOutcomeRecorded = "refused-outcome-recorded", ["4"],
            "refuses an outcome past recordEntryBytes, yet records it";
        OtherValuesRedacted = "other-values-redacted", ["log"],
            "redacts every string a harness reports, not only the tokens it signed";
        HelloAnswersApi4 = "hello-answers-api-4", ["2"],
            "answers hello {api: 4}";
        OkFrameMisshapen = "ok-frame-misshapen", ["2"],
            "sends an ok answer's result as result, not r";
        SandboxOwnerDropped = "sandbox-owner-dropped", ["3"],
            "sends routing.sandbox without ownerId";
        ModelProviderDropped = "model-provider-dropped", ["3"],
            "sends TurnStart's model without its provider";
        ReadAnswerWithoutOffset = "read-answer-without-offset", ["4b"],
            "answers artifact.read without offset";
        ToolRowKindIsTheEffects = "tool-row-kind-is-the-effects", ["4"],
            "names a tool call's row by the effect's kind (tool), not the target's";
        GateErrorMisshapen = "gate-error-misshapen", ["5"],
            "answers a gate error {code, message}, not {error: {code, message}}";
        UnjournaledRefused403 = "unjournaled-refused-403", ["5"],
            "refuses an un-journaled call 403 forbidden, not 409 effect_not_journaled";
        ToolAnswerMisshapen = "tool-answer-misshapen", ["5"],
            "answers a tool call that succeeded {ok: true, value}, not {ok: true, result}";
        PolicyDenialNotToolDenied = "policy-denial-not-tool-denied", ["4"],
            "answers a call the policy denies completed with tool.forbidden, not tool.denied";
        HeldCallRefused = "held-call-refused", ["4"],
            "answers a call the policy holds completed with a failure, not pending";
        PendingStatusRenamed = "pending-status-renamed", ["4"],
            "answers an intent that waits {status: \"waiting\"}, not pending";
        MemoryFailureWithoutText = "memory-failure-without-text", ["4"],
            "answers a memory call that fails with a failure that has no text (no code, no message)";
        ApprovalDenialNotToolDenied = "approval-denial-not-tool-denied", ["7"],
            "answers a call a person denied completed with tool.rejected, not tool.denied";
        ReadAtTheEndSendsBytes = "read-at-the-end-sends-bytes", ["4b"],
            "answers a read at the end with the file's bytes (and eof: true)";
        RepeatedKeyAnswersCreated = "repeated-key-answers-created", ["4b"],
            "answers a begin with a key already written created: true (the same version)";
        ChunkOffsetUnchecked = "chunk-offset-unchecked", ["4b"],
            "takes a chunk at any offset (a repeat of the last still taken once)";
        SandboxEnvironmentDropped = "sandbox-environment-dropped", ["3"],
            "sends routing.sandbox without its environment";
        LimitBytesMessageBare = "limit-bytes-message-bare", ["4b"],
            "refuses an upload past limitBytes with a message naming neither limitBytes nor its value";
        JoinTokenUnchecked = "join-token-unchecked", ["9"],
            "answers a host's join whose join token is not its pod's";
        JoinWithoutEgressToken = "join-without-egress-token", ["9"],
            "answers a host's join without egressToken";
        NoSetupOnNewDisk = "no-setup-on-new-disk", ["9"],
            "answers a join on a new disk without the Agent's setup";
        SetupOnSeededDisk = "setup-on-seeded-disk", ["9"],
            "answers a join on a seeded disk with the Agent's setup";
        HostTokenRefused = "host-token-refused", ["9"],
            "refuses an upgrade whose bearer is a host token (401)";
        PodHelloAnyName = "pod-hello-any-name", ["9"],
            "accepts a host's hello under another harness id than its Agent's";
        HostRenewRefused = "host-renew-refused", ["9"],
            "refuses a host's renewal with its own host token";
        HostRenewAnyToken = "host-renew-any-token", ["9"],
            "accepts a host renewal whose bearer is no host token";
        PodRunsToAnotherHost = "pod-runs-to-another-host", ["2"],
            "offers a pod Agent's runs to the host of another pod of the same harness id";
        PodRunsNeverToHosts = "pod-runs-never-to-hosts", ["1"],
            "offers a custom harness's runs to no host of its Agents' pods";
        PodWorkspaceToAnotherHost = "pod-workspace-to-another-host", ["10"],
            "sends a pod session's workspace requests to the hosts of other pods too";
        FlowsToPodHosts = "flows-to-pod-hosts", ["3"],
            "offers a flow's runs to a pod's host (a custom harness) too";
        CustomStateUnchecked = "custom-state-unchecked", ["7"],
            "takes a pod host's (a custom harness's) state past harnessStateBytes";
        VolumeIdRefused = "volume-id-refused", ["9"],
            "refuses a host's join that carries volumeId";
        ManifestHarnessIgnored = "manifest-harness-ignored", ["2"],
            "pins every session to nylorun, whatever its Agent's manifest's harness.id";
        // issue 43, pod host:
        SeededNotSaid = "seeded-not-said", ["9"],
            "answers a join on a seeded disk without seeded: true (and without the setup)";
        SeededOnEveryJoin = "seeded-on-every-join", ["9"],
            "answers every join with seeded: true, a new disk's too (whose join carries the setup)";
        JoinWithoutTokenAccepted = "join-without-token-accepted", ["9"],
            "answers a host's join that carries no joinToken (checks the token only when one is sent)";
        JoinTokenUpgrades = "join-token-upgrades", ["9"],
            "takes a pod's join token as a WebSocket bearer, as it takes the pod's host token";
        HostRenewHarnessToken = "host-renew-harness-token", ["9"],
            "answers a host renewal whose bearer is a harness token (any token it knows), not a host token";
        JoinAnswersAnotherSandboxId = "join-answers-another-sandbox-id", ["9"],
            "answers a join with a sandboxId of its own making, not the joining pod's";
        PodEntrypointReplaced = "pod-entrypoint-replaced", ["9"],
            "runs an entrypoint of its own in a pod Agent's pod, not its runtime.image's (pod.probe: the probe never runs)";
        PodHarnessCopiedIn = "pod-harness-copied-in", ["9"],
            "copies a file of our harness into a pod Agent's /harness";
        PodRunsAsRoot = "pod-runs-as-root", ["9"],
            "runs a pod's workload as uid 0, not 1000";
        PodRootWritable = "pod-root-writable", ["9"],
            "runs a pod's workload on a writable root";
        PodSkillsReadOnly = "pod-skills-read-only", ["9"],
            "mounts a pod's /skills read-only";
        // issue 43, journal, frames and timers:
        OutcomeWithoutIntentRecorded = "outcome-without-intent-recorded", ["4"],
            "records an outcome for an effect no intent journaled, and answers it completed";
        OutcomeWithoutIntentAnswered = "outcome-without-intent-answered", ["4"],
            "answers an outcome for an effect no intent journaled completed with its value (recording nothing)";
        SecondOutcomeOverwrites = "second-outcome-overwrites", ["4"],
            "records an effect's second outcome over its first";
        SecondOutcomeAnsweredWithItsValue = "second-outcome-answered-with-its-value", ["4"],
            "answers an effect's second outcome completed with that second value (the first stays recorded)";
        JournalPerTurn = "journal-per-turn", ["4"],
            "replays to a segment the completed outcomes of every segment of its turn, not only its own";
        RefusedCallRunsAtTheGate = "refused-call-runs-at-the-gate", ["4"],
            "runs at the gate a tool call whose intent was refused (answered completed with a failure): the gate asks only that the key was journaled";
        OneApprovalPerSegment = "one-approval-per-segment", ["7"],
            "pauses the turn with one approval interaction, for the first held call only";
        OneApprovalPerTool = "one-approval-per-tool", ["7"],
            "pauses the turn with one approval interaction per held tool, not per held call";
        FrameTrailingTextIgnored = "frame-trailing-text-ignored", ["1"],
            "takes a text frame's first JSON value as a message and ignores the text after it";
        FrameLinesAreMessages = "frame-lines-are-messages", ["1"],
            "takes each line of a text frame as a message of its own";
        FrameLimitUnchecked = "frame-limit-unchecked", ["1"],
            "takes messages past 64 MiB (HARNESS_MAX_PAYLOAD)";
        PingsOnce = "pings-once", ["1"],
            "pings once after the upgrade, never again";
        PingsAtTheDropPeriod = "pings-at-the-drop-period", ["1"],
            "pings every dropMs (the silence it drops a harness after), not every pingMs";
        FolderFileHashUnchecked = "folder-file-hash-unchecked", ["4b"],
            "takes a folder's file whose bytes do not match its sha256";
        FolderUploadSurvivesABadFile = "folder-upload-survives-a-bad-file", ["4b"],
            "refuses a folder's file whose bytes do not match its sha256, but keeps the upload open";
        FolderBadHashNotInvalid = "folder-bad-hash-not-invalid", ["4b"],
            "refuses a folder's file whose bytes do not match its sha256 with effect_drift, not invalid";
        FolderFileByHashAlone = "folder-file-by-hash-alone", ["4b"],
            "takes a folder's file sent without bytes when its sha256 names content the store holds";
        FolderEntriesUnchecked = "folder-entries-unchecked", ["4b"],
            "takes a folder's files past maxEntries (limits.folderEntries)";
        FolderFileLimitUnchecked = "folder-file-limit-unchecked", ["4b"],
            "takes a folder's file past maxFileBytes";
        FolderTotalUnchecked = "folder-total-unchecked", ["4b"],
            "takes a folder's files past maxBytes together";
        FolderLimitAsInvalid = "folder-limit-as-invalid", ["4b"],
            "refuses a folder's file past one of its limits invalid, not limit_exceeded";
        FolderWrittenAsFile = "folder-written-as-file", ["4b"],
            "commits a folder upload as a file artifact";
        UnchangedFolderVersionAdded = "unchanged-folder-version-added", ["4b"],
            "adds a folder version whose files are the folder's latest";
        UnchangedFolderNotMarked = "unchanged-folder-not-marked", ["4b"],
            "answers a folder version whose files are the folder's latest created: false, without unchanged: true";
        FolderTotalsUncheckedAtCommit = "folder-totals-unchecked-at-commit", ["4b"],
            "commits a folder version whose new content passes the Tenant's total";
        FolderCommitWithoutDedupe = "folder-commit-without-dedupe", ["4b"],
            "counts every file of a folder version against the totals at commit, not only its new content";
        FolderTotalReasonAlwaysTenant = "folder-total-reason-always-tenant", ["4b"],
            "refuses a folder version past the Agent's total with reason tenant_total, not environment_total";
        CancelSentAsARequest = "cancel-sent-as-a-request", ["8"],
            "sends cancel as a request {t: \"req\", id, m, p}, not a message";
        CancelReasonAsErrorCode = "cancel-reason-as-error-code", ["8"],
            "sends cancel's reason ownership.lost as ownership_lost (the error code's spelling)";
        CancelWithoutRunId = "cancel-without-run-id", ["8"],
            "sends cancel without runId";
        CompactionOfAnyTurn = "compaction-of-any-turn", ["6"],
            "takes a compaction's summaryEffectIds naming a summary call of another turn";
        CompactionTakesAnUnfinishedCall = "compaction-takes-an-unfinished-call", ["6"],
            "takes a compaction's summaryEffectIds naming a summary call that has no outcome yet";
        KeyPerRun = "key-per-run", ["4b"],
            "keeps an artifact.write key per run, not per session: the session's next run writes it again";
        // issue 43, scope (runs not held, refusal codes, negative halves):
        OtherConnectionsRunTaken = "other-connections-run-taken", ["2"],
            "takes a request naming a live run another connection holds (it checks the run exists, not that this connection holds it)";
        OverRunRead = "over-run-read", ["2"],
            "answers artifact.read of a run that is over (it forgets the run is over there only)";
        OverRunTranscript = "over-run-transcript", ["2"],
            "answers transcript.read of a run that is over (it forgets the run is over there only)";
        OverRunWritten = "over-run-written", ["2"],
            "takes an artifact.write of a run that is over (it forgets the run is over there only)";
        OverRunOutput = "over-run-output", ["2"],
            "takes an output of a run that is over (it forgets the run is over there only)";
        OutputRunRenewable = "output-run-renewable", ["2"],
            "answers a renewal of a run its output ended {ok: true}";
        RefusedRunRenewable = "refused-run-renewable", ["2"],
            "answers a renewal after a refused one {ok: true}";
        ApiAboveAccepted = "api-above-accepted", ["2"],
            "answers hello with any api from 5 up";
        ApiStringAccepted = "api-string-accepted", ["2"],
            "reads hello's api \"5\" (a string) as 5";
        NameCaseFolded = "name-case-folded", ["2"],
            "compares hello's name with the credential's harness id ignoring case";
        ShortIdsRefused = "short-ids-refused", ["2"],
            "refuses a harness id of two characters (reads the pattern as three or more)";
        AnyApiHeaderAccepted = "any-api-header-accepted", ["1"],
            "upgrades with any Nylorun-Harness-Api value, only its presence checked";
        SnapshotVersionUnchecked = "snapshot-version-unchecked", ["3"],
            "records a session.mcp snapshot whose snapshotSchemaVersion is not 2";
        DeferredAlwaysSaid = "deferred-always-said", ["3"],
            "says deferred: false of an MCP tool the manifest leaves unset";
        SelfWakeAlwaysTrue = "self-wake-always-true", ["3"],
            "TurnStart's agent says selfWake: true though the version does not set runtime.selfWake";
        SandboxBashOnly = "sandbox-bash-only", ["4"],
            "answers execute for a sandbox call named bash only, refusing read, write, edit, grep and glob";
        UnknownOpOk = "unknown-op-ok", ["4b"],
            "answers an artifact.write of an unknown op ok";
        OlderOffsetAcknowledged = "older-offset-acknowledged", ["4b"],
            "acknowledges a chunk at any offset already received, not only a repeat of the last";
        OtherSessionCodedInvalid = "other-session-coded-invalid", ["4b"],
            "refuses another session's artifact invalid, a missing one not_found (the codes tell which exist)";
        NotFoundSaysAnotherSession = "not-found-says-another-session", ["4b"],
            "answers another session's artifact not_found, its message saying it belongs to another session";
        NotFoundSaysNeverNamed = "not-found-says-never-named", ["4b"],
            "answers a Tenant-wide artifact never named not_found, its message saying so";
        NotFoundSaysAgentDisk = "not-found-says-agent-disk", ["4b"],
            "answers an Agent's disk version not_found, its message saying it is on the Agent's disk";
        ScheduleWakeMalformedScheduled = "schedule-wake-malformed-scheduled", ["4"],
            "answers a schedule_wake whose input names no in, at or cancel with a wake scheduled (a success)";
        DefinitionOffsetIgnored = "definition-offset-ignored", ["3"],
            "answers a definition.file range from the file's start, whatever offset it asks";
        NameOfAnyKnownHarness = "name-of-any-known-harness", ["2"],
            "answers hello naming any harness id the operator made a token for, not only the credential's";
        OtherConnectionsArtifactsTaken = "other-connections-artifacts-taken", ["2"],
            "takes artifact.read and artifact.write naming a run another connection holds (the journal's requests checked only)";
        OtherConnectionsOutputTaken = "other-connections-output-taken", ["2"],
            "takes an output naming a run another connection holds, ending it";
        MissingNameDefaulted = "missing-name-defaulted", ["2"],
            "answers a hello that names no harness as if it named the credential's";
        MissingApiDefaulted = "missing-api-defaulted", ["2"],
            "answers a hello that names no api as if it said api 5";
        LostRunRenewable = "lost-run-renewable", ["1"],
            "answers a renewal of a run whose connection was lost {ok: true}";
        NotHeldWithoutMessage = "not-held-without-message", ["2"],
            "refuses a request naming a run it does not hold {code} without its message";
        MissingOpBegins = "missing-op-begins", ["4b"],
            "takes an artifact.write that names no op for a begin";
        NotHeldCodedInvalid = "not-held-coded-invalid", ["2"],
            "refuses a request naming a run it does not hold with invalid, not run_not_held";
        RunOverCodeUnlisted = "run-over-code-unlisted", ["2"],
            "refuses a request naming a run that is over with run_over, a code not in HARNESS_ERROR_CODES";
        // issue 43, gates:
        McpServerUrlFollowed = "mcp-server-url-followed", ["5"],
            "connects to a URL named as an MCP server's serverName (mcp/connect, mcp/list, mcp/close, tool-calls) and answers what it lists";
        HttpToolUrlFollowed = "http-tool-url-followed", ["5"],
            "calls a URL named as an http-calls body's tool";
        HttpTargetUnchecked = "http-target-unchecked", ["5"],
            "runs the tool an http-calls body names once its key's intent answered execute, whatever tool that intent named";
        GateTokenUnverified = "gate-token-unverified", ["5"],
            "takes any Bearer at the gates as the live run's token (checks only that one is sent)";
        HarnessTokenAtGates = "harness-token-at-gates", ["5"],
            "takes the harness's connection token at the gates as the live run's token";
        GateRunsAnyIntent = "gate-runs-any-intent", ["5"],
            "runs a tool call whose key has an intent, whatever it was answered (pending or completed too)";
        ModelCallWithoutEffectIdRuns = "model-call-without-effect-id-runs", ["5"],
            "runs a model-calls body without effectId (the Idempotency-Key stands for it)";
        ModelCallWithoutInvocationIdRuns = "model-call-without-invocation-id-runs", ["5"],
            "runs a model-calls body without invocationId";
        TargetServerUnchecked = "target-server-unchecked", ["5"],
            "runs a tool-calls body on the server it names when its intent named the same tool on another declared server";
        TargetAgentUnchecked = "target-agent-unchecked", ["5"],
            "runs a tool-calls body whose server names another agent than the journaled row's";
        UsageRowAtIntent = "usage-row-at-intent", ["5"],
            "writes a model_usage row when a model intent answers execute, whether or not the call reaches the gate";
        CredentialInMcpAnswer = "credential-in-mcp-answer", ["5"],
            "answers mcp/connect and mcp/list with the server's endpoint, its credential included";
        CredentialInGateError = "credential-in-gate-error", ["5"],
            "names the tool's endpoint and credential in a gate error's message";
        MediaPartRefused = "media-part-refused", ["5"],
            "refuses every media part, an image of the session's own included";
        TextFileAsMedia = "text-file-as-media", ["5"],
            "sends a text file as a media part, not refusing it unsupported_input";
        TextFileInvalidRequest = "text-file-invalid-request", ["5"],
            "refuses a text file as a media part invalid_request, not unsupported_input";
        OtherSessionMediaFetched = "other-session-media-fetched", ["5"],
            "fetches another session's artifact for a media part";
        MissingVersionMediaSent = "missing-version-media-sent", ["5"],
            "sends the latest version for a media part naming a version the artifact never had";
        FolderMediaSent = "folder-media-sent", ["5"],
            "sends a folder artifact as a media part";
        MediaFileSizeUnchecked = "media-file-size-unchecked", ["5"],
            "sends a file past modelFileBytes as a media part";
        UnfetchableMediaUnsupported = "unfetchable-media-unsupported", ["5"],
            "refuses a media part it cannot fetch unsupported_input, not invalid_request";
        MissingMediaDropped = "missing-media-dropped", ["5"],
            "drops a media part naming no artifact and sends the rest of the call";
        ToolGateNoRunStale = "tool-gate-no-run-stale", ["5"],
            "runs tool-calls and http-calls of a run that is over (the Model Gate answers run_stale)";
        ModelGateErrorMisshapen = "model-gate-error-misshapen", ["5"],
            "answers the Model Gate's errors {code, message}, not {error: {code, message}} (the Tool Gate's are right)";
        McpKeyAsHeader = "mcp-key-as-header", ["5"],
            "hands an MCP tool the key as an Idempotency-Key header, not _meta[\"nylorun/idempotency-key\"] on tools/call";
        HttpResendRunsAgain = "http-resend-runs-again", ["5"],
            "runs an http-calls re-send under the same key again (tool-calls and model-calls answer the same bytes)";
        HttpFailureAsGateError = "http-failure-as-gate-error", ["5"],
            "answers an HTTP tool's failure (a status not 2xx) as a gate error, not {ok: false, error}";
        ToolCallSendsModelsName = "tool-call-sends-models-name", ["5"],
            "calls the MCP tool by the name the model called it (the intent's toolName), not its raw name";
        ToolCallNameJoined = "tool-call-name-joined", ["5"],
            "calls the MCP tool by a joined name SERVER__TOOL, not its raw name on the server";
        TraceparentNotSentOn = "traceparent-not-sent-on", ["5"],
            "sends a tool call's traceparent (the execute answer's) on to no tool";
        McpTraceparentDropped = "mcp-traceparent-dropped", ["5"],
            "sends a tool call's traceparent on to HTTP tools but not to MCP tools";
        FailureEchoNotRedacted = "failure-echo-not-redacted", ["5"],
            "replaces an echoed credential with [redacted] in a tool's results, but not in its failures";
        HttpAnswerSizeUnchecked = "http-answer-size-unchecked", ["5"],
            "holds MCP answers to toolAnswerBytes, but passes an HTTP tool's answer of any size";
        HttpResultShaped = "http-result-shaped", ["5"],
            "passes an MCP result whole, but cuts an HTTP tool's long texts";
        CancelAbortsEveryCall = "cancel-aborts-every-call", ["5"],
            "aborts every call in flight at a cancel route, not only the call of its key";
        TenantNamedMediaRefused = "tenant-named-media-refused", ["5"],
            "refuses a media part naming a Tenant-wide artifact the session's messages named (reads the session's own only)";
        ToolKeyOfItsOwn = "tool-key-of-its-own", ["5"],
            "hands a tool an idempotency key of its own (the key with the run's id prefixed), not the effect id";
        UsageRowWithoutEffectId = "usage-row-without-effect-id", ["5"],
            "lists the model_usage rows by the call's key under another member (key), without effectId";
        ResendInFlightRunsAgain = "resend-in-flight-runs-again", ["5"],
            "runs a re-send of a tool call still at its tool again, not joining it (its answer is the second run's)";
    }
}

crate::variants! {
    /// Allowed variants of the reference core: open points decided otherwise.
    pub enum Variant {
        RenewOverOkFalse = "renew-over-ok-false",
            "answers a renewal of a run that is over {ok: false}, not run_not_held";
        UnknownMethodNotFound = "unknown-method-not-found",
            "answers an unknown method not_found, not invalid";
        RefusalsUnavailable = "refusals-unavailable",
            "refuses hello, and requests its schemas refuse, with unavailable, not invalid";
        OtherIds = "other-ids",
            "names its Tenant otherwise";
        InputAsText = "input-as-text",
            "passes a message on as {text} and queued messages as [{text}…], not as strings";
        Sha256Prefixed = "sha256-prefixed",
            "names an artifact's sha256 as sha256:<hex>, not bare hex";
        BinaryFramesClose = "binary-frames-close",
            "closes the connection on a binary frame, rather than ignoring it";
        LimitMessagesReworded = "limit-messages-reworded",
            "words its limit_exceeded messages its own way, with the limit's name and value";
        PurposeOnTheEffect = "purpose-on-the-effect",
            "reads an intent's purpose on its effect object, not beside it (core.start answers purposeAt)";
        ApprovalAsksTheHeldId = "approval-asks-the-held-id",
            "answers a held call's approval when the new segment asks the held id, not its identity under the new prefix";
        OversizedEntryKeepsTheRun = "oversized-entry-keeps-the-run",
            "refuses an output whose transcript entry is past recordEntryBytes and keeps the run held";
        DefinitionFileBareHex = "definition-file-bare-hex",
            "reads definition.file's sha256 as bare hex only, not as the manifest's sha256:<hex>";
        DiscoveryIsTheSnapshot = "discovery-is-the-snapshot",
            "holds the session's discovery as its recorded MCP snapshot, not apart from it";
        TraceOfItsOwn = "trace-of-its-own",
            "sends TurnStart a trace context of its own, not the message's";
        ModelGateUnjournaled = "model-gate-unjournaled",
            "runs a model call no intent answered execute for (§ 5 fixes that refusal for tool calls)";
        OutcomesByHash = "outcomes-by-hash",
            "lists TurnStart's outcomes as {requestHash, outcome}, without their effect ids";
        McpShapedFailures = "mcp-shaped-failures",
            "answers a tool call's failure as an MCP error result {isError: true, content}, not {kind: \"failed\", code, message} (core.start answers failure)";
        OtherWireNames = "other-wire-names",
            "names artifact.write's steps, an output's type, a transcript entry, the http-calls body and session.mcp's snapshot its own way, and refuses hcpspec's names there (core.start answers names)";
        VersionsByName = "versions-by-name",
            "writes a new version of the session's own file artifact of the same name, for a begin that names no artifactId";
        OtherRuntimeOperationInvalid = "other-runtime-operation-invalid",
            "refuses an intent for a runtime operation other than schedule_wake and memory as invalid, as a strict schema would, rather than answering it completed with a failure";
        // issue 43, gates:
        MediaRefusalAsFailure = "media-refusal-as-failure",
            "answers a media part it refuses 200 with the call's failure {kind: \"failed\", code}, not a gate error";
        UsageRowForRefusedCall = "usage-row-for-refused-call",
            "meters a model call it refused before sending anything (a media part refused) with a usage row of its own, as § 5's \"meters every call\" may be read";
        CancelEndsTheConnection = "cancel-ends-the-connection",
            "aborts a cancelled gate call by ending its connection with no answer, not by answering it cancelled";
    }
}
