package embedded

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/lifecycle"
	"kubelab.dev/kubelab/internal/testbin"
)

func binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a real cluster; skipped with -short")
	}
	p, err := binaryPath()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func binaryPath() (string, error) { return testbin.Path() }

// eventually polls f until it returns nil, failing with f's last error.
func eventually(t *testing.T, timeout time.Duration, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		last = f(cctx)
		ccancel()
		if last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s; last: %v", what, timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func procsOf(home string) []taggedProc {
	var out []taggedProc
	for _, p := range taggedProcs() {
		if p.Home == home {
			out = append(out, p)
		}
	}
	return out
}

func TestHACluster(t *testing.T) {
	t.Parallel() // beside the other cluster of this package that mostly waits
	bin := binary(t)
	home := t.TempDir()
	ctx := t.Context()
	topo := cluster.Topology{
		Name: "ha", Etcd: 3, APIServers: 2, Schedulers: 2, ControllerManagers: 2, Workers: 3,
		Timings: cluster.Timings{
			LeaseDuration:          cluster.Duration{Duration: 4 * time.Second},
			RenewDeadline:          cluster.Duration{Duration: 3 * time.Second},
			RetryPeriod:            cluster.Duration{Duration: time.Second},
			NodeMonitorGracePeriod: cluster.Duration{Duration: 8 * time.Second},
		},
	}
	b, err := New(topo, Options{Home: Home(home), Binary: bin, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	var mu sync.Mutex
	var events []cluster.Event
	if err := b.Up(ctx, func(e cluster.Event) {
		t.Logf("%6.2fs %s: %s", e.Elapsed.Seconds(), e.Component, e.Message)
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}); err != nil {
		t.Fatalf("up: %v", err)
	}
	c := cluster.New(b, nil)
	cs, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	h := haCluster{ctx: ctx, b: b, c: c, cs: cs, home: home}

	t.Run("the boot reports its phases in order", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		haBootReportsItsPhases(t, events)
	})

	t.Run("nodes are Ready", func(t *testing.T) { haNodesAreReady(t, h) })
	t.Run("kube-dns is served by the coredns Deployment's pods", func(t *testing.T) {
		if ips, err := controlplane.DNSServed(ctx, cs); err != nil || len(ips) != 1 {
			t.Errorf("DNS addon: %v %v", ips, err)
		}
	})
	t.Run("kwok has least privilege", func(t *testing.T) { haKwokHasLeastPrivilege(t, h) })
	t.Run("deployment runs and its service has endpoints", func(t *testing.T) { haDeploymentRunsAndItsService(t, h) })
	t.Run("killing the etcd leader elects a new one and writes succeed", func(t *testing.T) { haKillingTheEtcdLeaderElects(t, h) })
	t.Run("killing the scheduler leader moves its lease", func(t *testing.T) { haKillingTheSchedulerLeaderMoves(t, h) })
	t.Run("pause and resume", func(t *testing.T) { haPauseAndResume(t, h) })
	t.Run("a node taken down goes NotReady and is tainted, and comes back", func(t *testing.T) { haANodeTakenDownGoes(t, h) })
	t.Run("down leaves no process, port or directory", func(t *testing.T) { haDownLeavesNoProcessPort(t, h) })
}

// haCluster is the cluster TestHACluster's subtests share.
type haCluster struct {
	ctx  context.Context
	b    *Backend
	c    *cluster.Cluster
	cs   kubernetes.Interface
	home string
}

// haNodesAreReady: nodes are Ready.
func haNodesAreReady(t *testing.T, h haCluster) {
	ctx, cs := h.ctx, h.cs
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("got %d nodes, want 3", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		if !isReady(&n) {
			t.Errorf("node %s not Ready: %+v", n.Name, n.Status.Conditions)
		}
	}
}

// haKwokHasLeastPrivilege: kwok has least privilege.
func haKwokHasLeastPrivilege(t *testing.T, h haCluster) {
	ctx, b := h.ctx, h.b
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(b.Dir(), "pki", controlplane.Kwok.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	kwok, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kwok.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); err != nil {
		t.Errorf("kwok cannot read its node: %v", err)
	}
	_, err = kwok.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("kwok listing Secrets: got %v, want Forbidden", err)
	}
}

// haDeploymentRunsAndItsService: deployment runs and its service has endpoints.
func haDeploymentRunsAndItsService(t *testing.T, h haCluster) {
	cs := h.cs
	deployWeb(t, cs, 3)
	eventually(t, 30*time.Second, "3 Running pods with IPs", func(ctx context.Context) error {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.Spec.NodeName != "" {
				running++
			}
		}
		if running != 3 {
			return fmt.Errorf("%d of %d pods Running with an IP", running, len(pods.Items))
		}
		return nil
	})
	eventually(t, 30*time.Second, "EndpointSlice lists 3 ready endpoints", func(ctx context.Context) error {
		slices, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
		if err != nil {
			return err
		}
		n := 0
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					n++
				}
			}
		}
		if n != 3 {
			return fmt.Errorf("%d ready endpoints", n)
		}
		return nil
	})
}

// haKillingTheEtcdLeaderElects: killing the etcd leader elects a new one and writes succeed.
func haKillingTheEtcdLeaderElects(t *testing.T, h haCluster) {
	ctx, c, cs := h.ctx, h.c, h.cs
	before, err := raftLeader(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	killed, err := c.Do(ctx, cluster.TargetEtcdLeader, cluster.Kill)
	if err != nil {
		t.Fatal(err)
	}
	if killed != before.Name {
		t.Fatalf("killed %s, leader was %s", killed, before.Name)
	}
	eventually(t, 15*time.Second, "a new etcd leader with a higher term", func(ctx context.Context) error {
		now, err := raftLeader(ctx, c)
		if err != nil {
			return err
		}
		if now.Name == before.Name || now.Term <= before.Term {
			return fmt.Errorf("leader %s term %d (before: %s term %d)", now.Name, now.Term, before.Name, before.Term)
		}
		return nil
	})
	eventually(t, 15*time.Second, "a write through the apiserver", func(ctx context.Context) error {
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "after-failover-"}}, metav1.CreateOptions{})
		return err
	})
	if _, err := c.Do(ctx, killed, cluster.Start); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the killed member rejoins", func(ctx context.Context) error {
		ms, _ := c.EtcdStatus(ctx)
		for _, m := range ms {
			if !m.Reachable {
				return fmt.Errorf("%s unreachable: %s", m.Name, m.Error)
			}
		}
		return nil
	})
}

// haKillingTheSchedulerLeaderMoves: killing the scheduler leader moves its lease.
func haKillingTheSchedulerLeaderMoves(t *testing.T, h haCluster) {
	ctx, b, c := h.ctx, h.b, h.c
	before, err := c.Resolve(ctx, cluster.TargetSchedulerLeader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, before, cluster.Kill); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "scheduler lease held by the other instance", func(ctx context.Context) error {
		h, err := c.Lease(ctx, cluster.LeaseScheduler)
		if err != nil {
			return err
		}
		if h.Component == before || h.Component == "" {
			return fmt.Errorf("lease still held by %q", h.Component)
		}
		return nil
	})
	comps, _ := b.Components(ctx)
	if st := stateOf(comps, before); st != cluster.StateStopped {
		t.Errorf("%s state = %s, want stopped", before, st)
	}
}

// haPauseAndResume: pause and resume.
func haPauseAndResume(t *testing.T, h haCluster) {
	ctx, b := h.ctx, h.b
	if err := b.Act(ctx, "kube-controller-manager-1", cluster.Pause); err != nil {
		t.Fatal(err)
	}
	comps, _ := b.Components(ctx)
	if st := stateOf(comps, "kube-controller-manager-1"); st != cluster.StatePaused {
		t.Errorf("state = %s, want paused", st)
	}
	if err := b.Act(ctx, "kube-controller-manager-1", cluster.Resume); err != nil {
		t.Fatal(err)
	}
	comps, _ = b.Components(ctx)
	if st := stateOf(comps, "kube-controller-manager-1"); st != cluster.StateRunning {
		t.Errorf("state = %s, want running", st)
	}
}

// haANodeTakenDownGoes: a node taken down goes NotReady and is tainted, and comes back.
func haANodeTakenDownGoes(t *testing.T, h haCluster) {
	ctx, b, cs := h.ctx, h.b, h.cs
	if err := b.Act(ctx, "worker-3", cluster.Kill); err != nil {
		t.Fatal(err)
	}
	eventually(t, 40*time.Second, "worker-3 NotReady with the unreachable taint", func(ctx context.Context) error {
		n, err := cs.CoreV1().Nodes().Get(ctx, "worker-3", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if isReady(n) {
			return fmt.Errorf("still Ready")
		}
		for _, tt := range n.Spec.Taints {
			if tt.Key == corev1.TaintNodeUnreachable {
				return nil
			}
		}
		return fmt.Errorf("NotReady but taints are %v", n.Spec.Taints)
	})
	if err := b.Act(ctx, "worker-3", cluster.Start); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "worker-3 Ready again", func(ctx context.Context) error {
		n, err := cs.CoreV1().Nodes().Get(ctx, "worker-3", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !isReady(n) {
			return fmt.Errorf("conditions %v", n.Status.Conditions)
		}
		return nil
	})
}

// haDownLeavesNoProcessPort: down leaves no process, port or directory.
func haDownLeavesNoProcessPort(t *testing.T, h haCluster) {
	ctx, b, home := h.ctx, h.b, h.home
	comps, _ := b.Components(ctx)
	// Running, which bench names as load beside its figures, counts the
	// cluster's live processes (kwok's once, for all its nodes).
	running := func() (n int) {
		for _, r := range Running() {
			if r.Where == "home "+home && r.Name == "ha" {
				n = r.Count
			}
		}
		return n
	}
	pids := map[int]bool{}
	for _, c := range comps {
		if c.PID > 0 {
			pids[c.PID] = true
		}
	}
	if n := running(); n != len(pids) || n < 8 {
		t.Errorf("Running counts %d processes of the cluster, want its %d (%+v)", n, len(pids), Running())
	}
	var ports []string
	for _, comp := range comps {
		if comp.Endpoint != "" {
			ports = append(ports, strings.TrimPrefix(comp.Endpoint, "https://"))
		}
	}
	if err := b.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if ps := procsOf(home); len(ps) > 0 {
		t.Errorf("processes left: %+v", ps)
	}
	if n := running(); n != 0 {
		t.Errorf("Running still counts %d processes of the cluster", n)
	}
	for _, addr := range ports {
		if conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			conn.Close()
			t.Errorf("%s still listening", addr)
		}
	}
	if _, err := os.Stat(b.Dir()); !os.IsNotExist(err) {
		t.Errorf("state dir %s still there (%v)", b.Dir(), err)
	}
}

func stateOf(comps []cluster.Component, name string) cluster.State {
	for _, c := range comps {
		if c.Name == name {
			return c.State
		}
	}
	return ""
}

func raftLeader(ctx context.Context, c *cluster.Cluster) (cluster.EtcdMember, error) {
	ms, err := c.EtcdStatus(ctx)
	if err != nil {
		return cluster.EtcdMember{}, err
	}
	for _, m := range ms {
		if m.IsLeader {
			return m, nil
		}
	}
	return cluster.EtcdMember{}, fmt.Errorf("no leader in %+v", ms)
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func deployWeb(t *testing.T, cs kubernetes.Interface, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	_, err := cs.AppsV1().Deployments("default").Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "kubelab/http:dev"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Services("default").Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// startUp runs `kubelab up` as a separate process and returns once its
// progress output mentions marker.
func startUp(t *testing.T, bin, home, marker string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "up", "--name", "victim", "--etcd", "3", "--apiservers", "2", "--workers", "2")
	cmd.Env = append(os.Environ(), "KUBELAB_HOME="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		t.Log(sc.Text())
		if strings.Contains(sc.Text(), marker) {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd
		}
	}
	t.Fatalf("kubelab up ended before %q", marker)
	return nil
}

func TestInterruptedUpLeavesNothing(t *testing.T) {
	bin := binary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			home := t.TempDir()
			cmd := startUp(t, bin, home, "waiting for /readyz")
			if len(procsOf(home)) == 0 {
				t.Fatal("no component processes found while booting")
			}
			_ = cmd.Process.Signal(sig)
			err := cmd.Wait()
			if err == nil {
				t.Fatal("up succeeded after being interrupted")
			}
			if ps := procsOf(home); len(ps) > 0 {
				t.Errorf("processes left after %s: %+v", sig, ps)
			}
			if names, _ := Home(home).Clusters(); len(names) > 0 {
				t.Errorf("clusters left after %s: %v", sig, names)
			}
		})
	}
}

func TestKill9OrphansAreSweptByNextRun(t *testing.T) {
	bin := binary(t)
	home := t.TempDir()
	cmd := startUp(t, bin, home, "waiting for /readyz")
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(procsOf(home)) == 0 {
		t.Fatal("expected orphaned components after kill -9 of kubelab up")
	}
	// Any next invocation sweeps orphans of dead owners.
	out, _ := exec.Command(bin, "status", "--home", home, "--name", "nope").CombinedOutput()
	t.Logf("next run: %s", out)
	if ps := procsOf(home); len(ps) > 0 {
		t.Errorf("orphans left after the next run: %+v", ps)
	}
	if names, _ := Home(home).Clusters(); len(names) > 0 {
		t.Errorf("cluster dirs left: %v", names)
	}
}

func TestDownAllRemovesEveryCluster(t *testing.T) {
	bin := binary(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = Home(home).RemoveAll(context.Background()) })
	for _, name := range []string{"one", "two"} {
		out, err := exec.Command(bin, "up", "--home", home, "--name", name).CombinedOutput()
		if err != nil {
			t.Fatalf("up %s: %v\n%s", name, err, out)
		}
	}
	if names, _ := Home(home).Clusters(); len(names) != 2 {
		t.Fatalf("clusters = %v, want two side by side", names)
	}
	out, err := exec.Command(bin, "down", "--all", "--home", home).CombinedOutput()
	if err != nil {
		t.Fatalf("down --all: %v\n%s", err, out)
	}
	if ps := procsOf(home); len(ps) > 0 {
		t.Errorf("processes left: %+v", ps)
	}
	if names, _ := Home(home).Clusters(); len(names) > 0 {
		t.Errorf("clusters left: %v", names)
	}
}

// haBootReportsItsPhases checks that the progress of an HA boot names
// each phase that bench up times, in the order they must come: a leader
// in etcd before an apiserver serves, its bootstrap hooks done after
// that, the nodes Ready before the default
// ServiceAccount is looked for, DNS after it, and the end last.
func haBootReportsItsPhases(t *testing.T, events []cluster.Event) {
	at := func(component, message string) int {
		for i, e := range events {
			if (component == "" || e.Component == component) && e.Message == message {
				return i
			}
		}
		t.Errorf("no %q event from %q", message, component)
		return -1
	}
	order := []int{
		at("etcd-3", "ready"),
		at("", lifecycle.EventServing),
		at("nodes", "nodes Ready 3/3"),
		at("", lifecycle.EventServiceAccount),
		at("", lifecycle.EventDNS),
		at("", lifecycle.EventControlPlaneReady),
	}
	if !slices.IsSorted(order) {
		t.Errorf("phases at event indices %v, want increasing", order)
	}
	if at("kube-apiserver-2", "ready") > order[len(order)-1] {
		t.Errorf("the second apiserver was ready after the boot's end")
	}
	// The bootstrap hooks end between the apiservers serving and the
	// boot's end (the nodes are usually Ready after them too, as the
	// controller-manager waits for them, but the report may lag a busy
	// machine's by more than that start).
	if h := at("kube-apiserver", lifecycle.EventHealthz); h < order[1] || h > order[len(order)-1] {
		t.Errorf("/healthz passed at event %d, want between the apiservers serving (%d) and the end (%d)", h, order[1], order[len(order)-1])
	}
}
