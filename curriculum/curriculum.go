// Package curriculum is the index of what kubelab teaches: the topics
// of the course material (shared seeds: control plane and architecture
// notes), each with the labs, drills and exercises that practise it. Labs
// and exercises name their topics in metadata.topics, drills in their
// Feature's tags (@rbac). It reads no files: callers hand it what they
// loaded.
package curriculum

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Topic is one topic of the course.
type Topic struct {
	// ID is what labs, drills and exercises name it by.
	ID string
	// Title says what it covers.
	Title string
}

// Topics are the course's topics, in the course's order.
var Topics = []Topic{
	{"apiserver-pipeline", "apiserver request pipeline: authn, authz, mutating admission, validation, validating admission, etcd, watch"},
	{"rbac", "RBAC: Role/ClusterRole, bindings, aggregated ClusterRoles, auth can-i"},
	{"admission", "admission: mutating defaults, ValidatingAdmissionPolicy, webhooks"},
	{"watch", "watch, resourceVersion, 410 Gone and relist, optimistic concurrency (409 Conflict)"},
	{"etcd-raft", "etcd Raft: leader failover, quorum loss, 3 vs 5 members, the /registry key layout"},
	{"etcd-backup", "etcd backup and restore: snapshot save, restore, compaction"},
	{"scheduler-framework", "scheduler framework: Filter reasons, Score per plugin, KubeSchedulerConfiguration weights, profiles"},
	{"affinity", "node affinity, pod affinity and anti-affinity, required vs preferred"},
	{"taints", "taints and tolerations: NoSchedule, PreferNoSchedule, NoExecute with tolerationSeconds"},
	{"priority", "PriorityClass and preemption"},
	{"controllers", "core controllers: Deployment rollout and rollback, ReplicaSet, Namespace deletion, ServiceAccount"},
	{"reconciliation", "level-triggered reconciliation: changes made while a controller is down are reconciled when it returns"},
	{"leader-election", "leader election with Leases: holder, leaseDuration/renewDeadline/retryPeriod, failover time"},
	{"node-failure", "node failure: NotReady after the grace period, taints, eviction, replacement"},
	{"apply-to-running", "kubectl apply to Running, hop by hop"},
	{"apiserver-down", "apiserver down: what keeps working, single vs HA, /healthz /livez /readyz"},
	{"ha-topology", "HA topology: stacked etcd (an etcd member on every control-plane node) vs external etcd, what each tolerates"},
	{"probes", "probes: liveness, readiness (endpoints), startup"},
	{"cri", "CRI and the pause sandbox"},
	{"kube-proxy", "kube-proxy: ClusterIP, NodePort, iptables chains; IPVS and nftables modes"},
	{"pdb-drain", "PodDisruptionBudget and drain"},
	{"jobs", "Job controller: completions, parallelism, backoffLimit, ttlSecondsAfterFinished"},
	{"resources", "requests, limits and QoS classes: what the scheduler reserves, what the kernel enforces (OOMKilled), LimitRange defaults and ResourceQuota"},
	{"control-plane-monitoring", "control-plane monitoring: the components' own metrics (apiserver requests, errors and latency; etcd leader changes and fsync; scheduler queues; controller work queues)"},
}

// Known reports whether id is a topic.
func Known(id string) bool {
	for _, t := range Topics {
		if t.ID == id {
			return true
		}
	}
	return false
}

// Material is one lab, drill or exercise and the topics it names.
type Material struct {
	// Kind is "lab", "drill" or "exercise".
	Kind string
	// Path of its file.
	Path string
	// Topics it practises.
	Topics []string
}

// Coverage is what practises one topic.
type Coverage struct {
	Topic
	Labs, Drills, Exercises []string
}

// Complete reports whether the topic has a lab and a drill.
func (c Coverage) Complete() bool { return len(c.Labs) > 0 && len(c.Drills) > 0 }

// Index sorts materials under the topics they name. A topic that is not
// in Topics is an error naming the file.
func Index(ms []Material) ([]Coverage, error) {
	by := map[string]*Coverage{}
	out := make([]Coverage, len(Topics))
	for i, t := range Topics {
		out[i] = Coverage{Topic: t}
		by[t.ID] = &out[i]
	}
	var bad []string
	for _, m := range ms {
		for _, id := range m.Topics {
			c, ok := by[id]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s: unknown topic %q", m.Path, id))
				continue
			}
			switch m.Kind {
			case "lab":
				c.Labs = append(c.Labs, m.Path)
			case "drill":
				c.Drills = append(c.Drills, m.Path)
			default:
				c.Exercises = append(c.Exercises, m.Path)
			}
		}
	}
	for i := range out {
		sort.Strings(out[i].Labs)
		sort.Strings(out[i].Drills)
		sort.Strings(out[i].Exercises)
	}
	if len(bad) > 0 {
		ids := make([]string, len(Topics))
		for i, t := range Topics {
			ids[i] = t.ID
		}
		return out, fmt.Errorf("%s (topics: %s)", strings.Join(bad, "; "), strings.Join(ids, ", "))
	}
	return out, nil
}

// Write prints the index as a table and a count of complete topics.
func Write(w io.Writer, cs []Coverage) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTOPIC\tLABS\tDRILLS\tEXERCISES")
	complete := 0
	list := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ", ")
	}
	for i, c := range cs {
		if c.Complete() {
			complete++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, c.ID, list(c.Labs), list(c.Drills), list(c.Exercises))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d/%d topics have a lab and a drill\n", complete, len(cs))
	return err
}
