package controlplane

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/cluster"
)

// SchedulerConfig is the file name of the schedulers' KubeSchedulerConfiguration.
const SchedulerConfig = "kube-scheduler.yaml"

// SchedulingLogFlag is the one kubelab flag of the kube-scheduler
// component: where the recording wrappers write the decisions (JSON lines
// of observe.Decision). The component takes it off before the upstream
// command parses its flags.
const SchedulingLogFlag = "--kubelab-scheduling-log"

// ExtenderFlag is the other kubelab flag of the kube-scheduler component:
// the lab's scheduler extender (spec.cluster.scheduler.extender, as JSON),
// which the component serves on its loopback and adds to its
// configuration's extenders (see package schedextender).
const ExtenderFlag = "--kubelab-extender"

// PluginPoints says which of the Filter and Score extension points an
// in-tree scheduler plugin implements, and whether its results can be
// recorded.
type PluginPoints struct {
	Filter, Score bool
	// Unrecorded plugins cannot have a second instance (DynamicResources
	// registers an informer index under a fixed name), so they are not
	// wrapped; a node they reject in a cycle where the pod fits nowhere is
	// still recorded, from the scheduler's own per-node statuses.
	Unrecorded bool
}

// SchedulerPlugins are kube-scheduler's in-tree plugins (v1.37,
// pkg/scheduler/framework/plugins/names) and whether each filters and
// scores. The scheduler component wraps the Filter and Score ones to
// record their results, and refuses to start if an instance does not
// implement what this table says, so the table cannot silently go stale.
var SchedulerPlugins = map[string]PluginPoints{
	"PrioritySort": {}, "DefaultBinder": {}, "DefaultPreemption": {}, "GangScheduling": {},
	"SchedulingGates": {}, "TopologyPlacementGenerator": {}, "PodGroupPodsCount": {},
	"DynamicResources":                {Filter: true, Score: true, Unrecorded: true},
	"ImageLocality":                   {Score: true},
	"InterPodAffinity":                {Filter: true, Score: true},
	"NodeAffinity":                    {Filter: true, Score: true},
	"NodeDeclaredFeatures":            {Filter: true},
	"NodeName":                        {Filter: true},
	"NodePorts":                       {Filter: true},
	"NodeResourcesBalancedAllocation": {Score: true},
	"NodeResourcesFit":                {Filter: true, Score: true},
	"NodeUnschedulable":               {Filter: true},
	"NodeVolumeLimits":                {Filter: true},
	"PodTopologySpread":               {Filter: true, Score: true},
	"DeferredPodScheduling":           {Filter: true},
	"TaintToleration":                 {Filter: true, Score: true},
	"VolumeBinding":                   {Filter: true, Score: true},
	"VolumeRestrictions":              {Filter: true},
	"VolumeZone":                      {Filter: true},
}

// SchedulerPluginNames lists SchedulerPlugins, sorted.
func SchedulerPluginNames() []string { return slices.Sorted(maps.Keys(SchedulerPlugins)) }

// SchedulerOwnedFields are the KubeSchedulerConfiguration fields kubelab
// sets itself; a lab's scheduler config may not set them.
var SchedulerOwnedFields = []string{"clientConnection", "leaderElection"}

// WriteSchedulerConfig writes the schedulers' KubeSchedulerConfiguration
// into dir: the lab's spec.cluster.scheduler.config (profiles, plugin
// weights, percentageOfNodesToScore...) with the client connection kubelab
// gives every scheduler. Leader election stays on the command line.
func WriteSchedulerConfig(dir string, t cluster.Topology, s Site) error {
	cfg := map[string]any{}
	maps.Copy(cfg, t.Scheduler.Config)
	cfg["apiVersion"] = "kubescheduler.config.k8s.io/v1"
	cfg["kind"] = "KubeSchedulerConfiguration"
	// Upstream 50 QPS binds ~52 pods/s with client-side throttling waits
	// of seconds (measured: 2,000 pods Running in 38 s, 14 s at 200).
	cfg["clientConnection"] = map[string]any{"kubeconfig": s.Path(Scheduler.Kubeconfig()), "qps": 200, "burst": 400}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("render scheduler config: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, SchedulerConfig), b, 0o644)
}
