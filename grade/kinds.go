package grade

import (
	"sort"
	"strings"
)

// kindInfo is what the grader knows of a built-in kind without a cluster:
// its API group, whether it is namespaced, where its pod spec is, and
// when it is applied relative to the others.
type kindInfo struct {
	group      string
	namespaced bool
	// podSpec is the path of the pod spec in the object ("" = none).
	podSpec []string
	// order: lower is applied first (namespaces and classes before the
	// identities, configuration and workloads that use them).
	order int
	// never marks kinds a submission may never contain, whatever the
	// contract says: they reach outside the cluster (webhooks, aggregated
	// APIs) or change the cluster's machinery rather than a workload.
	never bool
}

var (
	podTemplate = []string{"spec", "template", "spec"}
	cronJobPod  = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	podItself   = []string{"spec"}
)

// builtinKinds are the kinds an exercise contract may name.
var builtinKinds = map[string]kindInfo{
	"Namespace":               {group: "", order: 0},
	"PriorityClass":           {group: "scheduling.k8s.io", order: 1},
	"RuntimeClass":            {group: "node.k8s.io", order: 1},
	"StorageClass":            {group: "storage.k8s.io", order: 1},
	"IngressClass":            {group: "networking.k8s.io", order: 1},
	"PersistentVolume":        {group: "", order: 1},
	"ClusterRole":             {group: "rbac.authorization.k8s.io", order: 2},
	"ClusterRoleBinding":      {group: "rbac.authorization.k8s.io", order: 3},
	"ServiceAccount":          {group: "", namespaced: true, order: 2},
	"Role":                    {group: "rbac.authorization.k8s.io", namespaced: true, order: 2},
	"RoleBinding":             {group: "rbac.authorization.k8s.io", namespaced: true, order: 3},
	"ResourceQuota":           {group: "", namespaced: true, order: 2},
	"LimitRange":              {group: "", namespaced: true, order: 2},
	"NetworkPolicy":           {group: "networking.k8s.io", namespaced: true, order: 2},
	"ConfigMap":               {group: "", namespaced: true, order: 4},
	"Secret":                  {group: "", namespaced: true, order: 4},
	"PersistentVolumeClaim":   {group: "", namespaced: true, order: 4},
	"Service":                 {group: "", namespaced: true, order: 5},
	"Ingress":                 {group: "networking.k8s.io", namespaced: true, order: 5},
	"PodDisruptionBudget":     {group: "policy", namespaced: true, order: 5},
	"Pod":                     {group: "", namespaced: true, podSpec: podItself, order: 6},
	"Deployment":              {group: "apps", namespaced: true, podSpec: podTemplate, order: 6},
	"ReplicaSet":              {group: "apps", namespaced: true, podSpec: podTemplate, order: 6},
	"StatefulSet":             {group: "apps", namespaced: true, podSpec: podTemplate, order: 6},
	"DaemonSet":               {group: "apps", namespaced: true, podSpec: podTemplate, order: 6},
	"ReplicationController":   {group: "", namespaced: true, podSpec: podTemplate, order: 6},
	"Job":                     {group: "batch", namespaced: true, podSpec: podTemplate, order: 6},
	"CronJob":                 {group: "batch", namespaced: true, podSpec: cronJobPod, order: 6},
	"HorizontalPodAutoscaler": {group: "autoscaling", namespaced: true, order: 7},

	"Node":                             {group: "", never: true},
	"CustomResourceDefinition":         {group: "apiextensions.k8s.io", never: true},
	"APIService":                       {group: "apiregistration.k8s.io", never: true},
	"MutatingWebhookConfiguration":     {group: "admissionregistration.k8s.io", never: true},
	"ValidatingWebhookConfiguration":   {group: "admissionregistration.k8s.io", never: true},
	"ValidatingAdmissionPolicy":        {group: "admissionregistration.k8s.io", never: true},
	"ValidatingAdmissionPolicyBinding": {group: "admissionregistration.k8s.io", never: true},
	"MutatingAdmissionPolicy":          {group: "admissionregistration.k8s.io", never: true},
	"MutatingAdmissionPolicyBinding":   {group: "admissionregistration.k8s.io", never: true},
	"CertificateSigningRequest":        {group: "certificates.k8s.io", never: true},
	"FlowSchema":                       {group: "flowcontrol.apiserver.k8s.io", never: true},
	"PriorityLevelConfiguration":       {group: "flowcontrol.apiserver.k8s.io", never: true},
}

// allowableKinds lists the kinds a contract may allow, sorted.
func allowableKinds() []string {
	var out []string
	for k, info := range builtinKinds {
		if !info.never {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// apiGroup is the group of an apiVersion ("apps/v1" -> "apps", "v1" -> "").
func apiGroup(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}
