package load

import (
	"reflect"
	"strings"
	"testing"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

func TestParseOperation(t *testing.T) {
	topo := cluster.Topology{Etcd: 3, Workers: 2}.WithDefaults()
	op, err := ParseOperation("kill: {target: etcd-leader}", ".", topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if op.Kind() != "kill" || op.Kill.Target != "etcd-leader" || op.Timeout.Duration != ops.DefaultTimeout("kill") {
		t.Fatalf("got %+v", op)
	}

	raft := reflect.TypeOf(assertions.Raft{})
	op, err = ParseOperation("wait: {expr: 'raft.term > before.term'}\ntimeout: 5s", ".", topo, map[string]reflect.Type{"before": raft})
	if err != nil {
		t.Fatal(err)
	}
	if op.Compiled() == nil || op.Timeout.Duration.Seconds() != 5 {
		t.Fatalf("wait not compiled or timeout lost: %+v", op)
	}

	for src, want := range map[string]string{
		"kill: {target: worker-9}":             `<operation>:1:`,
		"wait: {expr: 'raft.leedr != \"\"'}":   "leedr",
		"wait: {expr: 'before.term > 1'}":      "before",
		"nodeDown: {node: worker-1}\nbogus: 1": `<operation>:2:1: unknown operation "bogus"`,
	} {
		_, err := ParseOperation(src, ".", topo, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseOperation(%q) = %v, want error containing %q", src, err, want)
		}
	}
}
