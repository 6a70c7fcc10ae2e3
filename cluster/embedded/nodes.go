package embedded

import (
	"context"
	"fmt"
	"strconv"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kwokconsts "sigs.k8s.io/kwok/pkg/consts"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
)

// adminClient is kubelab's own client of the cluster, unthrottled:
// client-go's default 5 requests/s made registering 50 nodes take 8 s.
func (b *Backend) adminClient() (kubernetes.Interface, error) {
	cfg, err := cluster.LoadRESTConfig(b.st.Files["kubeconfig"])
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	return kubernetes.NewForConfig(cfg)
}

// registerNodes creates every Node object at once (32 requests in
// flight), labelled for kwok to heartbeat.
func registerNodes(ctx context.Context, cs kubernetes.Interface, nodes []cluster.NodeSpec) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	ttl := nodeTTL(len(nodes))
	for i, n := range nodes {
		g.Go(func() error {
			if err := registerNode(gctx, cs, i, n, ttl); err != nil {
				return fmt.Errorf("register node %s: %w", n.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// nodeTTL is the node.alpha.kubernetes.io/ttl the controller-manager's
// TTL controller gives every node of a cluster of n nodes (its table, in
// k8s.io/kubernetes/pkg/controller/ttl). Registering nodes with it saves
// that controller one patch per node while the apiserver is busiest; were
// it ever wrong, the controller would simply patch it.
func nodeTTL(n int) int {
	bounds := []struct{ max, ttl int }{{100, 0}, {500, 15}, {1000, 30}, {2000, 60}}
	for _, b := range bounds {
		if n <= b.max {
			return b.ttl
		}
	}
	return 300
}

func registerNode(ctx context.Context, cs kubernetes.Interface, i int, n cluster.NodeSpec, ttl int) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for k, v := range n.Capacity {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("capacity %s=%q: %w", k, v, err)
		}
		capacity[corev1.ResourceName(k)] = q
	}
	labels := map[string]string{
		corev1.LabelHostname:             n.Name,
		"node-role.kubernetes.io/worker": "", "type": "kwok", labelKubelet: kubeletRunning,
		// The beta labels the node lifecycle controller would otherwise
		// add, one patch per node (1,000 patches at 1,000 nodes, while
		// the apiserver is busiest).
		corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: map[string]string{
			"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": strconv.Itoa(ttl),
		}},
		Spec:   corev1.NodeSpec{PodCIDR: nodePodCIDR(i), PodCIDRs: []string{nodePodCIDR(i)}},
		Status: registeredStatus(metav1.Now(), capacity, nodeIP(i), n.Name),
	}
	for _, t := range n.Taints {
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return controlplane.Create(ctx, "node "+n.Name, func(ctx context.Context) (any, error) {
		return cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	})
}

// actOnNode takes a simulated node down or brings it back: kwok stops or
// resumes heartbeating it (its Lease and status), as a kubelet that dies
// or starts again would.
func (b *Backend) actOnNode(ctx context.Context, p *procSpec, a cluster.Action) error {
	var stopped bool
	switch a {
	case cluster.Kill, cluster.Stop, cluster.Pause:
		stopped = true
	case cluster.Start, cluster.Resume:
	case cluster.Restart:
		if err := b.actOnNode(ctx, p, cluster.Stop); err != nil {
			return err
		}
	case cluster.Partition, cluster.Heal:
		return fmt.Errorf("%s %s: %w (the embedded backend's nodes are simulated; use --backend docker)", a, p.Name, cluster.ErrUnsupported)
	default:
		return fmt.Errorf("unknown action %q", a)
	}
	cs, err := b.adminClient()
	if err != nil {
		return err
	}
	value := kubeletRunning
	if stopped {
		value = kubeletStopped
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, labelKubelet, value)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("%s %s: %w", a, p.Name, err)
	}
	b.setStopped(p, stopped)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opts.Home.save(b.name, b.st)
}

// registeredStatus is the status a node registers with, as a kubelet's
// first create carries its own (conditions, addresses, capacity, node
// info): the status kwok's node-initialize stage (kwok-stages.yaml) would
// write a moment later, so that stage has nothing to do. Registering
// without it cost every node one more status patch by kwok before the
// node lifecycle controller could lift the not-ready taint: 1,000 patches
// at 1,000 nodes while the apiserver is busiest. kwok heartbeats these
// nodes and holds their Leases as before; a node it does not take over
// goes Unknown after the grace period, as one whose kubelet died would.
func registeredStatus(now metav1.Time, capacity corev1.ResourceList, ip, hostname string) corev1.NodeStatus {
	conditions := []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated", Message: "RouteController created a route"},
	}
	for i := range conditions {
		conditions[i].LastHeartbeatTime, conditions[i].LastTransitionTime = now, now
	}
	version := "kwok-" + kwokconsts.Version
	return corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: conditions,
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: hostname}},
		NodeInfo: corev1.NodeSystemInfo{
			Architecture: "amd64", OperatingSystem: "linux",
			ContainerRuntimeVersion: version, KernelVersion: version, KubeProxyVersion: version, KubeletVersion: version,
		},
		Phase: corev1.NodeRunning,
	}
}
