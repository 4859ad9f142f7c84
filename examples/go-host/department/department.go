// Package department renders the Host seams the adapter binds to: what Host
// requires of a runtime, as small Go interfaces (docs/host-protocol.md § 1, § 3.6).
package department

import (
	"context"
	"encoding/json"
)

// CompatibilityID is product-owned.
type CompatibilityID string

// Capabilities are what a product declares for its department.
type Capabilities struct {
	SupportsPooled  bool   `json:"supportsPooled"`
	AdmissionWeight int    `json:"admissionWeight"`
	CaptureSafety   string `json:"captureSafety"`
}

// Recovery is one recovery capability a target declares.
type Recovery string

// Storage is a request's storage context.
type Storage struct{ Namespace string }

// RigCreateRequest and RigRestoreRequest carry the same six fields.
type RigCreateRequest struct {
	TenantID, SessionID, AgentID, Placement, WorkspaceRoot string
	Storage                                                Storage
}

// RigRestoreRequest: see RigCreateRequest.
type RigRestoreRequest RigCreateRequest

// Binding is what Host decided about the session before launching it.
type Binding struct {
	RigSessionID   string // a UUID
	ResidencyEpoch uint64 // Host's residency grant: never a journal epoch
}

// RigSession is a launched session; its capabilities are discovered by assertion.
type RigSession interface{ ID() string }

// Rig launches sessions.
type Rig interface {
	NewSession(ctx context.Context, req RigCreateRequest, b Binding) (RigSession, error)
	RestoreSession(ctx context.Context, req RigRestoreRequest, b Binding) (RigSession, error)
}

// Target is a runtime Host can register.
type Target struct {
	CompatibilityID CompatibilityID
	Capabilities    Capabilities
	Recovery        []Recovery
	Rig             Rig
}

// Registration is one runtime a registrar hands Host: an agent id and its target.
type Registration struct {
	AgentID string
	Target  Target
}

// RuntimeCommand is one durable command; Payload is opaque bytes.
type RuntimeCommand struct {
	Kind       string
	Principal  json.RawMessage
	Metadata   map[string]string
	Payload    []byte
	PayloadRef string // an unresolved object reference
	Attempt    string
}

// Publication is a committed public event (sessionwire.EnduringPublication).
type Publication struct {
	TenantID       string          `json:"tenantId"`
	SessionID      string          `json:"sessionId"`
	EventID        string          `json:"eventId"`
	JournalSeq     uint64          `json:"journalSeq"`
	PublicBody     json.RawMessage `json:"publicBody"`
	CoveredThrough json.RawMessage `json:"coveredThrough"`
}

// The six required capabilities.
type (
	IdleWaiter interface {
		WaitIdle(ctx context.Context) error
	}
	Liveness interface{ Done() <-chan struct{} }
	Releaser interface {
		ReleaseResidency(ctx context.Context) error
	}
	CommandApplier interface {
		ApplyCommand(ctx context.Context, c RuntimeCommand) error
	}
	LeaseEpochReporter    interface{ LeaseEpoch() (uint64, bool) }
	PublicationSubscriber interface {
		// SubscribePublications delivers committed public events after `after`.
		SubscribePublications(ctx context.Context, after string) (<-chan Publication, error)
	}
)

// The optional capabilities.
type (
	PersistenceFaultReporter interface{ PersistenceFaults() <-chan error }
	ResidencyAbandoner       interface{ AbandonResidency() }
	AttemptCloser            interface {
		CloseAttempt(ctx context.Context, attempt string) error
	}
	LiveOptionsSubscriber interface {
		SubscribeLiveOptions(ctx context.Context, fn func(frame json.RawMessage) bool) error
	}
	LiveTextSubscriber interface {
		SubscribeLiveText(ctx context.Context, fn func(text string) bool) error
	}
	ReasoningSubscriber interface {
		SubscribeReasoning(ctx context.Context, fn func(text string) bool) error
	}
)
