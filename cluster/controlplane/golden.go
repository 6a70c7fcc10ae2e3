package controlplane

import "kubelab.dev/kubelab/cluster"

// GoldenTopology is the topology the backends' golden files render: every
// role more than once and every timing set, so each flag shows.
func GoldenTopology() cluster.Topology {
	d := func(s string) cluster.Duration {
		var v cluster.Duration
		_ = v.UnmarshalText([]byte(s))
		return v
	}
	return cluster.Topology{Name: "golden", Etcd: 3, APIServers: 2, Schedulers: 2, ControllerManagers: 2, Workers: 2,
		Timings: cluster.Timings{LeaseDuration: d("4s"), RenewDeadline: d("3s"), RetryPeriod: d("1s"),
			NodeMonitorGracePeriod: d("8s"), TolerationSeconds: d("10s"), EtcdCompactionInterval: d("1m")},
		Scheduler: cluster.SchedulerSpec{Extender: &cluster.ExtenderSpec{Filter: `node.labels["disk"] != "hdd"`, Weight: 2}},
	}.WithDefaults()
}
