package assertions

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestCompileTypeChecks(t *testing.T) {
	good := []string{
		`all(pods("app=web"), .phase == "Running")`,
		`len(endpoints("web")) == 3`,
		`node("worker-2").unschedulable`,
		`raft.hasLeader && raft.term > 1`,
		`leader("kube-scheduler") != ""`,
		`any(node("worker-1").taints, .effect == "NoExecute")`,
		// expr-lang v1.17.8's compiler panics on these after its
		// optimizer rewrote filter(...)[0] into find().
		`filter(replicasets("app=web"), .name != "x")[0].name != ""`,
		`filter(pods("app=web"), .ready)[0].node == "worker-1"`,
	}
	for _, src := range good {
		if _, err := Compile(src, nil, true); err != nil {
			t.Errorf("Compile(%q): %v", src, err)
		}
	}
	bad := map[string]string{
		`pods("app=web").phase == "Running"`: "phase",
		`node("w").unschedulabel`:            "unschedulabel",
		`len(endpoints("web"))`:              "bool",
		`raft.leader`:                        "bool",
		`nope("x")`:                          "nope",
	}
	for src, want := range bad {
		_, err := Compile(src, nil, true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want error mentioning %q", src, err, want)
		}
	}
}

func TestBindingsAreTyped(t *testing.T) {
	rec, err := Compile(`raft`, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Type != reflect.TypeOf(Raft{}) {
		t.Fatalf("record type = %v, want Raft", rec.Type)
	}
	b := map[string]reflect.Type{"before": rec.Type}
	if _, err := Compile(`raft.leader != before.leader && raft.term > before.term`, b, true); err != nil {
		t.Fatalf("compile with binding: %v", err)
	}
	if _, err := Compile(`before.leedr != ""`, b, true); err == nil {
		t.Fatal("typo in binding field compiled")
	}
}

// The expression that made the compiler panic compiles, with a type, and
// evaluates like its working form first(filter(...)).
func TestCompilerPanicWorkedAround(t *testing.T) {
	b := map[string]reflect.Type{"oldRS": reflect.TypeOf("")}
	c, err := Compile(`filter(replicasets("app=web"), .name != oldRS)[0].name`, b, false)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if c.Type != reflect.TypeOf("") {
		t.Errorf("type = %v, want string", c.Type)
	}
	v := fakeView{rs: []ReplicaSet{{Name: "web-1"}, {Name: "web-2"}}}
	got, err := Eval(context.Background(), c, v, map[string]any{"oldRS": "web-1"})
	if err != nil || got != "web-2" {
		t.Errorf("Eval = %v, %v; want web-2", got, err)
	}
}

func TestCompilerFailureIsNotTheUsersFault(t *testing.T) {
	_, err := safeCompile(`1`, nil)
	if err != nil {
		t.Fatal(err)
	}
	panicking := errors.New("runtime error: invalid memory address or nil pointer dereference\ngoroutine 1 [running]:\n...")
	if !compilerFailed(panicking) || compilerFailed(errors.New("unknown name nope (1:1)")) {
		t.Fatal("compilerFailed does not tell a compiler panic from an expression error")
	}
	err = compilerFailure(panicking)
	for _, want := range []string{"the expression compiler failed on a valid-looking expression",
		"nil pointer dereference", "first(filter(list, cond)).field"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to mention %q", err, want)
		}
	}
	if !errors.Is(err, ErrCompilerFailed) || strings.Contains(err.Error(), "goroutine") {
		t.Errorf("%v: want ErrCompilerFailed without the stack", err)
	}
}

// A panic in the view is an evaluation error, not a crash.
func TestEvalRecoversPanics(t *testing.T) {
	c, err := Compile(`raft.hasLeader`, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Holds(context.Background(), c, fakeView{panics: true}, nil); err == nil || !strings.Contains(err.Error(), "evaluator failed") {
		t.Errorf("Holds = %v, want an evaluator failure", err)
	}
	if obs := Explain(context.Background(), c, fakeView{panics: true}, nil); len(obs) == 0 {
		t.Errorf("Explain said nothing about the failure")
	}
}

// A failed lookup does not change the value the expression sees, and
// reaches the explanation: a variable's as its own observation, a call's
// after the sub-expression that made it.
func TestExplainReportsLookupErrors(t *testing.T) {
	down := errors.New("etcd-2: context deadline exceeded")
	v := fakeView{rs: []ReplicaSet{{Name: "web-1"}}, raftErr: down, rsErr: errors.New("cache not synced")}
	c, err := Compile(`raft.quorum && len(replicasets("app=web")) == 2`, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Holds(context.Background(), c, v, nil); ok || err != nil {
		t.Fatalf("Holds = %v, %v; want false, nil", ok, err)
	}
	got := String(Explain(context.Background(), c, v, nil))
	for _, want := range []string{"raft = lookup failed: etcd-2: context deadline exceeded",
		`len(replicasets("app=web")) = 1 (lookup replicasets("app=web") failed: cache not synced)`} {
		if !strings.Contains(got, want) {
			t.Errorf("explanation:\n%s\nwant it to contain %q", got, want)
		}
	}
}

// An expression that is a single call or member access is explained by
// what it is made of: its value alone (false) says nothing.
func TestExplainsARootCallByItsOperands(t *testing.T) {
	v := fakeView{rs: []ReplicaSet{{Name: "web-1", Ready: 0}}}
	for src, want := range map[string]string{
		`all(replicasets("app=web"), .ready > 0)`: `replicasets("app=web") = [{"available":0,"name":"web-1","ready":0,"replicas":0,"revision":0}]`,
		`raft.hasLeader`: `raft = {"hasLeader":false,"quorum":false,"reachable":0,"term":0}`,
	} {
		c, err := Compile(src, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(String(Explain(context.Background(), c, v, nil))); got != want {
			t.Errorf("Explain(%s) =\n%s\nwant\n%s", src, got, want)
		}
	}
}

// fakeView answers ReplicaSets with rs and Raft with an empty table (with
// the given errors), and panics on Raft when asked to.
type fakeView struct {
	View
	rs      []ReplicaSet
	rsErr   error
	raftErr error
	panics  bool
}

func (f fakeView) ReplicaSets(context.Context, string, string) ([]ReplicaSet, error) {
	return f.rs, f.rsErr
}

func (f fakeView) Raft(context.Context) (Raft, error) {
	if f.panics {
		panic("view broke")
	}
	return Raft{}, f.raftErr
}

func TestAuditFilterKeysCheckedAtCompile(t *testing.T) {
	if _, err := Compile(`any(audit({user: "u", verb: "delete", code: 403}), .refusal == "authorization" && .decision == "forbid")`, nil, true); err != nil {
		t.Fatalf("valid filter: %v", err)
	}
	_, err := Compile(`len(audit({usr: "u"})) > 0`, nil, true)
	if err == nil || !strings.Contains(err.Error(), `unknown key "usr"`) || !strings.Contains(err.Error(), "user") {
		t.Fatalf("unknown key: got %v", err)
	}
	if _, err := Compile(`any(audit({verb: "list"}), .refusedBy == "RBAC" && "g" in .groups && .latency < 1)`, nil, true); err != nil {
		t.Fatalf("event fields: %v", err)
	}
}

func TestMatchAudit(t *testing.T) {
	e := AuditEvent{User: "u", Verb: "delete", Code: 403}
	for _, tc := range []struct {
		f    map[string]any
		want bool
	}{
		{map[string]any{"user": "u", "verb": "delete"}, true},
		{map[string]any{"code": 403}, true},
		{map[string]any{"code": 403.0}, true},
		{map[string]any{"code": 200}, false},
		{map[string]any{"verb": "get"}, false},
		{map[string]any{"nope": "x"}, false},
	} {
		if got := MatchAudit(e, tc.f); got != tc.want {
			t.Errorf("MatchAudit(%v) = %v, want %v", tc.f, got, tc.want)
		}
	}
}

// ctxView's get() fails once its context is done, as the live view's
// requests do.
type ctxView struct{ View }

func (ctxView) Get(ctx context.Context, _, _, _ string) (map[string]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return map[string]any{"metadata": map[string]any{"name": "team-a"}}, nil
}

// A wait's last evaluation runs after its deadline: its failed lookups
// must not make get(...) == nil hold for an object that exists.
func TestLookupsAfterTheDeadlineDoNotHold(t *testing.T) {
	c, err := Compile(`get("namespaces", "team-a") == nil`, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Holds(context.Background(), c, ctxView{}, nil); ok || err != nil {
		t.Fatalf("live context: Holds = %v, %v; want false, nil", ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := Holds(ctx, c, ctxView{}, nil); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: Holds = %v, %v; want false and the context's error", ok, err)
	}
}
