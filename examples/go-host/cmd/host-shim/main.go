// Command host-shim serves docs/host-protocol.md (hcpspec-host/2) over stdio:
// one JSON-RPC 2.0 message per line in, one per line out; logs go to stderr.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	"example.com/go-host/department"
	"example.com/go-host/fakes"
	"example.com/go-host/harness"
	"example.com/go-host/harnessruntime"
)

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type paramsError struct{ error }

type bound struct {
	department.RigSession
	fake *fakes.Session
}

var (
	target   department.Target
	sessions = map[string]*bound{}
)

func main() {
	log.SetOutput(os.Stderr)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		if line := bytes.TrimSpace(in.Bytes()); len(line) > 0 {
			if resp := serve(line); resp != nil {
				os.Stdout.Write(append(resp, '\n'))
			}
		}
	}
}

func serve(line []byte) []byte {
	var req struct {
		ID     json.RawMessage
		Method string
		Params json.RawMessage
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": nil}
	if err := json.Unmarshal(line, &req); err != nil {
		resp["error"] = rpcError{-32700, "parse error: " + err.Error()}
	} else if req.ID == nil {
		log.Printf("notification %s ignored", req.Method)
		return nil
	} else {
		resp["id"] = req.ID
		if result, rerr := call(req.Method, req.Params); rerr != nil {
			resp["error"] = rerr
		} else {
			resp["result"] = result
		}
	}
	out, _ := json.Marshal(resp)
	return out
}

func call(method string, params json.RawMessage) (result any, rerr *rpcError) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("%s panicked: %v", method, p)
			result, rerr = nil, &rpcError{-32603, fmt.Sprint("shim broke: ", p)}
		}
	}()
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	var err error
	if h, ok := methods[method]; ok {
		result, err = h(params)
	} else if h, ok := onSession[method]; ok {
		var p struct{ Session string }
		if err = read(params, &p); err == nil {
			if b := sessions[p.Session]; b != nil {
				result, err = h(b, params)
			} else {
				err = paramsError{fmt.Errorf("no bound session %q", p.Session)}
			}
		}
	} else {
		return nil, &rpcError{-32601, "method not found: " + method}
	}
	var pe paramsError
	if errors.As(err, &pe) {
		return nil, &rpcError{-32602, err.Error()}
	} else if err != nil {
		return nil, &rpcError{-32603, err.Error()}
	}
	return result, nil
}

func read(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		return paramsError{err}
	}
	return nil
}

// refused renders an adapter's error as a value, or answers ok.
func refused(err error, ok map[string]any) (any, error) {
	if err == nil {
		return ok, nil
	}
	kind := "invalid"
	var inc *harnessruntime.IncapableSessionError
	var uns *harnessruntime.UnsupportedCommandError
	if errors.As(err, &inc) {
		kind = "incapable"
	} else if errors.As(err, &uns) {
		kind = "unsupported"
	}
	return map[string]any{"refused": map[string]string{"kind": kind, "message": err.Error()}}, nil
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

// hostCaps are § 3.6's Host-side names, each discovered as Host would.
var hostCaps = []struct {
	name string
	has  func(any) bool
}{
	{"IdleWaiter", is[department.IdleWaiter]}, {"Liveness", is[department.Liveness]},
	{"Releaser", is[department.Releaser]}, {"PublicationSubscriber", is[department.PublicationSubscriber]},
	{"CommandApplier", is[department.CommandApplier]}, {"LeaseEpochReporter", is[department.LeaseEpochReporter]},
	{"PersistenceFaultReporter", is[department.PersistenceFaultReporter]},
	{"ResidencyAbandoner", is[department.ResidencyAbandoner]}, {"AttemptCloser", is[department.AttemptCloser]},
	{"LiveOptionsSubscriber", is[department.LiveOptionsSubscriber]},
	{"LiveTextSubscriber", is[department.LiveTextSubscriber]},
	{"ReasoningSubscriber", is[department.ReasoningSubscriber]},
	{"EphemeralDrops", is[interface{ EphemeralDrops() uint64 }]},
}

func capabilities(s department.RigSession) []string {
	caps := []string{}
	for _, c := range hostCaps {
		if c.has(s) {
			caps = append(caps, c.name)
		}
	}
	return caps
}

var live = context.Background // hcpspec's own deadline bounds every call

var methods = map[string]func(json.RawMessage) (any, error){
	"host.describe": func(json.RawMessage) (any, error) {
		return map[string]any{"protocol": "hcpspec-host/2", "adapter": map[string]string{"name": "go-host harnessruntime", "version": "0.1.0"},
			"fakes": fakes.Optional}, nil
	},
	"host.reset": func(json.RawMessage) (any, error) {
		target, sessions = department.Target{}, map[string]*bound{}
		fakes.Reset()
		return map[string]any{}, nil
	},
	"host.records": func(json.RawMessage) (any, error) { return fakes.Records(), nil },
	"host.target": func(params json.RawMessage) (any, error) {
		var p struct {
			Rigs struct {
				Shape   string
				Tenants []string
			}
			CompatibilityID, Decoder string
			Capabilities             department.Capabilities
		}
		if err := read(params, &p); err != nil {
			return nil, err
		}
		var rigs harnessruntime.Rigs
		switch p.Rigs.Shape {
		case "", "shared":
			rigs = harnessruntime.SharedRig(fakes.Rig{Name: "shared"})
		case "perTenant":
			m := map[string]harness.Rig{}
			for _, t := range p.Rigs.Tenants {
				m[t] = fakes.Rig{Name: t}
			}
			rigs = harnessruntime.RigPerTenant(m)
		case "func":
			rigs = harnessruntime.RigsFunc{ForCreate: fakes.ForCreate, ForRestore: fakes.ForRestore}
		default:
			return nil, paramsError{fmt.Errorf("unknown rigs shape %q", p.Rigs.Shape)}
		}
		var opts []harnessruntime.Option
		if p.Decoder == "product" {
			opts = append(opts, harnessruntime.WithBlockDecoder(fakes.ProductDecoder))
		}
		t, err := harnessruntime.Target(rigs, department.CompatibilityID(p.CompatibilityID), p.Capabilities, opts...)
		if err != nil {
			return nil, err
		}
		target = t
		recovery := []string{}
		for _, r := range t.Recovery {
			recovery = append(recovery, string(r))
		}
		return map[string]any{"compatibilityId": t.CompatibilityID, "recovery": recovery}, nil
	},
	"host.recovery": func(params json.RawMessage) (any, error) {
		if target.Rig == nil {
			return nil, errors.New("host.recovery before host.target")
		}
		// This adapter's department.Recovery values are the capability names already.
		recovery := []string{}
		for _, r := range target.Recovery {
			recovery = append(recovery, string(r))
		}
		return map[string]any{"recovery": recovery}, nil
	},
	"host.registration": func(params json.RawMessage) (any, error) {
		var p struct{ AgentID string }
		if err := read(params, &p); err != nil {
			return nil, err
		}
		if target.Rig == nil {
			return nil, errors.New("host.registration before host.target")
		}
		r := harnessruntime.Registration(p.AgentID, target)
		return map[string]any{"agentId": r.AgentID, "compatibilityId": r.Target.CompatibilityID, "capabilities": r.Target.Capabilities}, nil
	},
	"host.bind": func(params json.RawMessage) (any, error) {
		var p struct {
			Kind, RigSessionID string
			Request            struct{ TenantID, SessionID, AgentID, Placement, WorkspaceRoot, StorageNamespace string }
			ResidencyEpoch     uint64
			LaunchCancelled    bool
			Session            fakes.SessionSpec
		}
		if err := read(params, &p); err != nil {
			return nil, err
		}
		if target.Rig == nil {
			return nil, errors.New("host.bind before host.target")
		}
		if err := fakes.Prepare(p.Session); err != nil {
			return nil, paramsError{err}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if p.LaunchCancelled {
			cancel()
		}
		r := p.Request
		req := department.RigCreateRequest{TenantID: r.TenantID, SessionID: r.SessionID, AgentID: r.AgentID,
			Placement: r.Placement, WorkspaceRoot: r.WorkspaceRoot, Storage: department.Storage{Namespace: r.StorageNamespace}}
		b := department.Binding{RigSessionID: p.RigSessionID, ResidencyEpoch: p.ResidencyEpoch}
		var s department.RigSession
		var err error
		switch p.Kind {
		case "", "create":
			s, err = target.Rig.NewSession(ctx, req, b)
		case "restore":
			s, err = target.Rig.RestoreSession(ctx, department.RigRestoreRequest(req), b)
		default:
			return nil, paramsError{fmt.Errorf("unknown bind kind %q", p.Kind)}
		}
		if err != nil {
			return refused(err, nil)
		}
		handle := fmt.Sprintf("s%d", len(sessions)+1)
		sessions[handle] = &bound{s, fakes.Made()}
		return map[string]any{"session": handle, "capabilities": capabilities(s)}, nil
	},
}

var onSession = map[string]func(*bound, json.RawMessage) (any, error){
	"host.apply": func(b *bound, params json.RawMessage) (any, error) {
		var p struct {
			Command struct {
				Kind, PayloadRef, Attempt string
				Principal, Payload        json.RawMessage
				Metadata                  map[string]string
				PayloadText               *string
			}
		}
		if err := read(params, &p); err != nil {
			return nil, err
		}
		c := p.Command
		cmd := department.RuntimeCommand{Kind: c.Kind, Principal: c.Principal, Metadata: c.Metadata, PayloadRef: c.PayloadRef, Attempt: c.Attempt}
		if c.Payload != nil {
			var buf bytes.Buffer
			if err := json.Compact(&buf, c.Payload); err != nil {
				return nil, paramsError{err}
			}
			cmd.Payload = buf.Bytes()
		} else if c.PayloadText != nil {
			cmd.Payload = []byte(*c.PayloadText)
		}
		b.fake.BeginApply()
		defer b.fake.EndApply()
		return refused(b.RigSession.(department.CommandApplier).ApplyCommand(live(), cmd), map[string]any{"applied": true})
	},
	"host.subscribe": func(b *bound, params json.RawMessage) (any, error) {
		var p struct{ After string }
		if err := read(params, &p); err != nil {
			return nil, err
		}
		ch, err := b.RigSession.(department.PublicationSubscriber).SubscribePublications(live(), p.After)
		pubs := []department.Publication{}
		for err == nil && ch != nil {
			pub, ok := <-ch
			if !ok {
				break
			}
			pubs = append(pubs, pub)
		}
		return refused(err, map[string]any{"publications": pubs})
	},
	"host.live": func(b *bound, params json.RawMessage) (any, error) {
		var p struct {
			Accept *int
			Relay  string
		}
		if err := read(params, &p); err != nil {
			return nil, err
		}
		sub := &fakes.LiveSubscriber{Accept: -1, Received: []json.RawMessage{}}
		if p.Accept != nil {
			sub.Accept = *p.Accept
		}
		// The older pair relays text; the subscriber renders what it took as a frame of its kind.
		typed := func(kind string) func(string) bool {
			return func(text string) bool {
				frame, _ := json.Marshal(map[string]string{kind: text})
				return sub.Take(frame)
			}
		}
		var err error
		switch p.Relay {
		case "", "options":
			err = b.RigSession.(department.LiveOptionsSubscriber).SubscribeLiveOptions(live(), sub.Take)
		case "text":
			s, ok := b.RigSession.(department.LiveTextSubscriber)
			if !ok {
				return refused(errors.New("the session is no LiveTextSubscriber"), nil)
			}
			err = s.SubscribeLiveText(live(), typed("text"))
		case "reasoning":
			s, ok := b.RigSession.(department.ReasoningSubscriber)
			if !ok {
				return refused(errors.New("the session is no ReasoningSubscriber"), nil)
			}
			err = s.SubscribeReasoning(live(), typed("reasoning"))
		default:
			return nil, paramsError{fmt.Errorf("unknown relay %q", p.Relay)}
		}
		return refused(err, map[string]any{"received": sub.Received})
	},
	"host.drops": func(b *bound, _ json.RawMessage) (any, error) {
		return map[string]any{"drops": b.RigSession.(interface{ EphemeralDrops() uint64 }).EphemeralDrops()}, nil
	},
	"host.waitIdle": func(b *bound, _ json.RawMessage) (any, error) {
		return refused(b.RigSession.(department.IdleWaiter).WaitIdle(live()), map[string]any{"ok": true})
	},
	"host.done": func(b *bound, _ json.RawMessage) (any, error) {
		select {
		case <-b.RigSession.(department.Liveness).Done():
			return map[string]any{"ok": true, "closed": true}, nil
		default:
			return map[string]any{"ok": true, "closed": false}, nil
		}
	},
	"host.release": func(b *bound, _ json.RawMessage) (any, error) {
		return refused(b.RigSession.(department.Releaser).ReleaseResidency(live()), map[string]any{"released": true})
	},
	"host.closeAttempt": func(b *bound, params json.RawMessage) (any, error) {
		var p struct{ Attempt string }
		if err := read(params, &p); err != nil {
			return nil, err
		}
		return refused(b.RigSession.(department.AttemptCloser).CloseAttempt(live(), p.Attempt), map[string]any{"closed": true})
	},
	"host.leaseEpoch": func(b *bound, _ json.RawMessage) (any, error) {
		epoch, held := b.RigSession.(department.LeaseEpochReporter).LeaseEpoch()
		if !held {
			return map[string]any{"epoch": nil}, nil
		}
		return map[string]any{"epoch": epoch}, nil
	},
	"host.id": func(b *bound, _ json.RawMessage) (any, error) {
		return map[string]any{"id": b.RigSession.ID()}, nil
	},
	"host.capabilities": func(b *bound, _ json.RawMessage) (any, error) {
		return map[string]any{"capabilities": capabilities(b.RigSession)}, nil
	},
}
