package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestKubeconfigRefusals: what a cluster kubelab did not create cannot do
// is refused before anything is made there (the kubeconfig's server does
// not even answer): exercises needing faults or nodes of their own, and
// batch grading more than one submission at a time in one namespace.
func TestKubeconfigRefusals(t *testing.T) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	subs := t.TempDir()
	if err := os.Mkdir(filepath.Join(subs, "ada"), 0o755); err != nil {
		t.Fatal(err)
	}
	ex := func(name string) string { return filepath.Join("..", "..", "..", "exercises", name) }
	on := []string{"--backend", "kubeconfig", "--kubeconfig", kc}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"grade", ex("fix-dead-scheduler"), "--submissions", subs}, on...), "the kubeconfig backend lacks component-faults (kill kube-scheduler-1 at"},
		{append([]string{"exercise", "start", ex("fix-lost-etcd-member")}, on...), "lacks component-faults"},
		{append([]string{"grade", ex("priority-preemption"), "--submissions", subs}, on...), "node worker-1 sets capacity"},
		{append([]string{"grade", ex("fix-service-selector"), "--submissions", subs, "--parallel", "3"}, on...), "--parallel 3 needs a cluster per submission"},
	} {
		out, code := run(t, tc.args...)
		if code != ExitInvalid || !strings.Contains(out, tc.want) {
			t.Errorf("kubelab %s: exit %d, want %d and %q\n%s", strings.Join(tc.args, " "), code, ExitInvalid, tc.want, out)
		}
	}
}
