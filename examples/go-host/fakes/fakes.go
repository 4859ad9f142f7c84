// Package fakes holds the recording fakes of docs/host-protocol.md § 3: what
// the adapter binds to, each use appended to the records host.records answers.
package fakes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"example.com/go-host/department"
	"example.com/go-host/harness"
)

var (
	mu        sync.Mutex
	recs      = map[string][]any{}
	next      SessionSpec // the session the rigs hand out next (host.bind's `session`)
	made      *Session    // the last session a rig handed out
	generated int
)

func add(list string, v any) {
	mu.Lock()
	defer mu.Unlock()
	recs[list] = append(recs[list], v)
}

// Records answers host.records: every list, in call order.
func Records() map[string][]any {
	mu.Lock()
	defer mu.Unlock()
	out := map[string][]any{}
	for _, k := range []string{"rigs", "sessions", "admitted", "decoded", "live", "stores", "objects"} {
		out[k] = append([]any{}, recs[k]...)
	}
	return out
}

// Reset forgets every record.
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	recs, made, generated = map[string][]any{}, nil, 0
}

// OpenStore is the environment's store opener (a journal store, a workspace, a
// residency store). An adapter has no business calling it.
func OpenStore(what, name string) { add("stores", map[string]any{"what": what, "name": name}) }

// ReadObject is the environment's object reader. An adapter never calls it (H8).
func ReadObject(name string) ([]byte, error) {
	add("objects", map[string]any{"what": "read", "name": name})
	return []byte("{}"), nil
}

// ---- § 3.1 rigs ----

// Rig is a fake rig with a name.
type Rig struct{ Name string }

// NewSession answers the prepared session under the session-id option's id.
func (r Rig) NewSession(_ context.Context, opts ...harness.SessionOption) (harness.Session, error) {
	var o harness.SessionOptions
	for _, opt := range opts {
		opt(&o)
	}
	var recorded any
	id := ""
	if o.SessionID != nil {
		recorded, id = *o.SessionID, *o.SessionID
	} else {
		mu.Lock()
		generated++
		id = fmt.Sprintf("rig-generated-%d", generated)
		mu.Unlock()
	}
	add("rigs", map[string]any{"rig": r.Name, "call": "NewSession", "sessionId": recorded})
	return launch(id), nil
}

// RestoreSession answers the prepared session under uuid.
func (r Rig) RestoreSession(_ context.Context, uuid string) (harness.Session, error) {
	add("rigs", map[string]any{"rig": r.Name, "call": "RestoreSession", "uuid": uuid})
	return launch(uuid), nil
}

// ForCreate and ForRestore are the product's rig function (RigsFunc).
func ForCreate(_ context.Context, req department.RigCreateRequest) (harness.Rig, error) {
	return forRequest("forCreate", req), nil
}

// ForRestore: see ForCreate.
func ForRestore(_ context.Context, req department.RigRestoreRequest) (harness.Rig, error) {
	return forRequest("forRestore", department.RigCreateRequest(req)), nil
}

func forRequest(call string, r department.RigCreateRequest) harness.Rig {
	add("rigs", map[string]any{"rig": "func", "call": call, "request": map[string]string{
		"tenantId": r.TenantID, "sessionId": r.SessionID, "agentId": r.AgentID, "placement": r.Placement,
		"workspaceRoot": r.WorkspaceRoot, "storageNamespace": r.Storage.Namespace}})
	return Rig{Name: "func"}
}

// ---- § 3.5 the product block decoder ----

// ProductDecoder reads Core's InputRequest strictly (a member InputRequest
// does not have is undecodable) or exactly the product's {"say": TEXT}.
func ProductDecoder(body []byte) ([]harness.Block, error) {
	var seen any = string(body)
	if json.Valid(body) {
		seen = json.RawMessage(body)
	}
	add("decoded", map[string]any{"decoder": "product", "body": seen})
	var req struct {
		Blocks    []harness.Block   `json:"blocks"`
		Principal json.RawMessage   `json:"principal"`
		Metadata  map[string]string `json:"metadata"`
	}
	if strict(body, &req) == nil && req.Blocks != nil {
		return req.Blocks, nil
	}
	var say struct {
		Say *string `json:"say"`
	}
	if strict(body, &say) == nil && say.Say != nil {
		b, err := json.Marshal(map[string]string{"type": "text", "text": *say.Say})
		return []harness.Block{b}, err
	}
	return nil, errors.New("undecodable")
}

func strict(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// ---- the live subscriber of host.live ----

// LiveSubscriber takes the first Accept frames (negative: all) and refuses the rest.
type LiveSubscriber struct {
	Accept   int
	Received []json.RawMessage
}

// Take answers whether it took frame.
func (l *LiveSubscriber) Take(frame json.RawMessage) bool {
	if l.Accept >= 0 && len(l.Received) >= l.Accept {
		return false
	}
	l.Received = append(l.Received, frame)
	add("live", frame)
	return true
}
