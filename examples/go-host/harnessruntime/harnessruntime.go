// Package harnessruntime binds Host's department seams to a harness rig: a
// small adapter written from spec 003 ("harnessruntime") alone.
package harnessruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"example.com/go-host/department"
	"example.com/go-host/harness"
)

// The recovery capabilities Target declares and holds true at every bind.
const (
	RecoveryAttemptCloser     department.Recovery = "AttemptCloser"
	RecoveryPersistenceFaults department.Recovery = "PersistenceFaultReporter"
)

// IncapableSessionError refuses a session that lacks what bind requires.
type IncapableSessionError struct {
	SessionID string
	Missing   []string
}

func (e *IncapableSessionError) Error() string {
	return fmt.Sprintf("harnessruntime: session %s is incapable: missing %s", e.SessionID, strings.Join(e.Missing, ", "))
}

// UnsupportedCommandError refuses what this session cannot take.
type UnsupportedCommandError struct{ What, Reason string }

func (e *UnsupportedCommandError) Error() string {
	return fmt.Sprintf("harnessruntime: unsupported %s: %s", e.What, e.Reason)
}

// InvalidCommandError refuses a command the adapter cannot admit as given.
type InvalidCommandError struct{ Kind, Reason string }

func (e *InvalidCommandError) Error() string {
	return fmt.Sprintf("harnessruntime: invalid %s command: %s", e.Kind, e.Reason)
}

// BlockDecoder decodes an input-shaped body into content blocks.
type BlockDecoder func(body []byte) ([]harness.Block, error)

// DecodeInputBlocks is the default decoder: Core's InputRequest.
func DecodeInputBlocks(body []byte) ([]harness.Block, error) {
	var req struct {
		Blocks []harness.Block `json:"blocks"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("not an InputRequest: %w", err)
	}
	return req.Blocks, nil
}

// Option configures Target.
type Option func(*adapter)

// WithBlockDecoder replaces DecodeInputBlocks.
func WithBlockDecoder(d BlockDecoder) Option { return func(a *adapter) { a.decode = d } }

// Rigs chooses the rig for each launch; the request goes no further.
type Rigs interface {
	RigForCreate(ctx context.Context, req department.RigCreateRequest) (harness.Rig, error)
	RigForRestore(ctx context.Context, req department.RigRestoreRequest) (harness.Rig, error)
}

type shared struct{ rig harness.Rig }

func (s shared) RigForCreate(context.Context, department.RigCreateRequest) (harness.Rig, error) {
	return s.rig, nil
}
func (s shared) RigForRestore(context.Context, department.RigRestoreRequest) (harness.Rig, error) {
	return s.rig, nil
}

// SharedRig serves every launch from one rig.
func SharedRig(r harness.Rig) Rigs { return shared{r} }

type perTenant map[string]harness.Rig

func (p perTenant) pick(tenant string) (harness.Rig, error) {
	if r := p[tenant]; r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("harnessruntime: no rig for tenant %q", tenant)
}
func (p perTenant) RigForCreate(_ context.Context, r department.RigCreateRequest) (harness.Rig, error) {
	return p.pick(r.TenantID)
}
func (p perTenant) RigForRestore(_ context.Context, r department.RigRestoreRequest) (harness.Rig, error) {
	return p.pick(r.TenantID)
}

// RigPerTenant serves each tenant from its own rig; other tenants have none.
func RigPerTenant(rigs map[string]harness.Rig) Rigs {
	p := perTenant{}
	for t, r := range rigs {
		p[t] = r
	}
	return p
}

// RigsFunc is a product's own choice of rig per request.
type RigsFunc struct {
	ForCreate  func(context.Context, department.RigCreateRequest) (harness.Rig, error)
	ForRestore func(context.Context, department.RigRestoreRequest) (harness.Rig, error)
}

// RigForCreate calls ForCreate.
func (f RigsFunc) RigForCreate(ctx context.Context, r department.RigCreateRequest) (harness.Rig, error) {
	return f.ForCreate(ctx, r)
}

// RigForRestore calls ForRestore.
func (f RigsFunc) RigForRestore(ctx context.Context, r department.RigRestoreRequest) (harness.Rig, error) {
	return f.ForRestore(ctx, r)
}

// Registration registers target under agentID (department.Registration), as the package doc's
// Use example hands it to host.RegistrarFunc.
func Registration(agentID string, target department.Target) department.Registration {
	return department.Registration{AgentID: agentID, Target: target}
}

// Target builds the department target. It declares both recovery capabilities.
func Target(rigs Rigs, id department.CompatibilityID, caps department.Capabilities, opts ...Option) (department.Target, error) {
	if rigs == nil {
		return department.Target{}, errors.New("harnessruntime: no Rigs")
	}
	a := &adapter{rigs: rigs, decode: DecodeInputBlocks}
	for _, o := range opts {
		o(a)
	}
	return department.Target{
		CompatibilityID: id,
		Capabilities:    caps,
		Recovery:        []department.Recovery{RecoveryAttemptCloser, RecoveryPersistenceFaults},
		Rig:             a,
	}, nil
}

type adapter struct {
	rigs   Rigs
	decode BlockDecoder
}

func (a *adapter) NewSession(ctx context.Context, req department.RigCreateRequest, b department.Binding) (department.RigSession, error) {
	r, err := a.rigs.RigForCreate(ctx, req)
	if err = noRig(r, err, b); err != nil {
		return nil, err
	}
	s, err := r.NewSession(ctx, harness.WithSessionID(b.RigSessionID)) // H1: nothing else crosses
	if err != nil {
		return nil, err
	}
	return a.bind(ctx, s, req.TenantID, req.SessionID)
}

func (a *adapter) RestoreSession(ctx context.Context, req department.RigRestoreRequest, b department.Binding) (department.RigSession, error) {
	r, err := a.rigs.RigForRestore(ctx, req)
	if err = noRig(r, err, b); err != nil {
		return nil, err
	}
	s, err := r.RestoreSession(ctx, b.RigSessionID) // H2: only the UUID crosses
	if err != nil {
		return nil, err
	}
	return a.bind(ctx, s, req.TenantID, req.SessionID)
}

// noRig refuses a launch its Rigs found no rig for: the session is incapable.
func noRig(r harness.Rig, err error, b department.Binding) error {
	if err == nil && r == nil {
		err = errors.New("Rigs chose no rig")
	}
	if err != nil {
		return &IncapableSessionError{SessionID: b.RigSessionID, Missing: []string{"a rig: " + err.Error()}}
	}
	return nil
}

// bind checks the session on its DYNAMIC type (a wrapper that does not forward
// a capability opts its session out; nothing is unwrapped) and refuses it,
// released first, when anything bind requires is missing.
func (a *adapter) bind(ctx context.Context, s harness.Session, tenant, session string) (department.RigSession, error) {
	b := &bound{s: s, tenant: tenant, session: session, decode: a.decode}
	var missing []string
	need := func(ok bool, what string) {
		if !ok {
			missing = append(missing, what)
		}
	}
	var ok bool
	b.idle, ok = s.(harness.IdleWaiter)
	need(ok, "session.IdleWaiter")
	b.live, ok = s.(harness.Liveness)
	need(ok, "session.Liveness")
	b.rel, ok = s.(harness.Releaser)
	need(ok, "session.Releaser")
	b.pubs, ok = s.(harness.CommittedPublicEventProvider)
	need(ok, "session.CommittedPublicEventProvider")
	if p, ok := s.(harness.Provider); ok {
		b.applier = p.RuntimeCommandApplier()
		need(b.applier != nil, "runtimecommand.Applier")
		b.closer, ok = b.applier.(harness.AttemptCloser)
		need(ok, "runtimecommand.AttemptCloser")
	} else {
		need(false, "runtimecommand.Provider")
	}
	b.epochs, ok = s.(harness.LeaseEpochReporter)
	need(ok, "session.LeaseEpochReporter")
	if f, ok := s.(harness.PersistenceFaultReporter); ok {
		b.faults = f.PersistenceFaults()
		need(b.faults != nil, "a non-nil PersistenceFaults channel")
	} else {
		need(false, "session.PersistenceFaultReporter")
	}
	b.abandon, ok = s.(harness.ResidencyAbandoner)
	need(ok, "session.ResidencyAbandoner")
	b.opts, _ = s.(harness.LiveOptions) // optional: without it nothing is relayed
	if len(missing) == 0 {
		return b, nil
	}
	err := error(&IncapableSessionError{SessionID: s.SessionID(), Missing: missing})
	if b.rel != nil {
		rctx, cancel := context.WithTimeout(detached{ctx}, 10*time.Second)
		defer cancel()
		if rerr := b.rel.ReleaseResidency(rctx); rerr != nil {
			err = join(err, fmt.Errorf("harnessruntime: releasing refused session %s: %w", s.SessionID(), rerr))
		}
	}
	return nil, err
}

// detached keeps ctx's values and drops its cancellation and deadline.
type detached struct{ context.Context }

func (detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detached) Done() <-chan struct{}       { return nil }
func (detached) Err() error                  { return nil }

// join is errors.Join (Go 1.20) for Go 1.19: every text, newline-separated;
// errors.Is and errors.As see every joined error (Unwrap() []error would
// fail go vet under 1.19).
func join(errs ...error) error { return joined(errs) }

type joined []error

func (j joined) Error() string {
	texts := make([]string, len(j))
	for i, e := range j {
		texts[i] = e.Error()
	}
	return strings.Join(texts, "\n")
}
func (j joined) Is(target error) bool {
	for _, e := range j {
		if errors.Is(e, target) {
			return true
		}
	}
	return false
}
func (j joined) As(target any) bool {
	for _, e := range j {
		if errors.As(e, target) {
			return true
		}
	}
	return false
}

// bound is what Host sees: every capability of spec 003's list.
type bound struct {
	s               harness.Session
	tenant, session string // from the launch request (H4)
	decode          BlockDecoder
	idle            harness.IdleWaiter
	live            harness.Liveness
	rel             harness.Releaser
	pubs            harness.CommittedPublicEventProvider
	applier         harness.Applier
	closer          harness.AttemptCloser
	epochs          harness.LeaseEpochReporter
	faults          <-chan error
	abandon         harness.ResidencyAbandoner
	opts            harness.LiveOptions
	drops           uint64
}

func (b *bound) ID() string                                 { return b.s.SessionID() }
func (b *bound) WaitIdle(ctx context.Context) error         { return b.idle.WaitIdle(ctx) }
func (b *bound) Done() <-chan struct{}                      { return b.live.Done() }
func (b *bound) ReleaseResidency(ctx context.Context) error { return b.rel.ReleaseResidency(ctx) }
func (b *bound) LeaseEpoch() (uint64, bool)                 { return b.epochs.LeaseEpoch() }
func (b *bound) PersistenceFaults() <-chan error            { return b.faults }
func (b *bound) AbandonResidency()                          { b.abandon.AbandonResidency() }
func (b *bound) EphemeralDrops() uint64                     { return atomic.LoadUint64(&b.drops) }
func (b *bound) CloseAttempt(ctx context.Context, attempt string) error {
	return b.closer.CloseAttempt(ctx, attempt)
}

// SubscribePublications refuses a resume point (H3) and assembles each
// committed delivery into a publication of the launch's tenant and session (H4).
func (b *bound) SubscribePublications(ctx context.Context, after string) (<-chan department.Publication, error) {
	if after != "" {
		return nil, &UnsupportedCommandError{What: "resume point " + after, Reason: "a harness subscription cannot be positioned"}
	}
	src, err := b.pubs.CommittedPublicEvents(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan department.Publication)
	go func() {
		defer close(out)
		for d := range src {
			if !d.Committed {
				continue
			}
			p := department.Publication{TenantID: b.tenant, SessionID: b.session, EventID: d.EventID,
				JournalSeq: d.JournalSeq, PublicBody: d.PublicBody, CoveredThrough: d.CoveredThrough}
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// SubscribeLiveOptions relays each preview frame; a refused frame is a drop.
func (b *bound) SubscribeLiveOptions(ctx context.Context, fn func(json.RawMessage) bool) error {
	if b.opts == nil {
		return nil
	}
	return b.opts.SubscribeLive(ctx, func(f json.RawMessage) {
		if !fn(f) {
			atomic.AddUint64(&b.drops, 1)
		}
	})
}

// SubscribeLiveText relays the text of text frames ({"text": S}).
func (b *bound) SubscribeLiveText(ctx context.Context, fn func(string) bool) error {
	return b.subscribeTyped(ctx, "text", fn)
}

// SubscribeReasoning relays the text of reasoning frames ({"reasoning": S}).
func (b *bound) SubscribeReasoning(ctx context.Context, fn func(string) bool) error {
	return b.subscribeTyped(ctx, "reasoning", fn)
}

func (b *bound) subscribeTyped(ctx context.Context, kind string, fn func(string) bool) error {
	return b.SubscribeLiveOptions(ctx, func(f json.RawMessage) bool {
		var fr map[string]string
		if json.Unmarshal(f, &fr) != nil {
			return true
		}
		text, ok := fr[kind]
		if !ok {
			return true // not this subscriber's frame, not a drop
		}
		return fn(text)
	})
}

// ApplyCommand admits one command and hands it to harness's applier.
func (b *bound) ApplyCommand(ctx context.Context, c department.RuntimeCommand) error {
	kind := harness.Kind(c.Kind)
	if !kind.Valid() {
		return &InvalidCommandError{Kind: c.Kind, Reason: "unknown command kind"}
	}
	if c.PayloadRef != "" { // H8: Host resolves referenced bodies before the attempt
		return &InvalidCommandError{Kind: c.Kind, Reason: "unresolved payload reference " + c.PayloadRef}
	}
	epoch, held := b.epochs.LeaseEpoch() // H5: from the runtime, per command
	if !held || epoch == 0 {
		return &UnsupportedCommandError{What: c.Kind + " command", Reason: fmt.Sprintf("the session holds no lease grant (epoch %d, held %v)", epoch, held)}
	}
	ad := harness.Admitted{Kind: kind, LeaseEpoch: epoch, Principal: c.Principal, Attempt: c.Attempt}
	var err error
	switch kind {
	case harness.KindCreate:
		ad.Metadata = c.Metadata
		ad.Blocks, err = b.createBlocks(c)
	case harness.KindInput:
		ad.Metadata = c.Metadata
		ad.Blocks, err = b.blocks(c.Kind, c.Payload)
	case harness.KindGateResponse:
		ad.GateResponse, err = gateResponse(c)
	} // restore and interrupt carry nothing but the principal
	if err != nil {
		return err
	}
	return b.applier.ApplyRuntimeCommand(ctx, ad)
}

// createBlocks reads Core's CreateRequest; an empty create is an idle create,
// and a first message is re-presented input-shaped to the decoder (H6).
func (b *bound) createBlocks(c department.RuntimeCommand) ([]harness.Block, error) {
	if len(bytes.TrimSpace(c.Payload)) == 0 {
		return nil, nil
	}
	var req struct {
		Blocks []harness.Block `json:"blocks"`
	}
	if err := json.Unmarshal(c.Payload, &req); err != nil {
		return nil, &InvalidCommandError{Kind: c.Kind, Reason: "body is not a CreateRequest: " + err.Error()}
	}
	if len(req.Blocks) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(struct {
		Blocks    []harness.Block   `json:"blocks"`
		Principal json.RawMessage   `json:"principal,omitempty"`
		Metadata  map[string]string `json:"metadata,omitempty"`
	}{req.Blocks, c.Principal, c.Metadata})
	if err != nil {
		return nil, err
	}
	return b.blocks(c.Kind, body)
}

func (b *bound) blocks(kind string, body []byte) ([]harness.Block, error) {
	if b.decode == nil {
		return nil, &InvalidCommandError{Kind: kind, Reason: "no block decoder is bound"}
	}
	blocks, err := b.decode(body)
	if err != nil {
		return nil, &InvalidCommandError{Kind: kind, Reason: "body does not decode: " + err.Error()}
	}
	if len(blocks) == 0 {
		return nil, &InvalidCommandError{Kind: kind, Reason: "body decodes to no content blocks"}
	}
	return blocks, nil
}

// gateResponse decodes Core's stored gate body; the user answers, under the
// attempt the record authorized.
func gateResponse(c department.RuntimeCommand) (*harness.GateResponse, error) {
	var body struct {
		InteractionID string          `json:"interactionId"`
		Answer        json.RawMessage `json:"answer"`
	}
	if err := json.Unmarshal(c.Payload, &body); err != nil || body.InteractionID == "" {
		return nil, &InvalidCommandError{Kind: c.Kind, Reason: "body is not a gate response"}
	}
	return &harness.GateResponse{InteractionID: body.InteractionID, Answer: body.Answer, Source: "user", Attempt: c.Attempt}, nil
}
