// Package kubeconfig is the cluster.Backend for a cluster kubelab did not
// create, given by a kubeconfig file and an optional context.
//
// Up checks that the apiserver answers and every node is Ready, then makes
// the run a namespace of its own (labelled dev.kubelab.managed=true and
// dev.kubelab.run=<run id>) and writes a copy of the kubeconfig, with the
// chosen context current and that namespace as its default, into the
// run's state directory. Down deletes what carries the run's label (the
// namespace, and any cluster-scoped object a lab applied) and puts back
// the cordons, taints and labels a lab changed on nodes.
//
// A run given a namespace (cluster.Topology.Namespace: an exercise's
// "default") works there instead; it creates the namespace only when it
// does not exist, and deletes it only then. Up records the run in the
// state directory (run.json), so that another process can Open it: an
// exercise started on the cluster is checked, solved and stopped by later
// commands.
//
// It does not hurt the cluster: Act returns cluster.ErrUnsupported, and
// there are no etcd endpoints, audit logs or scheduler decision logs.
// Capabilities says so, and the engine refuses labs that need them.
package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"kubelab.dev/kubelab/cluster"
)

// Labels kubelab puts on everything it makes in a cluster it does not own.
const (
	LabelManaged = "dev.kubelab.managed"
	LabelRun     = "dev.kubelab.run"
)

// Options say which cluster to use and where the run's files go.
type Options struct {
	// Kubeconfig is the file (required).
	Kubeconfig string
	// Context in it; empty for its current context.
	Context string
	// Dir is the run's state directory (the kubeconfig copy goes there).
	Dir string
}

// Backend is an existing cluster, seen through its API.
type Backend struct {
	o     Options
	topo  cluster.Topology
	run   string
	ns    string
	copy  string
	cs    kubernetes.Interface
	cfg   *rest.Config
	nodes map[string]nodeState // as found at Up, to put back at Down
	// ownNS: the run created ns (Down deletes it as a whole).
	ownNS bool
}

// New checks the options and the kubeconfig; nothing is created until Up.
// t.Name names the run (and its namespace).
func New(t cluster.Topology, o Options) (*Backend, error) {
	if o.Kubeconfig == "" {
		return nil, errors.New("kubeconfig backend: no kubeconfig file given (--kubeconfig)")
	}
	if o.Dir == "" {
		return nil, errors.New("kubeconfig backend: no state directory")
	}
	if t.Name == "" {
		return nil, errors.New("kubeconfig backend: the run has no name")
	}
	b := &Backend{o: o, topo: t, run: t.Name, ns: "kubelab-" + t.Name}
	if len(b.ns) > 63 {
		b.ns = strings.TrimRight(b.ns[:63], "-")
	}
	if err := honoured(t); err != nil {
		return nil, err
	}
	if t.Namespace != "" {
		if errs := validation.IsDNS1123Label(t.Namespace); len(errs) > 0 {
			return nil, fmt.Errorf("kubeconfig backend: namespace %q: %s", t.Namespace, strings.Join(errs, "; "))
		}
		b.ns = t.Namespace
	}
	b.copy = filepath.Join(o.Dir, "kubeconfig")
	if _, err := b.load(); err != nil {
		return nil, err
	}
	return b, nil
}

// Source names the cluster: the kubeconfig file, and the context when one
// was chosen.
func (b *Backend) Source() string {
	if b.o.Context != "" {
		return b.o.Kubeconfig + " (context " + b.o.Context + ")"
	}
	return b.o.Kubeconfig
}

// Dir is the run's state directory.
func (b *Backend) Dir() string { return b.o.Dir }

// honoured refuses node settings only a cluster kubelab makes has: an
// existing cluster keeps its nodes' capacity, taints and labels, and a
// lab that counts on them would see something else.
func honoured(t cluster.Topology) error {
	for _, n := range t.Nodes {
		var what []string
		if len(n.Capacity) > 0 {
			what = append(what, "capacity")
		}
		if len(n.Taints) > 0 {
			what = append(what, "taints")
		}
		if len(n.Labels) > 0 {
			what = append(what, "labels")
		}
		if n.ProxyMode != "" {
			what = append(what, "proxyMode")
		}
		if len(what) > 0 {
			return fmt.Errorf("kubeconfig backend: node %s sets %s: %w (an existing cluster keeps its own nodes)", n.Name, strings.Join(what, ", "), cluster.ErrTopology)
		}
	}
	return nil
}

// wanted is the number of worker nodes the topology asks for.
func wanted(t cluster.Topology) int {
	if len(t.Nodes) > 0 {
		return len(t.Nodes)
	}
	return max(t.Workers, 1)
}

// schedulable counts the nodes new pods can go to: not cordoned, without
// a NoSchedule or NoExecute taint (a control-plane node).
func schedulable(nodes []corev1.Node) int {
	n := 0
	for i := range nodes {
		ok := !nodes[i].Spec.Unschedulable
		for _, t := range nodes[i].Spec.Taints {
			ok = ok && t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute
		}
		if ok {
			n++
		}
	}
	return n
}

// Name is "kubeconfig".
func (b *Backend) Name() string { return "kubeconfig" }

// Capabilities: only what the Kubernetes API gives any client. That
// includes containers (exec, logs): an existing cluster's nodes run them.
func (b *Backend) Capabilities() []cluster.Capability {
	return []cluster.Capability{cluster.CapContainers}
}

// RunNamespace is the namespace the run works in.
func (b *Backend) RunNamespace() string { return b.ns }

// OwnsRunNamespace says whether the run created its namespace.
func (b *Backend) OwnsRunNamespace() bool { return b.ownNS }

// RunLabels mark what this run made.
func (b *Backend) RunLabels() map[string]string {
	return map[string]string{LabelManaged: "true", LabelRun: b.run}
}

// CheckFile reads the kubeconfig file and finds the context (its current
// one when context is ""): what a command checks before it runs anything,
// so that a wrong path or context is bad input, not a failed run.
func CheckFile(path, context string) error {
	_, _, err := readFile(path, context)
	return err
}

// readFile reads the kubeconfig file and returns it with the name of the
// chosen context (paths resolved to absolute ones).
func readFile(path, context string) (*clientcmdapi.Config, string, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	raw, err := rules.Load()
	if err != nil {
		return nil, "", fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	name := context
	if name == "" {
		name = raw.CurrentContext
	}
	if _, ok := raw.Contexts[name]; !ok || name == "" {
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, "", fmt.Errorf("kubeconfig %s: no context %q (it has %s)", path, name, strings.Join(names, ", "))
	}
	return raw, name, nil
}

// load reads the kubeconfig with the chosen context current and the run's
// namespace as that context's default.
func (b *Backend) load() (*clientcmdapi.Config, error) {
	raw, name, err := readFile(b.o.Kubeconfig, b.o.Context)
	if err != nil {
		return nil, err
	}
	ctx := raw.Contexts[name].DeepCopy()
	ctx.Namespace = b.ns
	raw.Contexts[name] = ctx
	raw.CurrentContext = name
	return raw, nil
}

// Up checks the cluster answers and its nodes are Ready, then makes the
// run's namespace and kubeconfig.
func (b *Backend) Up(ctx context.Context, progress func(cluster.Event)) error {
	start := time.Now()
	say := func(comp, msg string) {
		if progress != nil {
			progress(cluster.Event{Component: comp, Message: msg, Elapsed: time.Since(start)})
		}
	}
	raw, err := b.load()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(b.o.Dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(b.o.Dir, stateFile)); err == nil {
		return fmt.Errorf("run %s is already recorded in %s: remove it first (kubelab down --name %s)", b.run, b.o.Dir, b.run)
	}
	if err := clientcmd.WriteToFile(*raw, b.copy); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := os.Chmod(b.copy, 0o600); err != nil {
		return err
	}
	if err := b.connect(); err != nil {
		return err
	}
	if err := b.healthy(ctx); err != nil {
		return err
	}
	say("kube-apiserver", "answers")
	if err := b.nodesReady(ctx); err != nil {
		return err
	}
	say("node", fmt.Sprintf("%d nodes Ready", len(b.nodes)))
	if err := b.makeNamespace(ctx); err != nil {
		return err
	}
	if err := b.save(); err != nil {
		return err
	}
	if b.ownNS {
		say("namespace", b.ns+" created")
	} else {
		say("namespace", b.ns+" (exists: kubelab takes over nothing in it and deletes only what it labels)")
	}
	return nil
}

// connect makes the clients of the kubeconfig copy.
func (b *Backend) connect() error {
	cfg, err := cluster.LoadRESTConfig(b.copy)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", b.o.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = 100, 200, 15*time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	b.cfg, b.cs = cfg, cs
	return nil
}

// healthy asks /readyz, then /version for apiservers that hide /readyz.
func (b *Backend) healthy(ctx context.Context) error {
	rc := b.cs.Discovery().RESTClient()
	body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
	if err == nil {
		return nil
	}
	if _, verr := b.cs.Discovery().ServerVersion(); verr != nil {
		return fmt.Errorf("apiserver of %s does not answer: %w", b.o.Kubeconfig, errors.Join(fmt.Errorf("/readyz: %w (%s)", err, strings.TrimSpace(string(body))), verr))
	}
	return nil
}

// nodesReady waits until the cluster has nodes and every one is Ready,
// and notes their cordons, taints and labels.
func (b *Backend) nodesReady(ctx context.Context) error {
	var final error // the cluster will not do: no retry
	err := cluster.Poll(ctx, 100*time.Millisecond, 2*time.Second, func(ctx context.Context) error {
		nl, err := b.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		switch {
		case err != nil:
			return fmt.Errorf("list nodes: %w", err)
		case len(nl.Items) == 0:
			return errors.New("the cluster has no nodes")
		}
		var notReady []string
		for i := range nl.Items {
			if !cluster.NodeUsable(&nl.Items[i]) {
				notReady = append(notReady, nl.Items[i].Name)
			}
		}
		if len(notReady) > 0 {
			return fmt.Errorf("nodes not Ready: %s", strings.Join(notReady, ", "))
		}
		if want, have := wanted(b.topo), schedulable(nl.Items); have < want {
			final = fmt.Errorf("the run wants %d worker nodes and the cluster of %s has %d that take new pods: %w", want, b.Source(), have, cluster.ErrTopology)
			return nil
		}
		b.noteNodes(nl.Items)
		return nil
	})
	return errors.Join(final, err)
}

// noteNodes records the nodes and sets the topology's node names.
func (b *Backend) noteNodes(nodes []corev1.Node) {
	b.nodes = map[string]nodeState{}
	b.topo.Nodes = nil
	for i := range nodes {
		n := &nodes[i]
		b.nodes[n.Name] = stateOf(n)
		b.topo.Nodes = append(b.topo.Nodes, cluster.NodeSpec{Name: n.Name, Labels: n.Labels})
	}
	sort.Slice(b.topo.Nodes, func(i, j int) bool { return b.topo.Nodes[i].Name < b.topo.Nodes[j].Name })
	b.topo.Workers = len(nodes)
}

// makeNamespace creates the run's namespace (a given one only when it
// does not exist) and waits for its default ServiceAccount (pods are
// refused until it exists).
func (b *Backend) makeNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns, Labels: b.RunLabels()}}
	_, err := b.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: "kubelab"})
	switch {
	case err == nil:
		b.ownNS = true
	case apierrors.IsAlreadyExists(err) && b.topo.Namespace != "":
		b.ownNS = false // someone else's: work in it, never delete it
	default:
		return fmt.Errorf("create namespace %s: %w", b.ns, err)
	}
	err = cluster.Poll(ctx, 50*time.Millisecond, time.Second, func(ctx context.Context) error {
		_, err := b.cs.CoreV1().ServiceAccounts(b.ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("namespace %s: default ServiceAccount: %w", b.ns, err)
	}
	return nil
}

// Components lists the nodes and, where the API shows them, the
// control-plane pods of kube-system.
func (b *Backend) Components(ctx context.Context) ([]cluster.Component, error) {
	if b.cs == nil {
		return nil, nil
	}
	nl, err := b.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []cluster.Component
	for i := range nl.Items {
		st := cluster.StateRunning
		if !cluster.NodeUsable(&nl.Items[i]) {
			st = cluster.StateStopped
		}
		out = append(out, cluster.Component{Name: nl.Items[i].Name, Role: cluster.RoleNode, State: st})
	}
	pl, err := b.cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return out, nil // not ours to see
		}
		return out, fmt.Errorf("list control-plane pods: %w", err)
	}
	for _, p := range pl.Items {
		st := cluster.StateExited
		if p.Status.Phase == corev1.PodRunning {
			st = cluster.StateRunning
		}
		out = append(out, cluster.Component{Name: p.Name, Role: cluster.Role(p.Labels["component"]), State: st})
	}
	return out, nil
}

// Act is not supported: kubelab does not hurt a cluster it does not own.
func (b *Backend) Act(_ context.Context, name string, a cluster.Action) error {
	return fmt.Errorf("%s %s: %w (a cluster kubelab did not create)", a, name, cluster.ErrUnsupported)
}

// Access is the kubeconfig copy; no etcd, audit or scheduler logs.
func (b *Backend) Access() cluster.Access { return cluster.Access{Kubeconfig: b.copy} }

// Topology has the cluster's real node names (after Up).
func (b *Backend) Topology() cluster.Topology { return b.topo }
