package features_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/kubeconfig"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/load"
)

// TestKubeconfigBackend boots an embedded cluster and runs labs and drills
// on it through the kubeconfig backend, as on a cluster kubelab did not
// create: each run in its own namespace, labs needing what the API cannot
// give refused with the capability named, and nothing left behind or
// taken away. Where a Docker engine answers, TestKubeconfigBackendOnDocker
// runs it on a docker cluster instead.
func TestKubeconfigBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a real cluster; skipped with -short")
	}
	if enginetest.HaveDocker() && os.Getenv("KUBELAB_KUBECONFIG_ON_BOTH") == "" {
		// The kubeconfig backend's code does not depend on the host; the
		// docker host (real kubelets) is the one like a user's cluster.
		t.Skip("TestKubeconfigBackendOnDocker runs the same on a docker cluster (KUBELAB_KUBECONFIG_ON_BOTH=1 runs both)")
	}
	kubeconfigOn(t, enginetest.Backend(t, "embedded", cluster.Topology{Name: "kc-host", Workers: 3}))
}

// TestKubeconfigBackendOnDocker is TestKubeconfigBackend with a docker
// cluster (real kubelets, containerd and kube-proxy) as the existing one.
func TestKubeconfigBackendOnDocker(t *testing.T) {
	t.Parallel() // in the pool of TestMain, beside the drills on embedded clusters
	enginetest.NeedDocker(t, "the kubeconfig backend on a docker cluster")
	kubeconfigOn(t, enginetest.Backend(t, "docker", cluster.Topology{Name: "kc-dhost", Workers: 3}))
}

// kubeconfigOn boots host and runs labs and drills on it through the
// kubeconfig backend.
func kubeconfigOn(t *testing.T, host cluster.Backend) {
	ctx := t.Context()
	t.Cleanup(func() { _ = host.Down(context.WithoutCancel(ctx)) })
	if err := host.Up(ctx, func(e cluster.Event) { t.Logf("%6.2fs %s: %s", e.Elapsed.Seconds(), e.Component, e.Message) }); err != nil {
		t.Fatalf("boot the host cluster: %v", err)
	}
	hc := cluster.New(host, nil)
	defer hc.Close()
	cs, err := hc.Client()
	if err != nil {
		t.Fatal(err)
	}
	// The state to leave behind is the host's settled one: a node the node
	// lifecycle controller tainted for a moment after the boot (seen once
	// in CI on a loaded machine) is not what the runs must restore.
	before := snapshot(t, ctx, hc)
	for i := 0; strings.Contains(before.nodes, "ready=false") && i < 60; i++ {
		if i == 0 {
			t.Logf("host nodes not all usable after the boot, waiting:\n%s", before.nodes)
		}
		time.Sleep(time.Second)
		before = snapshot(t, ctx, hc)
	}

	state := t.TempDir()
	r := enginetest.Runner(t)
	r.Backend = func(topo cluster.Topology) (cluster.Backend, error) {
		return kubeconfig.New(topo, kubeconfig.Options{Kubeconfig: host.Access().Kubeconfig, Dir: filepath.Join(state, topo.Name)})
	}

	t.Run("refused", func(t *testing.T) {
		for file, want := range map[string]string{
			"../labs/02-etcd-leader-failover.yaml": "component-faults",
			"../labs/01-apply-to-running.yaml":     "audit-log (trace() at ../labs/01-apply-to-running.yaml:",
		} {
			lab, err := load.ReadLab(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Run(ctx, lab)
			if !errors.Is(err, cluster.ErrMissingCapability) || !strings.Contains(err.Error(), want) {
				t.Errorf("run %s = %v, want a refusal naming %q", file, err, want)
			}
			t.Logf("%s: %v", file, err)
		}
	})
	t.Run("labs", func(t *testing.T) {
		for _, file := range []string{"../labs/01-apply-to-running.yaml", "../labs/05-cordon-and-taints.yaml"} {
			lab, err := load.ReadLab(file)
			if err != nil {
				t.Fatal(err)
			}
			if lab.Metadata.Name == "apply-to-running" {
				// Its last step reads the audit log, which a cluster seen
				// only through its API does not show (refused above).
				lab.Spec.Steps = lab.Spec.Steps[:len(lab.Spec.Steps)-1]
			}
			res, err := r.Run(ctx, lab)
			if err != nil {
				t.Fatalf("run %s: %v", file, err)
			}
			if !res.Passed() {
				t.Errorf("%s: %s: %s", file, res.Status, res.Error)
			}
			t.Logf("%s: %s in %s", file, res.Status, res.Duration.Round(1e7))
		}
	})
	t.Run("drills", func(t *testing.T) {
		lib := &features.Library{Runner: r, Out: &logWriter{t: t}}
		err := features.Run(ctx, lib, features.Options{Paths: []string{"rbac.feature", "admission.feature"}, Format: "progress", Output: &logWriter{t: t}, NoColors: true, TestingT: t})
		if err != nil {
			t.Error(err)
		}
	})

	t.Run("exercises", func(t *testing.T) {
		// Exercises work in the namespace their statement names, default,
		// of a cluster they do not own: the same scores as on a cluster
		// of their own, and nothing of theirs left there.
		for _, c := range []struct {
			exercise, submission string
			score                int
		}{
			{"fix-service-selector", "", 3},
			{"fix-service-selector", "solution", 10},
			{"fix-rbac-denied", "solution", 10},
		} {
			ex, err := grade.LoadExercise(filepath.Join("..", "exercises", c.exercise))
			if err != nil {
				t.Fatal(err)
			}
			var sub *grade.Submission
			if c.submission != "" {
				if sub, err = grade.ReadSubmission(filepath.Join(ex.Dir(), c.submission), &ex.Spec.Submission); err != nil {
					t.Fatal(err)
				}
			}
			g, err := grade.Run(ctx, r, ex, sub, "")
			if err != nil || g.Status != grade.StatusGraded || g.Score != c.score {
				t.Errorf("%s %q: %d/%d (%s %s) %v, want %d", c.exercise, c.submission, g.Score, g.Max, g.Status, g.Error, err, c.score)
			}
		}
		ex, err := grade.LoadExercise(filepath.Join("..", "exercises", "fix-dead-scheduler"))
		if err != nil {
			t.Fatal(err)
		}
		g, err := grade.Run(ctx, r, ex, nil, "")
		if err != nil || g.Status != grade.StatusError || !strings.Contains(g.Error, "lacks component-faults (kill kube-scheduler-1 at") {
			t.Errorf("fix-dead-scheduler: %s %q %v, want it refused naming component-faults", g.Status, g.Error, err)
		}
	})

	after := snapshot(t, ctx, hc)
	if !slices.Equal(before.namespaces, after.namespaces) {
		t.Errorf("namespaces before %v, after %v", before.namespaces, after.namespaces)
	}
	if before.nodes != after.nodes {
		t.Errorf("nodes before:\n%s\nafter:\n%s", before.nodes, after.nodes)
	}
	if before.inDefault != after.inDefault {
		t.Errorf("namespace default before:\n%s\nafter:\n%s", before.inDefault, after.inDefault)
	}
	if before.clusterRoles != after.clusterRoles || before.policies != after.policies {
		t.Errorf("cluster-scoped objects before %+v, after %+v", before, after)
	}
	left, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kubeconfig.LabelManaged})
	if err != nil || len(left.Items) > 0 {
		t.Errorf("managed namespaces left: %v %v", left, err)
	}
}

type hostState struct {
	namespaces             []string
	inDefault              string // its Deployments, Services, ServiceAccounts, Roles
	nodes                  string
	clusterRoles, policies int
}

// snapshot is what a run must not change on the host cluster.
func snapshot(t *testing.T, ctx context.Context, c *cluster.Cluster) hostState {
	t.Helper()
	cs, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	var s hostState
	nsl, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nsl.Items {
		s.namespaces = append(s.namespaces, n.Name+"/"+string(n.UID))
	}
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range nl.Items {
		var taints []string
		for _, tn := range n.Spec.Taints {
			if !strings.HasPrefix(tn.Key, "node.kubernetes.io/") {
				taints = append(taints, tn.ToString())
			}
		}
		b.WriteString(n.Name + " unschedulable=" + boolString(n.Spec.Unschedulable) + " taints=" + strings.Join(taints, ",") + " ready=" + boolString(cluster.NodeUsable(&n)) + "\n")
	}
	s.nodes = b.String()
	b.Reset()
	deps, err := cs.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		b.WriteString("deployment/" + d.Name + "\n")
	}
	svcs, err := cs.CoreV1().Services("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range svcs.Items {
		b.WriteString("service/" + o.Name + " " + string(o.UID) + "\n")
	}
	sas, err := cs.CoreV1().ServiceAccounts("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range sas.Items {
		b.WriteString("serviceaccount/" + o.Name + "\n")
	}
	roles, err := cs.RbacV1().Roles("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range roles.Items {
		b.WriteString("role/" + o.Name + "\n")
	}
	s.inDefault = b.String()
	crs, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.clusterRoles = len(crs.Items)
	vaps, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.policies = len(vaps.Items)
	return s
}

func boolString(b bool) string { return map[bool]string{true: "true", false: "false"}[b] }
