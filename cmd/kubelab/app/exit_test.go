package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "k8s.io/component-base/version/verflag" // what the components register globally
)

// run runs the command line in this process with a fresh home; it never
// boots anything (every case fails before a cluster would).
func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	home := t.TempDir()
	err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &out}, append([]string{"--home", home}, args...))
	if err != nil {
		fmt.Fprintf(&out, "kubelab: %v\n", err)
	}
	return out.String(), ExitCode(err)
}

func TestExitCodes(t *testing.T) {
	empty := t.TempDir()
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(config, []byte("etcd: 0\nworkers: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"up", "--bogus"}, ExitInvalid, "unknown flag: --bogus"},
		{"unknown command", []string{"bogus"}, ExitInvalid, `unknown command "bogus"`},
		{"missing argument", []string{"run"}, ExitInvalid, "requires at least 1 arg"},
		{"validate an empty directory", []string{"validate", empty}, ExitInvalid, "no labs (*.yaml) in " + empty},
		{"run an empty directory", []string{"run", empty}, ExitInvalid, "no labs (*.yaml) in " + empty},
		{"a lab that looks inside nodes, on simulated nodes", []string{"run", "../../../labs/docker/14-kube-proxy-iptables.yaml"}, ExitInvalid, "needs the docker backend"},
		{"validate a missing file", []string{"validate", filepath.Join(empty, "nope.yaml")}, ExitInvalid, "no such file"},
		{"invalid lab", []string{"validate", "../../../load/testdata/invalid-several.yaml"}, ExitInvalid, "invalid-several.yaml:"},
		{"grade no submissions", []string{"grade", "../../../exercises/spread-replicas", "--submissions", empty}, ExitInvalid, "no submission directories"},
		{"grade a missing submission", []string{"grade", "../../../exercises/spread-replicas", "--submission", filepath.Join(empty, "nope")}, ExitInvalid, "read submission"},
		{"grade with the submission as an argument", []string{"grade", "../../../exercises/spread-replicas", empty}, ExitInvalid, "--submission " + empty},
		{"grade both", []string{"grade", "../../../exercises/spread-replicas"}, ExitInvalid, "want exactly one of"},
		{"etcd 0", []string{"up", "--etcd", "0"}, ExitInvalid, "etcd: want 1, 3 or 5 members, got 0 (an odd number, for a Raft quorum)"},
		{"etcd 2", []string{"up", "--etcd", "2"}, ExitInvalid, "got 2"},
		{"apiservers 0", []string{"up", "--apiservers", "0"}, ExitInvalid, "apiservers: want 1 to 5, got 0"},
		{"stacked with fewer apiservers", []string{"up", "--stacked", "--etcd", "3", "--apiservers", "2"}, ExitInvalid, "stacked: each control-plane node runs one etcd member"},
		{"workers 0", []string{"up", "--workers", "0"}, ExitInvalid, "workers: want 1 to 4000 nodes, got 0"},
		{"workers -1", []string{"up", "--workers", "-1"}, ExitInvalid, "workers: want 1 to 4000 nodes, got -1"},
		{"lease 1ms", []string{"up", "--lease-duration", "1ms"}, ExitInvalid, "timings.leaseDuration: want at least 1s, got 1ms"},
		{"negative grace", []string{"up", "--node-grace", "-5s"}, ExitInvalid, "timings.nodeMonitorGracePeriod: want a positive duration"},
		{"explicit 0 in --config", []string{"up", "--config", config}, ExitInvalid, "etcd: want 1, 3 or 5 members"},
		{"flags override --config", []string{"up", "--config", config, "--etcd", "3", "--workers", "-2"}, ExitInvalid, "workers: want 1 to 4000 nodes, got -2"},
		{"bench scale heartbeat 0", []string{"bench", "scale", "--heartbeat", "0"}, ExitInvalid, "--heartbeat 0: want a factor from 1 to 20"},
		{"bench scale bad second pair", []string{"bench", "scale", "--nodes", "10,0", "--pods", "0,0"}, ExitInvalid, "--nodes 0 --pods 0: want 1 to"},
		{"status of no cluster", []string{"status", "--name", "nope"}, ExitInvalid, "no such cluster"},
		{"logs of no cluster", []string{"logs", "--name", "nope", "etcd-1"}, ExitInvalid, "no such cluster"},
		{"bad output format", []string{"version", "-o", "xml"}, ExitInvalid, `--output "xml": want json or yaml`},
		{"fault with an unknown action", []string{"fault", "smash", "etcd-leader"}, ExitInvalid, `unknown action "smash"`},
		{"version", []string{"version"}, ExitPassed, "Kubernetes:"},
		{"--version", []string{"--version"}, ExitPassed, "kubelab "},
		{"help documents the exit codes", []string{"--help"}, ExitPassed, "130  interrupted"},
		{"kubectl is in the help", []string{"--help"}, ExitPassed, "kubectl "},
		{"no clusters", []string{"get", "clusters", "-o", "json"}, ExitPassed, "[]"},
		{"list says which labs need docker", []string{"list", "../../../labs/docker"}, ExitPassed, "  docker  "},
		{"list says which labs need a cluster of kubelab's", []string{"list", "../../../labs"}, ExitPassed, "  embedded,docker  "},
		{"node exec without a command", []string{"node", "exec", "worker-1"}, ExitInvalid, "want NODE -- COMMAND"},
		{"node exec of no cluster", []string{"node", "exec", "worker-1", "--", "ip", "route"}, ExitInvalid, "no such cluster"},
		{"get a Kubernetes resource", []string{"get", "nodes"}, ExitInvalid, "for the cluster's objects: kubelab kubectl get nodes"},
		{"get nothing", []string{"get"}, ExitInvalid, "needs a resource: clusters"},
		{"a word for a number", []string{"up", "--workers", "abc"}, ExitInvalid, `--workers wants a whole number, got "abc"`},
		{"a word for a duration", []string{"up", "--lease-duration", "soon"}, ExitInvalid, `--lease-duration wants a duration such as 30s`},
		{"--version takes no value", []string{"--version=raw"}, ExitInvalid, `--version wants true or false, got "raw"`},
		{"components' --version is not a subcommand's", []string{"run", "--version=v9.9.9", "x.yaml"}, ExitInvalid, "unknown flag: --version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := run(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("kubelab %s: exit %d, want %d, and output containing %q:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out)
			}
			if strings.Contains(out, "strconv.") {
				t.Errorf("a parser's error reached the user:\n%s", out)
			}
			if strings.Contains(out, "Booting") {
				t.Errorf("booted a cluster on invalid input:\n%s", out)
			}
		})
	}
}

// TestComponentFlagsStayTheirs: component-base registers --version on
// pflag's global set (verflag is linked above, as the components link it
// into the binary); no kubelab command may offer it.
func TestComponentFlagsStayTheirs(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"up", "--help"}, {"--help"}} {
		out, code := run(t, args...)
		if code != ExitPassed || strings.Contains(out, "sets the reported version") {
			t.Errorf("kubelab %s: exit %d; the components' --version leaks:\n%s", strings.Join(args, " "), code, out)
		}
	}
}

func TestExitCodeOfErrors(t *testing.T) {
	base := errors.New("x")
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{base, ExitFailed},
		{invalid(base), ExitInvalid},
		{cannotRun(base), ExitCannotRun},
		{fmt.Errorf("wrapped: %w", cannotRun(base)), ExitCannotRun},
		{invalid(cannotRun(base)), ExitCannotRun}, // the innermost code is the most precise
		{context.Canceled, ExitInterrupted},
		{&ExitError{Code: ExitInterrupted, Err: ErrInterrupted}, ExitInterrupted},
	} {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

func TestParseClientCall(t *testing.T) {
	t.Setenv("KUBELAB_NAME", "")
	for _, tc := range []struct {
		args     []string
		ok       bool
		tool     string
		name     string
		explicit bool
		rest     []string
	}{
		{[]string{"kubectl", "get", "nodes"}, true, "kubectl", "kubelab", false, []string{"get", "nodes"}},
		{[]string{"kubectl", "--name", "c2", "get", "nodes"}, true, "kubectl", "c2", true, []string{"get", "nodes"}},
		{[]string{"--name=c3", "etcdctl", "member", "list"}, true, "etcdctl", "c3", true, []string{"member", "list"}},
		{[]string{"-v", "--home", "/h", "kubectl", "expose", "deploy/web", "--name", "svc"}, true, "kubectl", "kubelab", false, []string{"expose", "deploy/web", "--name", "svc"}},
		{[]string{"kubectl", "--name", "c4", "--", "-n", "kube-system", "get", "pods"}, true, "kubectl", "c4", true, []string{"-n", "kube-system", "get", "pods"}},
		{[]string{"kubectl", "get", "--", "x"}, true, "kubectl", "kubelab", false, []string{"get", "--", "x"}},
		{[]string{"up", "--name", "x"}, false, "", "", false, nil},
		{[]string{"--name"}, false, "", "", false, nil},
	} {
		c, ok := ParseClientCall(tc.args)
		if ok != tc.ok || ok && (c.Tool != tc.tool || c.Name != tc.name || c.Explicit != tc.explicit || strings.Join(c.Args, " ") != strings.Join(tc.rest, " ")) {
			t.Errorf("ParseClientCall(%q) = %+v, %v; want tool %s name %s explicit %v args %q", tc.args, c, ok, tc.tool, tc.name, tc.explicit, tc.rest)
		}
	}
}

func TestClientHelpNeedsNoCluster(t *testing.T) {
	for args, want := range map[string]bool{
		"etcdctl":                       true,
		"etcdctl --help":                true,
		"kubectl help":                  true,
		"kubectl get -h":                true,
		"kubectl get nodes":             false,
		"kubectl exec web -- sh --help": false,
		"kubectl create cm help":        false,
	} {
		c, ok := ParseClientCall(strings.Fields(args))
		if !ok || c.AsksForHelp() != want {
			t.Errorf("%q: parsed %v, asks for help %v, want %v", args, ok, c.AsksForHelp(), want)
		}
	}
}

// TestClientWithoutAClusterSaysSo: kubelab kubectl with no kubelab
// cluster and no KUBECONFIG fails saying how to start one; it never lets
// kubectl fall back to ~/.kube/config, whose cluster is not a lab's.
func TestClientWithoutAClusterSaysSo(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBELAB_NAME", "")
	c, ok := ParseClientCall([]string{"--home", t.TempDir(), "kubectl", "delete", "namespace", "prod"})
	if !ok {
		t.Fatal("not a kubectl call")
	}
	env, err := c.Env()
	if err == nil || ExitCode(err) != ExitInvalid || !strings.Contains(err.Error(), "kubelab up") {
		t.Errorf("Env() = %v, %v; want an invalid-input error that says kubelab up", env, err)
	}
	// kubectl's own --kubeconfig names the cluster: nothing to find.
	for _, flag := range [][]string{{"--kubeconfig", "/k"}, {"--kubeconfig=/k"}} {
		c, _ := ParseClientCall(append([]string{"--home", t.TempDir(), "kubectl"}, append(flag, "get", "pods")...))
		if env, err := c.Env(); err != nil || len(env) != 0 {
			t.Errorf("kubectl %v: Env() = %v, %v; want kubectl left to its flag", flag, env, err)
		}
	}
}
