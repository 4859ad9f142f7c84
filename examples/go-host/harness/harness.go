// Package harness renders the released harness API the adapter binds to: the
// rig, the session's segregated capabilities, and runtimecommand.
package harness

import (
	"context"
	"encoding/json"
)

// Block is a content.Block, passed through unchanged.
type Block = json.RawMessage

// Session is what a rig returns (session.SessionController): only an id.
type Session interface{ SessionID() string }

// SessionOptions are rig.NewSession's options.
type SessionOptions struct{ SessionID *string }

// SessionOption is one rig.NewSession option.
type SessionOption func(*SessionOptions)

// WithSessionID launches the session under id (rig.WithSessionID).
func WithSessionID(id string) SessionOption {
	return func(o *SessionOptions) { o.SessionID = &id }
}

// Rig is rig.Rig.
type Rig interface {
	NewSession(ctx context.Context, opts ...SessionOption) (Session, error)
	RestoreSession(ctx context.Context, id string) (Session, error)
}

// Delivery is event.Delivery; Committed is false for anything that is not a
// committed publication.
type Delivery struct {
	EventID        string
	JournalSeq     uint64
	PublicBody     json.RawMessage
	CoveredThrough json.RawMessage
	Committed      bool
}

// The segregated session capabilities, discovered by assertion.
type (
	IdleWaiter interface {
		WaitIdle(ctx context.Context) error
	}
	Liveness interface{ Done() <-chan struct{} }
	Releaser interface {
		ReleaseResidency(ctx context.Context) error
	}
	CommittedPublicEventProvider interface {
		CommittedPublicEvents(ctx context.Context) (<-chan Delivery, error)
	}
	LeaseEpochReporter       interface{ LeaseEpoch() (uint64, bool) }
	PersistenceFaultReporter interface{ PersistenceFaults() <-chan error }
	ResidencyAbandoner       interface{ AbandonResidency() }
	LiveOptions              interface {
		SubscribeLive(ctx context.Context, sink func(frame json.RawMessage)) error
	}
)

// Kind is runtimecommand.Kind.
type Kind string

// The five kinds.
const (
	KindCreate       Kind = "create"
	KindRestore      Kind = "restore"
	KindInput        Kind = "input"
	KindInterrupt    Kind = "interrupt"
	KindGateResponse Kind = "gate_response"
)

// Valid reports whether k is one of the five kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindCreate, KindRestore, KindInput, KindInterrupt, KindGateResponse:
		return true
	}
	return false
}

// GateResponse is the decoded answer to a gate.
type GateResponse struct {
	InteractionID string          `json:"interactionId"`
	Answer        json.RawMessage `json:"answer"`
	Source        string          `json:"source"`
	Attempt       string          `json:"attempt"`
}

// Admitted is runtimecommand.Admitted.
type Admitted struct {
	Kind         Kind
	Blocks       []Block
	LeaseEpoch   uint64
	GateResponse *GateResponse
	Principal    json.RawMessage
	Metadata     map[string]string
	Attempt      string
}

// runtimecommand.Provider, Applier and AttemptCloser.
type (
	Provider interface{ RuntimeCommandApplier() Applier }
	Applier  interface {
		ApplyRuntimeCommand(ctx context.Context, a Admitted) error
	}
	AttemptCloser interface {
		CloseAttempt(ctx context.Context, attempt string) error
	}
)
