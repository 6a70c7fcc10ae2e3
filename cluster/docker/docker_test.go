package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/testbin"
)

func dockerOrSkip(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a docker cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Available(ctx); err != nil {
		t.Skipf("no Docker engine answers (%v): docker backend tests skipped", err)
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func hostSysctls(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory", "vm/panic_on_oom"} {
		b, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = strings.TrimSpace(string(b))
	}
	return out
}

func TestDockerCluster(t *testing.T) {
	t.Parallel() // a docker cluster that mostly waits: beside the other cluster test
	bin := dockerOrSkip(t)
	before := hostSysctls(t)
	ctx := t.Context()
	b, err := New(cluster.Topology{Name: "dt", Workers: 2}, Options{Dir: filepath.Join(t.TempDir(), "dt"), Binary: bin, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
		if after := hostSysctls(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("host sysctls changed: before %v after %v", before, after)
		}
	})
	if err := b.Up(ctx, func(e cluster.Event) { t.Logf("%6.2fs %s: %s", e.Elapsed.Seconds(), e.Component, e.Message) }); err != nil {
		t.Fatalf("up: %v", err)
	}
	cs, err := b.clientset()
	if err != nil {
		t.Fatal(err)
	}
	h := dockerCluster{ctx: ctx, b: b, cs: cs, bin: bin}
	t.Run("the one apiserver is published on loopback only, with no balancer", func(t *testing.T) { dockerAPIServerPublishedOnLoopback(t, h) })
	t.Run("images load puts a host image into every worker", func(t *testing.T) { dockerImagesLoadPutsAHost(t, h) })
	t.Run("CoreDNS has least privilege", func(t *testing.T) { dockerCorednsHasLeastPrivilege(t, h) })
	t.Run("kube-dns is served by the coredns Deployment's pods on the workers", func(t *testing.T) { dnsServedByPods(t, h.ctx, h.cs) })
	t.Run("a spread Deployment answers on its ClusterIP and DNS name from every node", func(t *testing.T) { dockerASpreadDeploymentAnswersOn(t, h) })
	t.Run("a killed kubelet stays down until start while its node runs on", func(t *testing.T) { dockerNodeDaemons(t, h) })
	t.Run("Running counts the cluster's containers", func(t *testing.T) { dockerRunningCounts(t, h) })
	t.Run("a component's log is its container's, tail and all", func(t *testing.T) { dockerComponentLog(t, h) })
	t.Run("a second cluster of the same name is refused and harms nothing", func(t *testing.T) { dockerSameNameRefused(t, h) })
}

// dockerComponentLog: ComponentLog reads a container's log, stdout and
// stderr demultiplexed, and its last lines with Tail.
func dockerComponentLog(t *testing.T, h dockerCluster) {
	c := cluster.New(h.b, nil)
	out, err := c.LogTail(h.ctx, "kube-scheduler-1", 500)
	if err != nil || !strings.Contains(out, "leaderelection") || strings.ContainsRune(out, '\x01') {
		t.Errorf("LogTail(kube-scheduler-1): %v; want its leader election, with no stream headers:\n%s", err, out)
	}
	rc, err := h.b.ComponentLog(h.ctx, "etcd-1", cluster.LogOptions{Tail: 3})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(rc)
	rc.Close()
	if n := strings.Count(string(raw), "\n"); err != nil || n != 3 {
		t.Errorf("etcd-1's log with Tail 3: %d lines, %v:\n%s", n, err, raw)
	}
	if _, err := c.ComponentLog(h.ctx, "nope", cluster.LogOptions{}); !errors.Is(err, cluster.ErrNoComponent) {
		t.Errorf("the log of no component: %v, want ErrNoComponent", err)
	}
	if _, err := c.ComponentLog(h.ctx, "worker-1/kubeproxy", cluster.LogOptions{}); !errors.Is(err, cluster.ErrNoComponent) {
		t.Errorf("the log of no daemon: %v, want ErrNoComponent", err)
	}
	// A daemon inside a node: containerd writes to a file there.
	out, err = c.LogTail(h.ctx, "worker-1/containerd", 2)
	if err != nil || strings.Count(out, "\n") != 2 || !strings.Contains(out, "level=") {
		t.Errorf("worker-1/containerd's last 2 lines: %v\n%s", err, out)
	}
	// Followed, the tail in the node ends with the stream.
	fctx, cancel := context.WithCancel(h.ctx)
	rc, err = c.ComponentLog(fctx, "worker-1/kube-proxy", cluster.LogOptions{Tail: 1, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(rc, first); err != nil {
		t.Errorf("following worker-1/kube-proxy: %v", err)
	}
	cancel()
	rc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ps, _ := h.b.ExecNode(h.ctx, "worker-1", "sh", "-c", "ps -eo args | grep '^tail' || true")
		if strings.TrimSpace(ps) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("a tail still runs in worker-1 after the stream closed:\n%s", ps)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dockerSameNameRefused: Up of a second cluster with the name and state
// directory of a running one fails with ErrExists before it makes
// anything, and so removes nothing of the running one.
func dockerSameNameRefused(t *testing.T, h dockerCluster) {
	b2, err := New(cluster.Topology{Name: "dt", Workers: 1}, Options{Dir: h.b.opts.Dir, Binary: h.bin, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Up(h.ctx, nil); !errors.Is(err, cluster.ErrExists) {
		t.Errorf("a second Up of dt: %v, want ErrExists", err)
	}
	if _, err := os.Stat(filepath.Join(h.b.opts.Dir, "admin.kubeconfig")); err != nil {
		t.Errorf("the running cluster's state lost its kubeconfig: %v", err)
	}
	if _, err := h.cs.CoreV1().Nodes().List(h.ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the running cluster no longer serves: %v", err)
	}
}

// dockerRunningCounts: Running, which bench names as load beside its
// figures, finds the cluster with one container per component.
func dockerRunningCounts(t *testing.T, h dockerCluster) {
	rs, err := Running(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	comps, err := h.b.Components(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Where == h.b.opts.Dir {
			if r.Name != "dt" || r.Count != len(comps) {
				t.Errorf("Running: %v, want cluster dt with %d containers (one a component: %v)", r, len(comps), comps)
			}
			return
		}
	}
	t.Errorf("Running does not list the cluster of %s: %v", h.b.opts.Dir, rs)
}

// dockerNodeDaemons: a killed kubelet stays down until start while its
// node runs on (node-init.sh's supervisors, driven by Act on NODE/DAEMON).
func dockerNodeDaemons(t *testing.T, h dockerCluster) {
	ctx, b := h.ctx, h.b
	running := func(daemon string) string { // its pid, "" when it does not run
		out, err := b.ExecNode(ctx, "worker-2", "sh", "-c", `p=$(cat /run/kubelab/daemons/$0.pid) && kill -0 "$p" && echo "$p"`, daemon)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(out)
	}
	proxy := running(cluster.DaemonKubeProxy)
	if proxy == "" || running(cluster.DaemonKubelet) == "" {
		t.Fatalf("worker-2 runs kube-proxy %q, kubelet %q: want both", proxy, running(cluster.DaemonKubelet))
	}
	if err := b.Act(ctx, "worker-2/kubelet", cluster.Kill); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // longer than the supervisor's restart delay
	if p := running(cluster.DaemonKubelet); p != "" {
		t.Fatalf("the killed kubelet runs again (pid %s) before start", p)
	}
	if p := running(cluster.DaemonKubeProxy); p != proxy || running(cluster.DaemonContainerd) == "" {
		t.Errorf("after the kubelet's kill, kube-proxy is %q (was %s), containerd %q", p, proxy, running(cluster.DaemonContainerd))
	}
	if err := b.Act(ctx, "worker-2/kubelet", cluster.Start); err != nil {
		t.Fatal(err)
	}
	if running(cluster.DaemonKubelet) == "" {
		t.Fatal("start returned, the kubelet does not run")
	}
	if err := b.Act(ctx, "worker-2/kube-proxy", cluster.Partition); !errors.Is(err, cluster.ErrUnsupported) {
		t.Errorf("partition worker-2/kube-proxy = %v, want ErrUnsupported", err)
	}
	if err := waitFor(ctx, "worker-2 usable again", func(ctx context.Context) error {
		n, err := h.cs.CoreV1().Nodes().Get(ctx, "worker-2", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !cluster.NodeUsable(n) {
			return fmt.Errorf("conditions %v, taints %v", n.Status.Conditions, n.Spec.Taints)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// dockerImagesLoadPutsAHost: images load puts host images, two in one
// tarball, into every worker.
func dockerImagesLoadPutsAHost(t *testing.T, h dockerCluster) {
	ctx, b, cs := h.ctx, h.b, h.cs
	refs := []string{"example.com/loaded:latest", "example.com/loaded-too:v1"}
	for _, ref := range refs {
		if out, err := exec.Command("docker", "tag", workloadHTTP, ref).CombinedOutput(); err != nil {
			t.Fatalf("docker tag: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", ref).Run() })
	}
	if err := b.LoadImages(ctx, refs, func(s string) { t.Log(s) }); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"worker-1", "worker-2"} {
		out, err := b.ExecNode(ctx, n, "ctr", "-n", "k8s.io", "images", "ls", "-q")
		for _, ref := range refs {
			if err != nil || !strings.Contains(out, ref) {
				t.Errorf("%s lacks %s (%v):\n%s", n, ref, err, out)
			}
		}
	}
	_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "loaded"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/loaded"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No tag means latest, whose default imagePullPolicy is Always; the
	// preloaded-images policy makes it IfNotPresent, so it runs as loaded.
	if err := waitFor(ctx, "the pod of the loaded image Running", func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "loaded", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
			return fmt.Errorf("imagePullPolicy %s, want IfNotPresent", p.Spec.Containers[0].ImagePullPolicy)
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = cs.CoreV1().Pods("default").Delete(ctx, "loaded", metav1.DeleteOptions{})
}

// dockerASpreadDeploymentAnswersOn: a spread Deployment answers on its ClusterIP and DNS name from every node.
func dockerASpreadDeploymentAnswersOn(t *testing.T, h dockerCluster) {
	ctx, b, cs, bin := h.ctx, h.b, h.cs, h.bin
	replicas := int32(2)
	labels := map[string]string{"app": "web"}
	_, err := cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "web", Image: workloadHTTP, ImagePullPolicy: corev1.PullNever,
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
			}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = waitFor(ctx, "2 ready pods on 2 nodes", func(ctx context.Context) error {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		nodes := map[string]bool{}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.Status.PodIP != "" {
					nodes[p.Spec.NodeName] = true
				}
			}
		}
		if len(nodes) != 2 {
			return fmt.Errorf("ready on %v", nodes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(b.withLogs(ctx, err, "worker-1", "worker-2"))
	}
	// The ClusterIP answers from every node (kube-proxy iptables rules,
	// routes between nodes).
	for _, n := range []string{"worker-1", "worker-2"} {
		err := waitFor(ctx, "service from "+n, func(ctx context.Context) error {
			out, err := b.exec(ctx, b.get(n).id, "curl", "-sf", "--max-time", "2", "http://"+svc.Spec.ClusterIP+"/")
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	// A pod reaches the Service by its DNS name (CoreDNS behind kube-dns).
	_, err = cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "client"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "client", Image: workloadHTTP, ImagePullPolicy: corev1.PullNever,
			Env: []corev1.EnvVar{{Name: "PORT", Value: "9090"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = waitFor(ctx, "web.default.svc.cluster.local from a pod", func(ctx context.Context) error {
		out, err := exec.CommandContext(ctx, bin, "kubectl", "--kubeconfig", b.Access().Kubeconfig,
			"exec", "client", "--", "/kubelab-http", "get", "http://web.default.svc.cluster.local/").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "web-") {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	out, err := b.exec(ctx, b.get("worker-1").id, "ctr", "-n", "k8s.io", "containers", "ls")
	if err != nil || !strings.Contains(out, "kubelab/pause") || !strings.Contains(out, "kubelab/http") {
		t.Errorf("containerd on worker-1 lacks the pause sandbox or the app: %v\n%s", err, out)
	}
}

// dockerCluster is the cluster TestDockerCluster's subtests share.
type dockerCluster struct {
	ctx context.Context
	b   *Backend
	cs  kubernetes.Interface
	bin string
}

// dockerAPIServerPublishedOnLoopback: the one apiserver is published on
// loopback only, with no balancer in front, at the port the admin
// kubeconfig names.
func dockerAPIServerPublishedOnLoopback(t *testing.T, h dockerCluster) {
	ctx, b := h.ctx, h.b
	if lb := b.get(string(cluster.RoleLoadBalancer)); lb != nil {
		t.Errorf("a load balancer container runs in front of one apiserver")
	}
	ins, err := b.cli.ContainerInspect(ctx, b.get("kube-apiserver-1").id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var published []string
	for port, bs := range ins.Container.NetworkSettings.Ports {
		for _, bind := range bs {
			published = append(published, bind.HostIP.String()+":"+bind.HostPort)
			if bind.HostIP != netipLoopback {
				t.Errorf("%s published on %s, want 127.0.0.1 only", port, bind.HostIP)
			}
		}
	}
	cfg, err := clientcmd.LoadFromFile(b.Access().Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		if want := "https://" + strings.Join(published, ","); c.Server != want {
			t.Errorf("admin kubeconfig reaches %s; the apiserver publishes %v", c.Server, published)
		}
	}
}

// dockerCorednsHasLeastPrivilege: CoreDNS has least privilege.
func dockerCorednsHasLeastPrivilege(t *testing.T, h dockerCluster) {
	ctx, b := h.ctx, h.b
	cfg, err := clientcmd.BuildConfigFromFlags("", b.Access().Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + strings.Replace(controlplane.CoreDNS.ServiceAccount, "/", ":", 1)}
	dns, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dns.CoreV1().Services("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("CoreDNS cannot list Services: %v", err)
	}
	if _, err := dns.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("CoreDNS listing Secrets: got %v, want Forbidden", err)
	}
}

func leftovers(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, args := range [][]string{
		{"ps", "-aq", "--filter", "label=" + labelManaged},
		{"network", "ls", "-q", "--filter", "label=" + labelManaged},
		{"volume", "ls", "-q", "--filter", "label=" + labelManaged},
	} {
		b, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %v: %v %s", args, err, b)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			out = append(out, args[0]+": "+strings.ReplaceAll(s, "\n", " "))
		}
	}
	return out
}

// startVictim starts `kubelab up --backend docker` and returns once it
// is booting the apiserver.
func startVictim(t *testing.T, bin, name, home string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "up", "--backend", "docker", "--name", name, "--home", home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		t.Log(sc.Text())
		if strings.Contains(sc.Text(), "waiting for /readyz") {
			return cmd
		}
	}
	t.Fatal("kubelab up ended before booting the apiserver")
	return nil
}

func eventuallyClean(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l := leftovers(t)
		if len(l) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still there after %s: %v", within, l)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDockerKill9LeavesNothing kills `kubelab up --backend docker` with
// SIGKILL while it boots: its reaper removes every container, network and
// volume; and if the reaper is killed too, the next kubelab run does.
func TestDockerKill9LeavesNothing(t *testing.T) {
	bin := dockerOrSkip(t)
	if l := leftovers(t); len(l) > 0 {
		t.Skipf("kubelab containers from elsewhere are running: %v", l)
	}
	t.Run("reaper", func(t *testing.T) {
		cmd := startVictim(t, bin, "victim", t.TempDir())
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		eventuallyClean(t, 20*time.Second)
	})
	t.Run("next run sweeps", func(t *testing.T) {
		home := t.TempDir()
		cmd := startVictim(t, bin, "victim2", home)
		_ = exec.Command("pkill", "-KILL", "-f", ReaperComponent+" --owner "+fmt.Sprint(cmd.Process.Pid)+":").Run()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		time.Sleep(time.Second)
		if len(leftovers(t)) == 0 {
			t.Fatal("expected containers left behind once kubelab and its reaper were killed")
		}
		out, _ := exec.Command(bin, "--home", home, "status", "--name", "nope").CombinedOutput()
		t.Logf("next run: %s", out)
		eventuallyClean(t, 5*time.Second)
	})
}

// TestDockerDownAllKeepsOtherHomes: two kubelab homes share one Docker
// engine; `down --all` in one removes its own clusters only, and says
// which.
func TestDockerDownAllKeepsOtherHomes(t *testing.T) {
	bin := dockerOrSkip(t)
	if l := leftovers(t); len(l) > 0 {
		t.Skipf("kubelab containers from elsewhere are running: %v", l)
	}
	homeA, homeB := t.TempDir(), t.TempDir()
	cmd := startVictim(t, bin, "x", homeA)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		eventuallyClean(t, 30*time.Second)
	})
	out, err := exec.Command(bin, "--home", homeB, "down", "--all").CombinedOutput()
	if err != nil {
		t.Fatalf("down --all in another home: %v\n%s", err, out)
	}
	if strings.Contains(string(out), `"x"`) {
		t.Errorf("down --all in another home reports removing x:\n%s", out)
	}
	if len(leftovers(t)) == 0 {
		t.Fatal("down --all in another home removed the cluster of home A")
	}
	out, err = exec.Command(bin, "--home", homeA, "down", "--all").CombinedOutput()
	if err != nil {
		t.Fatalf("down --all: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `removed docker cluster "x"`) {
		t.Errorf("down --all does not say what it removed:\n%s", out)
	}
	eventuallyClean(t, 10*time.Second)
}

func TestCapacityFlags(t *testing.T) {
	const gib = int64(1) << 30
	nodes := []cluster.NodeSpec{
		{Name: "small", Capacity: map[string]string{"cpu": "500m", "memory": "1Gi", "pods": "20"}},
		{Name: "whole", Capacity: map[string]string{"cpu": "2"}},
		{Name: "plain"},
	}
	got, err := capacityFlags(nodes, 2, 8*gib)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"small": {"--max-pods=20", "--kube-reserved=cpu=1500m,memory=" + strconv.FormatInt(7*gib, 10)},
		"whole": nil, "plain": nil,
	}
	for n, w := range want {
		if !slices.Equal(got[n], w) {
			t.Errorf("%s: got %q, want %q", n, got[n], w)
		}
	}
	_, err = capacityFlags([]cluster.NodeSpec{{Name: "big", Capacity: map[string]string{"cpu": "16", "nvidia.com/gpu": "1"}}}, 2, 8*gib)
	if err == nil || !strings.Contains(err.Error(), "nodes big: capacity: cpu 16 is more than this machine's 2 CPUs") {
		t.Errorf("a node bigger than the machine: got %v", err)
	}
}

// dnsServedByPods checks the DNS addon as kubeadm makes it: kube-dns is
// served by the coredns Deployment's pods, at pod IPs on the workers.
func dnsServedByPods(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	ips, err := controlplane.DNSServed(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	cidr := netip.MustParsePrefix(controlplane.PodCIDR)
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err != nil || !cidr.Contains(a) {
			t.Errorf("coredns pod IP %s is not in the pod CIDR %s", ip, controlplane.PodCIDR)
		}
	}
}
