package app

import (
	"os"
	"strings"
	"testing"
)

// TestCompletions asks the completion command (what the shell scripts of
// `kubelab completion bash|zsh|fish` call) for values.
func TestCompletions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"up", "--backend", ""}, []string{"embedded", "docker", ":4"}, nil},
		{[]string{"fault", ""}, []string{"kill", "pause", "partition"}, nil},
		{[]string{"fault", "kill", ""}, []string{"etcd-leader", "scheduler-leader", "controller-manager-leader"}, nil},
		{[]string{"run", ""}, []string{"yaml", ":8"}, nil},
		{[]string{"drill", ""}, []string{"feature", ":8"}, nil},
		{[]string{"run", "--html", ""}, []string{"html"}, nil},
	} {
		out, code := run(t, append([]string{"__complete"}, tc.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("complete %q: want %q in\n%s", tc.args, w, out)
			}
		}
	}
}

func TestCompleteClusterNames(t *testing.T) {
	g := &globals{home: t.TempDir()}
	// A docker cluster's state directory in the home.
	if err := os.MkdirAll(g.dockerDir("lab-one"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, _ := completeClusters(g)(nil, nil, "lab")
	if len(got) != 1 || !strings.HasPrefix(got[0], "lab-one\tdocker") {
		t.Errorf("cluster names: got %q, want lab-one (docker)", got)
	}
	if got, _ := completeClusters(g)(nil, nil, "x"); len(got) != 0 {
		t.Errorf("prefix x: got %q, want nothing", got)
	}
}
