package v1alpha1

// The cluster a lab or an exercise runs on (spec.cluster). Package load
// converts it to cluster.Topology, the input of the cluster facade.

// Topology describes a lab cluster: how many of each control-plane
// component to run, which worker nodes to simulate or start, and the timings
// that labs shorten to make failover observable in seconds.
type Topology struct {
	// Name identifies the cluster; ports, certificates and the state
	// directory are derived from it. Defaults to "kubelab".
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Etcd is the number of etcd members: 1, 3 or 5. Default 1.
	Etcd int `json:"etcd,omitempty" yaml:"etcd,omitempty"`
	// APIServers is the number of kube-apiservers. With more than one, an L4
	// load balancer fronts them. Default 1.
	APIServers int `json:"apiservers,omitempty" yaml:"apiservers,omitempty"`
	// Schedulers is the number of kube-schedulers (leader-elected). Default 1.
	Schedulers int `json:"schedulers,omitempty" yaml:"schedulers,omitempty"`
	// ControllerManagers is the number of kube-controller-managers
	// (leader-elected). Default 1.
	ControllerManagers int `json:"controllerManagers,omitempty" yaml:"controllerManagers,omitempty"`
	// Workers is the number of worker nodes named worker-1..worker-N, used
	// when Nodes is empty. Default 1.
	Workers int `json:"workers,omitempty" yaml:"workers,omitempty"`
	// Nodes lists worker nodes one by one; it overrides Workers.
	Nodes []NodeSpec `json:"nodes,omitempty" yaml:"nodes,omitempty"`
	// Timings are the leader-election and node-lifecycle timings.
	Timings Timings `json:"timings,omitzero" yaml:"timings,omitempty"`
	// Scheduler configures the kube-schedulers.
	Scheduler SchedulerSpec `json:"scheduler,omitzero" yaml:"scheduler,omitempty"`
	// Audit makes every apiserver write its audit log, for audit() and
	// trace(). Unset: on where it is read (a lab, drill or exercise whose
	// expressions call audit() or trace(), a run asked for an HTML report,
	// kubelab up and exercise start), off elsewhere; false turns it off
	// (to measure what it costs).
	Audit *bool `json:"audit,omitempty" yaml:"audit,omitempty"`
	// Fresh boots the control plane from nothing: the apiservers bootstrap
	// an empty etcd (RBAC, system namespaces, priority classes, flow
	// control) as on a cluster's first day, instead of starting from the
	// seed, a snapshot of that bootstrap taken once per kubelab build. For
	// labs about the bootstrap itself; every other cluster behaves the same
	// either way.
	Fresh bool `json:"fresh,omitempty" yaml:"fresh,omitempty"`
	// Stacked runs the control plane as kubeadm's stacked etcd topology:
	// control-plane nodes control-plane-1..N (N = etcd), each an etcd
	// member with an apiserver that talks to that member only, a
	// controller-manager and a scheduler. Operations may then name a
	// control-plane node as their target (kill: {target: control-plane-2}),
	// which hits its four components at once, as a failed machine would.
	// The other counts default to etcd's and must equal it. Unset: the
	// external topology, where every apiserver talks to every member and
	// each component fails on its own.
	Stacked bool `json:"stacked,omitempty" yaml:"stacked,omitempty"`
}

// SchedulerSpec configures the kube-schedulers.
type SchedulerSpec struct {
	// Config is a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)
	// without clientConnection and leaderElection, which kubelab sets:
	// profiles and their plugins and weights, pluginConfig,
	// percentageOfNodesToScore. Unset: the upstream defaults.
	Config map[string]any `json:"config,omitempty" yaml:"config,omitempty"`
	// Record writes down every scheduling cycle, plugin by plugin, for
	// scheduling() in expressions. Unset: on where it is read (expressions
	// that call scheduling(), kubelab up and exercise start), off
	// elsewhere, where the schedulers run exactly as upstream ships them;
	// false turns it off.
	Record *bool `json:"record,omitempty" yaml:"record,omitempty"`
	// Extender is a scheduler extender for the kube-schedulers: an HTTP
	// service speaking upstream's extender protocol, which each scheduler
	// calls after its own Filter plugins (with the nodes they left) and
	// after its own Score plugins. kubelab serves it on each scheduler's
	// loopback, as a sidecar container of the scheduler's pod would, and
	// adds it to the configuration's extenders; it decides with the
	// expressions below. scheduling() shows it as the plugin "Extender".
	Extender *ExtenderSpec `json:"extender,omitempty" yaml:"extender,omitempty"`
}

// ExtenderSpec is the policy of the scheduler extender. The expressions
// see pod (name, namespace, labels, annotations) and node (name, labels,
// annotations, taints: key, value, effect). At least one is set.
type ExtenderSpec struct {
	// Filter is a boolean expression: the node may take the pod when it
	// is true. A node it refuses is UnschedulableAndUnresolvable, with the
	// expression as the reason, in the pod's FailedScheduling event.
	Filter string `json:"filter,omitempty" yaml:"filter,omitempty"`
	// Prioritize is an integer expression, the node's score from 0 to 10
	// (upstream's MaxExtenderPriority). The scheduler multiplies it by
	// Weight and by 10 before adding it to the Score plugins' sum.
	Prioritize string `json:"prioritize,omitempty" yaml:"prioritize,omitempty"`
	// Weight multiplies the extender's scores: 1 to 100, default 1.
	Weight int64 `json:"weight,omitempty" yaml:"weight,omitempty"`
}

// NodeSpec describes one worker node.
type NodeSpec struct {
	// Name of the Node object.
	Name string `json:"name" yaml:"name"`
	// Labels added to the Node.
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	// Taints set on the Node when it registers.
	Taints []Taint `json:"taints,omitempty" yaml:"taints,omitempty"`
	// Capacity overrides the node's resources, e.g. {cpu: "4", memory: 8Gi, pods: "110"}.
	Capacity map[string]string `json:"capacity,omitempty" yaml:"capacity,omitempty"`
	// ProxyMode is kube-proxy's mode on this node: iptables (the default)
	// or nftables (kube-proxy writes the same Service logic as nft rules,
	// in the table "ip kube-proxy"). Real nodes only (docker backend):
	// simulated nodes run no kube-proxy.
	ProxyMode string `json:"proxyMode,omitempty" yaml:"proxyMode,omitempty" jsonschema:"enum=iptables,enum=nftables"`
}

// Taint is a Node taint.
type Taint struct {
	// Key of the taint.
	Key string `json:"key" yaml:"key"`
	// Value of the taint, optional.
	Value string `json:"value,omitempty" yaml:"value,omitempty"`
	// Effect: NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect" yaml:"effect"`
}

// Timings are the knobs labs turn to see failover in seconds rather than
// minutes. Zero values mean the upstream defaults.
type Timings struct {
	// LeaseDuration for scheduler and controller-manager leader election
	// (upstream default 15s).
	LeaseDuration Duration `json:"leaseDuration,omitzero" yaml:"leaseDuration,omitempty"`
	// RenewDeadline for leader election (upstream default 10s).
	RenewDeadline Duration `json:"renewDeadline,omitzero" yaml:"renewDeadline,omitempty"`
	// RetryPeriod for leader election (upstream default 2s).
	RetryPeriod Duration `json:"retryPeriod,omitzero" yaml:"retryPeriod,omitempty"`
	// NodeMonitorGracePeriod: how long a node may miss heartbeats before the
	// node lifecycle controller marks it NotReady (upstream default 50s).
	NodeMonitorGracePeriod Duration `json:"nodeMonitorGracePeriod,omitzero" yaml:"nodeMonitorGracePeriod,omitempty"`
	// NodeLeaseDuration: the lease a node renews in kube-node-lease (40s).
	NodeLeaseDuration Duration `json:"nodeLeaseDuration,omitzero" yaml:"nodeLeaseDuration,omitempty"`
	// TolerationSeconds given by default to every pod for the not-ready and
	// unreachable taints (upstream default 300s): the time until pods on a
	// dead node are evicted.
	TolerationSeconds Duration `json:"tolerationSeconds,omitzero" yaml:"tolerationSeconds,omitempty"`
	// EtcdCompactionInterval: how often the apiserver compacts etcd
	// (upstream default 5m).
	EtcdCompactionInterval Duration `json:"etcdCompactionInterval,omitzero" yaml:"etcdCompactionInterval,omitempty"`
}
