package load

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
)

// apiOnly is a backend with no capability beyond the Kubernetes API.
type apiOnly struct{ cluster.Backend }

func (apiOnly) Name() string                       { return "api-only" }
func (apiOnly) Capabilities() []cluster.Capability { return nil }

func TestLabNeeds(t *testing.T) {
	for file, want := range map[string][]cluster.Capability{
		"../labs/01-apply-to-running.yaml":     {cluster.CapAuditLog},
		"../labs/02-etcd-leader-failover.yaml": {cluster.CapComponentFaults, cluster.CapEtcdRaft},
		"../labs/05-cordon-and-taints.yaml":    nil,
		// Its scripts run $ETCDCTL: etcd itself, which an existing
		// cluster's backend does not reach.
		"../labs/20-etcd-key-space.yaml": {cluster.CapEtcdRaft},
	} {
		lab, err := ReadLab(file)
		if err != nil {
			t.Fatal(err)
		}
		var got []cluster.Capability
		for k := range lab.Needs() {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s needs %v, want %v", file, got, want)
		}
		err = lab.CheckBackend(apiOnly{})
		if (len(want) == 0) != (err == nil) || (err != nil && !errors.Is(err, cluster.ErrMissingCapability)) {
			t.Errorf("%s on an API-only backend: %v", file, err)
		}
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), string(w)+" (") {
				t.Errorf("%s: refusal %v does not name %s and what needs it", file, err, w)
			}
		}
	}
}

// simulatedNodes runs its own control plane on nodes that are simulated,
// as the embedded backend does: every capability it is taken to have
// without saying, which excludes node internals.
type simulatedNodes struct{ cluster.Backend }

func (simulatedNodes) Name() string               { return "embedded" }
func (simulatedNodes) Topology() cluster.Topology { return cluster.Topology{} }

// TestNodeDaemonTargetNeedsNodeInternals: a fault on a daemon inside a
// node needs real nodes, not control-plane faults, and a backend with
// simulated nodes refuses the lab before it boots, naming the fault.
func TestNodeDaemonTargetNeedsNodeInternals(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  cluster: {workers: 2}
  steps:
  - name: s
    try:
    - kill: {target: worker-2/kubelet}
    - start: {target: worker-2/kubelet}
    - kill: {target: worker-1}
`)
	needs := lab.Needs()
	if why := needs[cluster.CapNodeInternals]; why != "kill worker-2/kubelet at testdata/inline.yaml:9" {
		t.Errorf("node-internals needed by %q, want the kill of worker-2/kubelet at its line", why)
	}
	if why := needs[cluster.CapComponentFaults]; why != "kill worker-1 at testdata/inline.yaml:11" {
		t.Errorf("component-faults needed by %q, want only the kill of the node worker-1", why)
	}
	if !lab.NeedsNodeInternals() {
		t.Error("NeedsNodeInternals = false for a lab that kills a kubelet")
	}
	err := lab.CheckBackend(simulatedNodes{})
	if !errors.Is(err, cluster.ErrNoNodeInternals) || !strings.Contains(err.Error(), "node-internals (kill worker-2/kubelet at ") {
		t.Errorf("on simulated nodes: %v, want a refusal naming node-internals and the kill", err)
	}
	if plain := mustLoad(t, header+"spec: {steps: [{name: s, try: [{kill: {target: kube-scheduler-1}}]}]}"); plain.NeedsNodeInternals() {
		t.Error("NeedsNodeInternals = true for a lab that kills a scheduler")
	}
}

// TestProxyModeNeedsRealNodes: a node's kube-proxy mode needs real nodes
// (simulated ones run no kube-proxy): a backend with simulated nodes
// refuses the lab before it boots, naming the node's field.
func TestProxyModeNeedsRealNodes(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  cluster:
    nodes:
    - {name: worker-1}
    - {name: worker-2, proxyMode: nftables}
  steps:
  - name: s
    try:
    - sleep: {duration: 1s}
`)
	if why := lab.Needs()[cluster.CapNodeInternals]; why != "spec.cluster.nodes[1].proxyMode nftables (kube-proxy runs on real nodes)" {
		t.Errorf("node-internals needed by %q, want the node's proxyMode", why)
	}
	if err := lab.CheckBackend(simulatedNodes{}); !errors.Is(err, cluster.ErrNoNodeInternals) || !strings.Contains(err.Error(), "proxyMode") {
		t.Errorf("on simulated nodes: %v, want a refusal naming the proxyMode", err)
	}
}

// TestContainerCommandsNeedRealNodes: kubectl exec, logs, attach, cp and
// port-forward reach a running container, as $KUBECTL exec in a script
// does, which simulated nodes do not run: a backend with simulated nodes
// refuses the lab before it boots, naming the command. An existing
// cluster's nodes run them; other kubectl commands need nothing.
func TestContainerCommandsNeedRealNodes(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  steps:
  - name: s
    try:
    - kubectl: {args: [get, pods, exec]}
    - kubectl: {args: [-n, kube-system, logs, deploy/coredns]}
    - script: {command: 'echo exec; $KUBECTL get pods'}
    - script: {command: '${KUBECTL} exec web -- true'}
`)
	if why := lab.Needs()[cluster.CapContainers]; why != "kubectl -n kube-system logs deploy/coredns at testdata/inline.yaml:9" {
		t.Errorf("containers needed by %q, want the kubectl logs at its line", why)
	}
	err := lab.CheckBackend(simulatedNodes{})
	if !errors.Is(err, cluster.ErrNoNodeInternals) || !strings.Contains(err.Error(), "containers (kubectl -n kube-system logs") {
		t.Errorf("on simulated nodes: %v, want a refusal naming containers and the command", err)
	}
	script := mustLoad(t, header+"spec: {steps: [{name: s, try: [{script: {command: 'echo exec; kubectl get pods'}}, {script: {command: '${KUBECTL} exec web -- true'}}]}]}")
	if why := script.Needs()[cluster.CapContainers]; !strings.Contains(why, "${KUBECTL} exec web") {
		t.Errorf("containers needed by %q, want the script that runs ${KUBECTL} exec", why)
	}
	plain := mustLoad(t, header+"spec: {steps: [{name: s, try: [{kubectl: {args: [get, pods, exec]}}, {script: {command: 'echo exec; kubectl get pods'}}]}]}")
	if needs := plain.Needs(); len(needs) != 0 {
		t.Errorf("a lab that only gets pods needs %v, want nothing", needs)
	}
}
