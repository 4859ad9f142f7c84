package fakes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"example.com/go-host/harness"
)

// SessionSpec is host.bind's `session` (§ 3.2); every member is optional.
type SessionSpec struct {
	Lacks        []string          `json:"lacks"`
	Hides        []string          `json:"hides"`
	FaultChannel *bool             `json:"faultChannel"`
	EpochAtBind  json.RawMessage   `json:"epochAtBind"`
	Epochs       []json.RawMessage `json:"epochs"`
	Deliveries   []struct {
		EventID        string          `json:"eventId"`
		JournalSeq     uint64          `json:"journalSeq"`
		PublicBody     json.RawMessage `json:"publicBody"`
		CoveredThrough json.RawMessage `json:"coveredThrough"`
		Committed      *bool           `json:"committed"`
	} `json:"deliveries"`
	Previews     []json.RawMessage `json:"previews"`
	ReleaseFails *string           `json:"releaseFails"`
	ApplyFails   *string           `json:"applyFails"`
	// The optional members of hcpspec-host/2 (Optional).
	ForwardsByName bool    `json:"forwardsByName"`
	IdleAfterMs    int     `json:"idleAfterMs"`
	WaitIdleFails  *string `json:"waitIdleFails"`
	DoneClosed     bool    `json:"doneClosed"`
	CloseFails     *string `json:"closeAttemptFails"`
}

// Optional lists the fake session members added within hcpspec-host/2 that
// these fakes build (host.describe's `fakes`).
var Optional = []string{"forwardsByName", "idleAfterMs", "waitIdleFails", "doneClosed", "closeAttemptFails"}

type epoch struct {
	v    uint64
	held bool
}

func parseEpoch(raw json.RawMessage) (epoch, error) {
	if len(raw) == 0 {
		return epoch{1, true}, nil
	}
	if string(raw) == "null" {
		return epoch{}, nil
	}
	var e epoch
	e.held = true
	return e, json.Unmarshal(raw, &e.v)
}

// Session is the fake harness session's state; the value a rig hands out is
// one of the shapes below, which implement only what the spec leaves in.
type Session struct {
	id           string
	spec         SessionSpec
	lacks, hides map[string]bool
	atBind       epoch
	epochs       []epoch
	faults       chan error
	done         chan struct{}

	mu       sync.Mutex
	applying bool
	applies  int
}

// Prepare validates spec and makes it the session the rigs hand out next.
func Prepare(spec SessionSpec) error {
	if _, err := parseEpoch(spec.EpochAtBind); err != nil {
		return fmt.Errorf("epochAtBind: %w", err)
	}
	for _, e := range spec.Epochs {
		if _, err := parseEpoch(e); err != nil {
			return fmt.Errorf("epochs: %w", err)
		}
	}
	lacks, all := missing(spec.Lacks, nil), missing(spec.Lacks, spec.Hides)
	for _, key := range []string{lacks, all} {
		if _, ok := shapes[key]; !ok {
			return fmt.Errorf("the Go fake expresses at most one missing session capability (of %v), not %q", sessionCaps, key)
		}
	}
	mu.Lock()
	next = spec
	mu.Unlock()
	return nil
}

// Made is the session the last rig call handed out.
func Made() *Session {
	mu.Lock()
	defer mu.Unlock()
	return made
}

func launch(id string) harness.Session {
	mu.Lock()
	spec := next
	mu.Unlock()
	s := &Session{id: id, spec: spec, lacks: set(spec.Lacks), hides: set(spec.Hides), done: make(chan struct{})}
	s.atBind, _ = parseEpoch(spec.EpochAtBind)
	for _, raw := range spec.Epochs {
		e, _ := parseEpoch(raw)
		s.epochs = append(s.epochs, e)
	}
	if len(s.epochs) == 0 {
		s.epochs = []epoch{{1, true}}
	}
	if spec.FaultChannel == nil || *spec.FaultChannel {
		s.faults = make(chan error)
	}
	if spec.DoneClosed {
		close(s.done)
	}
	var out harness.Session = shapes[missing(spec.Lacks, nil)](base{s, nil, false}, mix{s, false})
	if len(spec.Hides) > 0 {
		out = shapes[missing(spec.Lacks, spec.Hides)](base{s, out, spec.ForwardsByName}, mix{s, true})
	}
	mu.Lock()
	made = s
	mu.Unlock()
	return out
}

// BeginApply and EndApply bracket the n-th host.apply: meanwhile the epoch
// reporter answers the n-th of `epochs` (the last one repeats).
func (s *Session) BeginApply() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applying = true
	s.applies++
}

// EndApply: see BeginApply.
func (s *Session) EndApply() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applying = false
}

func (s *Session) leaseEpoch() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.atBind
	if s.applying {
		e = s.epochs[min(s.applies, len(s.epochs))-1]
	}
	return e.v, e.held
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func (s *Session) rec(call string, kv ...any) {
	r := map[string]any{"session": s.id, "call": call}
	for i := 0; i+1 < len(kv); i += 2 {
		r[kv[i].(string)] = kv[i+1]
	}
	add("sessions", r)
}

func set(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// sessionCaps are the capabilities of the session value itself (AttemptCloser
// is its applier's).
var sessionCaps = []string{"IdleWaiter", "Liveness", "Releaser", "CommittedPublicEventProvider",
	"Applier", "LeaseEpochReporter", "PersistenceFaultReporter", "ResidencyAbandoner", "LiveOptions"}

// missing names the session capabilities absent from the value: a key of shapes.
func missing(lacks, hides []string) string {
	gone := set(append(append([]string{}, lacks...), hides...))
	delete(gone, "AttemptCloser") // its applier's, not the session's
	var key []string
	for _, c := range sessionCaps {
		if gone[c] {
			key = append(key, c)
			delete(gone, c)
		}
	}
	for n := range gone {
		key = append(key, "unknown "+n)
	}
	return strings.Join(key, "+")
}

// ---- the capabilities, one mixin each; a shape embeds the ones it has ----

type mix struct {
	s       *Session
	wrapped bool // seen through the wrapper, which hides s.hides
}

// base is every shape's identity; a wrapper offers the wrapped value.
type base struct {
	s     *Session
	inner harness.Session
	// byName: the wrapper answers the capabilities it hides by a method's name
	// (Forward), as a Python __getattr__ or a JS Proxy would, while its type
	// declares none of them: in Go a value's methods are its interfaces, so
	// by-name forwarding is a lookup harness's assertions never see.
	byName bool
}

func (b base) SessionID() string { return b.s.id }
func (b base) Unwrap() any       { return b.inner }

// Forward answers the value whose methods a hidden capability's name reaches
// (forwardsByName), or nil.
func (b base) Forward(capability string) any {
	if b.byName && b.s.hides[capability] {
		return b.inner
	}
	return nil
}

type (
	idleM    mix
	liveM    mix
	relM     mix
	pubM     mix
	appM     mix
	epochM   mix
	faultM   mix
	abandonM mix
	optsM    mix
)

func (m idleM) WaitIdle(context.Context) error {
	m.s.rec("WaitIdle")
	if ms := m.s.spec.IdleAfterMs; ms > 0 {
		if ms > 2000 {
			ms = 2000
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		m.s.rec("Idle")
	}
	if m.s.spec.WaitIdleFails != nil {
		return errors.New(*m.s.spec.WaitIdleFails)
	}
	return nil
}
func (m liveM) Done() <-chan struct{} { m.s.rec("Done"); return m.s.done }
func (m relM) ReleaseResidency(ctx context.Context) error {
	cancelled := ctx.Err() != nil
	m.s.rec("ReleaseResidency", "cancelled", cancelled)
	if m.s.spec.ReleaseFails != nil {
		return errors.New(*m.s.spec.ReleaseFails)
	}
	if cancelled {
		return ctx.Err()
	}
	return nil
}
func (m pubM) CommittedPublicEvents(context.Context) (<-chan harness.Delivery, error) {
	m.s.rec("Subscribe")
	ch := make(chan harness.Delivery, len(m.s.spec.Deliveries))
	for _, d := range m.s.spec.Deliveries {
		ch <- harness.Delivery{EventID: d.EventID, JournalSeq: d.JournalSeq, PublicBody: d.PublicBody,
			CoveredThrough: d.CoveredThrough, Committed: d.Committed == nil || *d.Committed}
	}
	close(ch)
	return ch, nil
}
func (m appM) RuntimeCommandApplier() harness.Applier {
	if m.s.lacks["AttemptCloser"] || (m.wrapped && m.s.hides["AttemptCloser"]) {
		return applier{m.s}
	}
	return closingApplier{applier{m.s}}
}
func (m epochM) LeaseEpoch() (uint64, bool)      { return m.s.leaseEpoch() }
func (m faultM) PersistenceFaults() <-chan error { return m.s.faults }
func (m abandonM) AbandonResidency()             {}
func (m optsM) SubscribeLive(_ context.Context, sink func(json.RawMessage)) error {
	m.s.rec("SubscribeLive")
	for _, p := range m.s.spec.Previews {
		sink(p)
	}
	return nil
}

// § 3.3 the harness applier: records what it is handed, validates nothing.
type applier struct{ s *Session }

func (a applier) ApplyRuntimeCommand(_ context.Context, ad harness.Admitted) error {
	blocks := ad.Blocks
	if blocks == nil {
		blocks = []harness.Block{}
	}
	var attempt any
	if ad.Attempt != "" {
		attempt = ad.Attempt
	}
	add("admitted", map[string]any{"session": a.s.id, "kind": ad.Kind, "blocks": blocks,
		"leaseEpoch": ad.LeaseEpoch, "gateResponse": ad.GateResponse, "principal": ad.Principal,
		"metadata": ad.Metadata, "attempt": attempt})
	if a.s.spec.ApplyFails != nil {
		return errors.New(*a.s.spec.ApplyFails)
	}
	return nil
}

type closingApplier struct{ applier }

func (a closingApplier) CloseAttempt(_ context.Context, attempt string) error {
	a.s.rec("CloseAttempt", "attempt", attempt)
	if a.s.spec.CloseFails != nil {
		return errors.New(*a.s.spec.CloseFails)
	}
	return nil
}

// The shapes: Go cannot drop methods from a type at run time, so each set of
// missing capabilities is a type of its own. These cover none or one.
type (
	full struct {
		base
		idleM
		liveM
		relM
		pubM
		appM
		epochM
		faultM
		abandonM
		optsM
	}
	noIdle struct {
		base
		liveM
		relM
		pubM
		appM
		epochM
		faultM
		abandonM
		optsM
	}
	noLive struct {
		base
		idleM
		relM
		pubM
		appM
		epochM
		faultM
		abandonM
		optsM
	}
	noRel struct {
		base
		idleM
		liveM
		pubM
		appM
		epochM
		faultM
		abandonM
		optsM
	}
	noPub struct {
		base
		idleM
		liveM
		relM
		appM
		epochM
		faultM
		abandonM
		optsM
	}
	noApp struct {
		base
		idleM
		liveM
		relM
		pubM
		epochM
		faultM
		abandonM
		optsM
	}
	noEpoch struct {
		base
		idleM
		liveM
		relM
		pubM
		appM
		faultM
		abandonM
		optsM
	}
	noFault struct {
		base
		idleM
		liveM
		relM
		pubM
		appM
		epochM
		abandonM
		optsM
	}
	noAbandon struct {
		base
		idleM
		liveM
		relM
		pubM
		appM
		epochM
		faultM
		optsM
	}
	noOpts struct {
		base
		idleM
		liveM
		relM
		pubM
		appM
		epochM
		faultM
		abandonM
	}
)

type shape = func(base, mix) harness.Session

var shapes = map[string]shape{
	"": func(b base, m mix) harness.Session {
		return full{b, idleM(m), liveM(m), relM(m), pubM(m), appM(m), epochM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"IdleWaiter": func(b base, m mix) harness.Session {
		return noIdle{b, liveM(m), relM(m), pubM(m), appM(m), epochM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"Liveness": func(b base, m mix) harness.Session {
		return noLive{b, idleM(m), relM(m), pubM(m), appM(m), epochM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"Releaser": func(b base, m mix) harness.Session {
		return noRel{b, idleM(m), liveM(m), pubM(m), appM(m), epochM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"CommittedPublicEventProvider": func(b base, m mix) harness.Session {
		return noPub{b, idleM(m), liveM(m), relM(m), appM(m), epochM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"Applier": func(b base, m mix) harness.Session {
		return noApp{b, idleM(m), liveM(m), relM(m), pubM(m), epochM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"LeaseEpochReporter": func(b base, m mix) harness.Session {
		return noEpoch{b, idleM(m), liveM(m), relM(m), pubM(m), appM(m), faultM(m), abandonM(m), optsM(m)}
	},
	"PersistenceFaultReporter": func(b base, m mix) harness.Session {
		return noFault{b, idleM(m), liveM(m), relM(m), pubM(m), appM(m), epochM(m), abandonM(m), optsM(m)}
	},
	"ResidencyAbandoner": func(b base, m mix) harness.Session {
		return noAbandon{b, idleM(m), liveM(m), relM(m), pubM(m), appM(m), epochM(m), faultM(m), optsM(m)}
	},
	"LiveOptions": func(b base, m mix) harness.Session {
		return noOpts{b, idleM(m), liveM(m), relM(m), pubM(m), appM(m), epochM(m), faultM(m), abandonM(m)}
	},
}
