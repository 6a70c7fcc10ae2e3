package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

// ScaleSpec is one `kubelab bench scale` measurement.
type ScaleSpec struct {
	Nodes, Pods int
	// Record: the schedulers record their decisions; Audit: the apiservers
	// write their audit logs.
	Record, Audit bool
	// Heartbeat multiplies the simulated nodes' heartbeat timings: their
	// Lease (a kubelet's 40 s, renewed every quarter of it) and the node
	// monitor grace period (the controller-manager's 50 s), as kwokctl's
	// heartbeatFactor does (its default: 5). 1 keeps a kubelet's timings:
	// 1,000 nodes then renew 100 Leases a second: an idle cluster spent
	// 0.38-0.66 CPU-s a second here, against 0.16 at 5.
	Heartbeat int
}

// ScaleResult is one `kubelab bench scale` run.
type ScaleResult struct {
	Nodes, Pods int
	// Recorded: the schedulers recorded their decisions, plugin by plugin;
	// Audited: the apiservers wrote their audit logs.
	Recorded, Audited bool
	// Heartbeat is the spec's heartbeat factor.
	Heartbeat int
	// PodsScheduled: seconds from creating the Deployment until every pod
	// is bound to a node.
	PodsScheduled float64
	// ControlPlane: seconds from Up until the apiservers answer through
	// the load balancer; NodesReady: from then until every node is Ready.
	ControlPlane, NodesReady float64
	// PodsRunning: seconds from creating the Deployment until every pod is
	// Running; PodsPerSecond is Pods / PodsRunning.
	PodsRunning, PodsPerSecond float64
	// PeakPSS: the most MiB the cluster's processes held, sampled each
	// 5 s and when the boot and the workload end (see pssSampler).
	PeakPSS float64
	// ExprMillis: the median time, in ms, of evaluating
	// all(pods("app=bench"), .phase == "Running") once every pod runs,
	// through the engine's view of the cluster (informer caches).
	ExprMillis float64
	// NodeDown: seconds from taking worker-1 down (its heartbeats stop)
	// until the node lifecycle controller marks it NotReady, measured at
	// heartbeat factor 1 only (0 otherwise: it would wait out a grace of
	// minutes); Grace is the node monitor grace period of the cluster.
	NodeDown, Grace float64
	// BootCPU and PodsCPU are the CPU seconds (user and system) each role
	// of the cluster's processes spent booting (until nodes Ready) and
	// from creating the Deployment until every pod ran: where the time
	// goes on a machine whose cores they all share.
	BootCPU, PodsCPU map[cluster.Role]float64
}

// benchGrace and benchLease are the node monitor grace period and the
// node Lease duration of bench scale's clusters at heartbeat factor 1:
// the controller-manager's and the kubelet's defaults (v1.37). A lab's
// short grace (8 s) needs leases as short, renewed every 2 s: at 1,000
// nodes that is 500 renewals a second, a load no real cluster of that
// size has.
const (
	benchGrace = 50 * time.Second
	benchLease = 40 * time.Second
)

// Scale boots a cluster of spec.Nodes simulated nodes, creates a
// Deployment of spec.Pods replicas and measures each phase.
func Scale(ctx context.Context, newBackend NewBackend, backend string, spec ScaleSpec, say func(string)) (res ScaleResult, err error) {
	nodes, pods, record, audit := spec.Nodes, spec.Pods, spec.Record, spec.Audit
	hb := max(1, spec.Heartbeat)
	res.Nodes, res.Pods, res.Recorded, res.Audited, res.Heartbeat = nodes, pods, record, audit, hb
	grace := benchGrace * time.Duration(hb)
	res.Grace = grace.Seconds()
	// A name per size and mode: see upOnce.
	topo := cluster.Topology{Name: fmt.Sprintf("bench-scale-%d-%t-%t-%d", nodes, record, audit, hb), Workers: nodes,
		Scheduler: cluster.SchedulerSpec{Record: &record}, Audit: &audit,
		Timings: cluster.Timings{NodeMonitorGracePeriod: cluster.Duration{Duration: grace},
			NodeLeaseDuration: cluster.Duration{Duration: benchLease * time.Duration(hb)}}}
	b, err := newBackend(backend, topo)
	if err != nil {
		return res, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := b.Down(dctx); derr != nil && err == nil {
			err = derr
		}
	}()
	self0 := selfCPU()
	pss := &pssSampler{b: b}
	defer func() { res.PeakPSS = pss.stop() }()
	pss.start(ctx, pssEvery)
	start := time.Now()
	var cp time.Duration
	err = b.Up(ctx, func(e cluster.Event) {
		if e.Message == lifecycle.EventServing {
			cp = e.Elapsed
		}
		if e.Component == "nodes" {
			say(fmt.Sprintf("%6.2fs %s", e.Elapsed.Seconds(), e.Message))
		}
		if e.Message == lifecycle.EventControlPlaneReady {
			res.NodesReady = (e.Elapsed - cp).Seconds()
		}
	})
	if err != nil {
		return res, err
	}
	res.ControlPlane = cp.Seconds()
	if cpu, cerr := CPUByRole(ctx, b); cerr == nil { // a measure, not a reason to fail the bench
		cpu[RoleSelf] -= self0 // a bench runs several in one process
		res.BootCPU = cpu
	}
	pss.sample(ctx)
	next := fmt.Sprintf("creating %d pods", pods)
	if pods == 0 {
		next = "no pods to create (--pods 0): the nodes only"
	}
	say(fmt.Sprintf("cluster usable in %.2fs; %s", time.Since(start).Seconds(), next))
	if pods == 0 && hb != 1 {
		return res, nil // nothing more to measure: no node is taken down
	}
	c := cluster.New(b, nil)
	defer c.Close()
	cs, err := protobufClient(c)
	if err != nil {
		return res, err
	}
	if pods > 0 {
		if err := runPods(ctx, b, c, cs, pods, &res, pss, say); err != nil {
			return res, err
		}
	}
	if hb != 1 {
		return res, nil
	}
	res.NodeDown, err = nodeDown(ctx, b, cs, "worker-1", grace)
	say(fmt.Sprintf("worker-1 NotReady %.2fs after it went down (grace %s)", res.NodeDown, grace))
	return res, err
}

// runPods creates a Deployment of pods replicas on a usable cluster and
// measures until every pod runs: the times, the CPU by role and the
// engine's evaluation of all(pods) once they do.
func runPods(ctx context.Context, b cluster.Backend, c *cluster.Cluster, cs kubernetes.Interface, pods int, res *ScaleResult, pss *pssSampler, say func(string)) error {
	t0 := time.Now()
	cpu0, _ := CPUByRole(ctx, b)
	replicas := int32(pods)
	labels := map[string]string{"app": "bench"}
	_, err := cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "kubelab/http:dev"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create deployment: %w", err)
	}
	running, scheduled := map[string]bool{}, map[string]bool{}
	shown, n := 0, 0 // n: pods Running now, counted as events change them
	lw := cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "pods", "default", func(o *metav1.ListOptions) {
		o.LabelSelector = "app=bench"
		o.FieldSelector = fields.Everything().String()
	})
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	_, err = watchtools.UntilWithSync(wctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return false, nil
		}
		runs := p.Status.Phase == corev1.PodRunning && ev.Type != watch.Deleted
		if runs != running[p.Name] {
			if runs {
				n++
			} else {
				n--
			}
		}
		running[p.Name] = runs
		if p.Spec.NodeName != "" && !scheduled[p.Name] {
			scheduled[p.Name] = true
			if len(scheduled) == pods {
				res.PodsScheduled = time.Since(t0).Seconds()
			}
		}
		if step := max(1, pods/10); n/step != shown/step || n == pods {
			shown = n
			say(fmt.Sprintf("%6.2fs pods Running %d/%d", time.Since(t0).Seconds(), n, pods))
		}
		return n == pods, nil
	})
	if err != nil {
		return fmt.Errorf("pods Running %d/%d: %w", shown, pods, err)
	}
	res.PodsRunning = time.Since(t0).Seconds()
	pss.sample(ctx)
	res.PodsPerSecond = float64(pods) / res.PodsRunning
	if cpu1, err := CPUByRole(ctx, b); err == nil {
		res.PodsCPU = map[cluster.Role]float64{}
		for r, v := range cpu1 {
			res.PodsCPU[r] = v - cpu0[r]
		}
	}
	res.ExprMillis, err = exprMillis(ctx, c, `all(pods("app=bench"), .phase == "Running")`, 21)
	return err
}

// nodeDown takes node down and returns the seconds until its Ready
// condition is no longer True.
func nodeDown(ctx context.Context, b cluster.Backend, cs kubernetes.Interface, node string, grace time.Duration) (float64, error) {
	t0 := time.Now()
	if err := b.Act(ctx, node, cluster.Kill); err != nil {
		return 0, fmt.Errorf("take %s down: %w", node, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, grace+time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status != corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("%s NotReady: %w", node, err)
	}
	return time.Since(t0).Seconds(), nil
}

// exprMillis evaluates src n times on c through the engine's view
// (informer caches, synced first) and returns the median, in ms.
func exprMillis(ctx context.Context, c *cluster.Cluster, src string, n int) (float64, error) {
	comp, err := assertions.Compile(src, nil, true)
	if err != nil {
		return 0, err
	}
	live, err := assertions.NewLive(ctx, c, time.Now())
	if err != nil {
		return 0, err
	}
	defer live.Close()
	ms := make([]float64, 0, n)
	for range n {
		t := time.Now()
		ok, err := assertions.Holds(ctx, comp, live, nil)
		if err != nil || !ok {
			return 0, fmt.Errorf("%s: %t, %v", src, ok, err)
		}
		ms = append(ms, float64(time.Since(t).Microseconds())/1000)
	}
	slices.Sort(ms)
	return ms[n/2], nil
}

// protobufClient is an admin client of c that speaks protobuf: the bench
// watches every pod of the workload, and in JSON that cost it ~1.5 ms of
// CPU per pod (see cluster.SpeakProtobuf).
func protobufClient(c *cluster.Cluster) (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cluster.SpeakProtobuf(cfg)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return cs, nil
}

// pssSampler keeps the most memory the cluster's processes held. Reading
// every process's smaps_rollup walks its page tables under their memory
// lock: at 1,000 nodes a sample took ~60 ms of CPU, so a sampler running
// each second took 0.35 CPU-s from the boot it measured (of ~15) and ~5%
// of both cores from a workload of 10,000 pods. It samples each pssEvery
// and when the boot and the workload end, where the cluster holds the
// most: a component's heap grows while it boots and with the pods.
const pssEvery = 5 * time.Second

type pssSampler struct {
	b      cluster.Backend
	mu     sync.Mutex
	peak   float64
	cancel context.CancelFunc
	done   chan struct{}
}

// sample measures once.
func (s *pssSampler) sample(ctx context.Context) {
	m, err := PSS(ctx, s.b)
	if err != nil {
		return // a measure, not a reason to fail the bench
	}
	s.mu.Lock()
	s.peak = max(s.peak, m)
	s.mu.Unlock()
}

// start samples every period until stop.
func (s *pssSampler) start(ctx context.Context, every time.Duration) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s.sample(ctx)
		}
	}()
}

// stop ends the sampling, if it started, and returns the peak, in MiB.
func (s *pssSampler) stop() float64 {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// WriteScale prints results as a table.
func WriteScale(w io.Writer, rs []ScaleResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODES\tPODS\tRECORDED\tAUDITED\tHEARTBEAT x\tCONTROL PLANE s\tNODES READY s (after control plane)\tPODS SCHEDULED s\tPODS RUNNING s\tPODS/s\tPEAK PSS MiB\tall(pods) ms\tNODE DOWN -> NotReady s (grace)")
	for _, r := range rs {
		down := fmt.Sprintf("- (%.0f)", r.Grace) // not measured: see ScaleResult.NodeDown
		if r.NodeDown > 0 {
			down = fmt.Sprintf("%.2f (%.0f)", r.NodeDown, r.Grace)
		}
		fmt.Fprintf(tw, "%d\t%d\t%t\t%t\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%.1f\t%s\n", r.Nodes, r.Pods, r.Recorded, r.Audited, r.Heartbeat, r.ControlPlane, r.NodesReady,
			r.PodsScheduled, r.PodsRunning, r.PodsPerSecond, r.PeakPSS, r.ExprMillis, down)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeCPU(w, rs)
}

// writeCPU prints where the CPU went, by role, for each result: seconds
// while booting, while the pods started, and per pod.
func writeCPU(w io.Writer, rs []ScaleResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nNODES\tPODS\tRECORDED\tAUDITED\tHEARTBEAT x\tCOMPONENT\tBOOT CPU s\tPODS CPU s\tCPU ms per pod")
	for _, r := range rs {
		roles := slices.Sorted(maps.Keys(r.BootCPU))
		for _, role := range roles {
			perPod := 0.0
			if r.Pods > 0 {
				perPod = r.PodsCPU[role] * 1000 / float64(r.Pods)
			}
			fmt.Fprintf(tw, "%d\t%d\t%t\t%t\t%d\t%s\t%.1f\t%.1f\t%.1f\n", r.Nodes, r.Pods, r.Recorded, r.Audited, r.Heartbeat, role, r.BootCPU[role], r.PodsCPU[role], perPod)
		}
	}
	return tw.Flush()
}
