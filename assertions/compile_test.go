package assertions

import (
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
