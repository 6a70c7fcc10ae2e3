package grade

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/api/v1alpha1"
)

// writeSubmission writes files (relative name -> content) into a new
// directory.
func writeSubmission(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const privilegedPod = `apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
  - name: shell
    image: busybox
    securityContext:
      privileged: true
`

const hostPathDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: logs
spec:
  selector: {matchLabels: {app: logs}}
  template:
    metadata: {labels: {app: logs}}
    spec:
      containers: [{name: tail, image: busybox}]
      volumes:
      - name: varlog
        hostPath: {path: /var/log}
`

func TestSubmissionRefusesPrivilegedAndHostPath(t *testing.T) {
	dir := writeSubmission(t, map[string]string{
		"pod.yaml":    privilegedPod,
		"deploy.yaml": hostPathDeployment,
	})
	sub, err := ReadSubmission(dir, &v1alpha1.Contract{Kinds: []string{"Pod", "Deployment"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Objects) != 0 {
		t.Errorf("accepted %d objects, want none: %+v", len(sub.Objects), sub.Objects)
	}
	want := []string{
		`deploy.yaml:1:1: Deployment default/logs: refused (host-path): volume "varlog" mounts hostPath "/var/log": hostPath volumes reach the node's filesystem and are never allowed in a submission`,
		`pod.yaml:1:1: Pod default/debug: refused (privileged): container "shell" sets securityContext.privileged: true`,
	}
	if len(sub.Refused) != len(want) {
		t.Fatalf("refused %d, want %d:\n%v", len(sub.Refused), len(want), sub.Refused)
	}
	for i, w := range want {
		if got := sub.Refused[i].Error(); !strings.HasPrefix(got, w) {
			t.Errorf("refusal %d:\n got %s\nwant %s...", i, got, w)
		}
	}
	if r := sub.Refused[1]; r.File != "pod.yaml" || r.Object != "Pod default/debug" || r.Rule != RulePrivileged {
		t.Errorf("refusal fields: %+v", r)
	}
}

func TestSubmissionRules(t *testing.T) {
	contract := &v1alpha1.Contract{Kinds: []string{"Deployment", "Service", "Pod", "PriorityClass", "Role"}, Namespaces: []string{"shop", "default"}, MaxObjects: 3}
	for _, tc := range []struct {
		name     string
		files    map[string]string
		rules    []string
		message  string // in the first refusal
		accepted []string
	}{{
		name:  "cluster-scoped kind not allowed",
		files: map[string]string{"crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: me-admin}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n"},
		rules: []string{RuleClusterScoped}, message: "crb.yaml:1:1: ClusterRoleBinding me-admin: refused (cluster-scoped): ClusterRoleBinding is cluster-scoped",
	}, {
		name:     "cluster-scoped kind allowed",
		files:    map[string]string{"pc.yaml": "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: critical, namespace: shop}\nvalue: 1000\n"},
		accepted: []string{"PriorityClass critical"},
	}, {
		name:  "namespace outside the contract",
		files: map[string]string{"svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: kube-system}\nspec: {ports: [{port: 80}]}\n"},
		rules: []string{RuleNamespace}, message: `Service kube-system/web: refused (namespace-not-allowed): namespace "kube-system" is not allowed by this exercise; allowed: shop, default`,
	}, {
		name:  "kind not allowed, and never allowed",
		files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: hook}\n"},
		rules: []string{RuleKind, RuleKind}, message: "a.yaml:1:1: ConfigMap shop/c: refused (kind-not-allowed): kind ConfigMap is not allowed by this exercise",
	}, {
		name:  "wrong API group for an allowed kind",
		files: map[string]string{"d.yaml": "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n"},
		rules: []string{RuleKind}, message: `apiVersion "extensions/v1beta1" is not the built-in Deployment (want apps/<version>)`,
	}, {
		name: "host namespaces, ports and capabilities",
		files: map[string]string{"p.yaml": `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  hostNetwork: true
  hostPID: true
  hostIPC: true
  initContainers:
  - name: init
    image: busybox
    securityContext: {capabilities: {add: [NET_BIND_SERVICE, SYS_ADMIN]}}
  containers:
  - name: app
    image: busybox
    ports: [{containerPort: 80, hostPort: 80}]
`},
		rules:   []string{RuleHostNetwork, RuleHostPID, RuleHostIPC, RuleCapabilities, RuleHostPort},
		message: "p.yaml:1:1: Pod shop/p: refused (host-network): spec.hostNetwork: true shares the node's network",
	}, {
		name:  "a name the API server would refuse, carrying terminal controls",
		files: map[string]string{"d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: \"x\\e[2K\\r\\e[32mPASSED\"}\n"},
		rules: []string{RuleName}, message: `refused (invalid-name): metadata.name "x\x1b[2K\r\x1b[32mPASSED" is not a valid name: a lowercase RFC 1123 subdomain`,
	}, {
		name:  "a workload that would flood the cluster",
		files: map[string]string{"d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 100000\n"},
		rules: []string{RuleReplicas}, message: "Deployment shop/web: refused (too-many-replicas): spec.replicas: 100000: at most 50 per workload",
	}, {
		name:  "duplicates and too many objects",
		files: map[string]string{"s.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: d}\n"},
		rules: []string{RuleDuplicate, RuleTooMany}, message: "s.yaml:5:1: Service shop/a: refused (duplicate): defined twice (first at s.yaml:1)",
		accepted: []string{"Service shop/a", "Service shop/b", "Service shop/c"},
	}, {
		name:  "broken YAML and objects without a name",
		files: map[string]string{"bad.yaml": "apiVersion: v1\nkind: Service\nmetadata: {}\n", "worse.yml": "kind: [\n"},
		rules: []string{RuleInvalid, RuleInvalid}, message: "bad.yaml:3:11: refused (invalid-manifest): document 1: missing metadata.name",
	}, {
		name: "workloads are applied after what they use, whatever the file order",
		files: map[string]string{
			"a-deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
			"b-role.yaml":   "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\n",
			"README.md":     "# my answer\n",
			"notes.txt":     "kubectl apply -f .\n",
		},
		accepted: []string{"Role shop/r", "Deployment shop/web"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := ReadSubmission(writeSubmission(t, tc.files), contract)
			if err != nil {
				t.Fatal(err)
			}
			var rules, accepted []string
			for _, r := range sub.Refused {
				rules = append(rules, r.Rule)
			}
			for _, o := range sub.Objects {
				accepted = append(accepted, o.Ref())
			}
			if !slices.Equal(rules, tc.rules) {
				t.Errorf("rules %v, want %v\n%v", rules, tc.rules, sub.Refused)
			}
			if !slices.Equal(accepted, tc.accepted) {
				t.Errorf("accepted %v, want %v", accepted, tc.accepted)
			}
			if tc.message != "" && (len(sub.Refused) == 0 || !strings.Contains(sub.Refused[0].Error(), tc.message)) {
				t.Errorf("first refusal %v, want it to contain %q", sub.Refused, tc.message)
			}
		})
	}
}

func TestSubmissionSymlinksAreNotFollowed(t *testing.T) {
	dir := writeSubmission(t, map[string]string{"ok.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"})
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(secret, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: leaked}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "x.yaml"), []byte("not: an object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub, err := ReadSubmission(dir, &v1alpha1.Contract{Kinds: []string{"Service"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Refused) != 1 || sub.Refused[0].File != "link.yaml" || sub.Refused[0].Rule != RuleFile {
		t.Fatalf("refused %v, want link.yaml refused by rule file", sub.Refused)
	}
	if len(sub.Objects) != 1 || sub.Objects[0].Name != "web" {
		t.Errorf("objects %+v, want only web", sub.Objects)
	}
	if _, err := ReadSubmission(filepath.Join(dir, "missing"), &v1alpha1.Contract{Kinds: []string{"Service"}}); err == nil {
		t.Errorf("a missing submission directory is not an error")
	}
}

// TestSubmissionReplicaLimitReadsNumbersAsTheAPIServerWill: the limit
// holds whatever numeric form a count is written in, for every field of
// every allowed kind that multiplies pods.
func TestSubmissionReplicaLimitReadsNumbersAsTheAPIServerWill(t *testing.T) {
	kinds := []string{"Deployment", "ReplicaSet", "StatefulSet", "ReplicationController", "Job", "CronJob", "HorizontalPodAutoscaler"}
	contract := &v1alpha1.Contract{Kinds: kinds}
	apiVersion := map[string]string{"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "ReplicationController": "v1",
		"Job": "batch/v1", "CronJob": "batch/v1", "HorizontalPodAutoscaler": "autoscaling/v2"}
	for _, tc := range []struct {
		name, file, kind, field, value string
		refused                        bool
	}{
		{"yaml int", "d.yaml", "Deployment", "spec.replicas", "200", true},
		{"yaml exponent", "d.yaml", "Deployment", "spec.replicas", "2e2", true},
		{"yaml float", "d.yaml", "Deployment", "spec.replicas", "150.0", true},
		{"yaml hex", "d.yaml", "Deployment", "spec.replicas", "0xC8", true},
		{"yaml octal", "d.yaml", "Deployment", "spec.replicas", "0o310", true},
		{"yaml plus sign", "d.yaml", "Deployment", "spec.replicas", "+200", true},
		{"yaml tagged string", "d.yaml", "Deployment", "spec.replicas", "!!int \"200\"", true},
		{"yaml huge", "d.yaml", "Deployment", "spec.replicas", "18446744073709551615", true},
		{"json float", "d.json", "Deployment", "spec.replicas", "150.0", true},
		{"json exponent", "d.json", "Deployment", "spec.replicas", "1.5E2", true},
		{"quoted number", "d.yaml", "Deployment", "spec.replicas", `"200"`, true},
		{"at the limit as a float", "d.yaml", "Deployment", "spec.replicas", "5e1", false},
		{"small", "d.yaml", "Deployment", "spec.replicas", "3.0", false},
		{"replicaset", "r.yaml", "ReplicaSet", "spec.replicas", "2e2", true},
		{"statefulset", "s.yaml", "StatefulSet", "spec.replicas", "150.0", true},
		{"replication controller", "rc.yaml", "ReplicationController", "spec.replicas", "1e3", true},
		{"job parallelism", "j.yaml", "Job", "spec.parallelism", "2e2", true},
		{"job completions", "j.json", "Job", "spec.completions", "150.0", true},
		{"cronjob parallelism", "c.yaml", "CronJob", "spec.jobTemplate.spec.parallelism", "2e2", true},
		{"cronjob completions", "c.yaml", "CronJob", "spec.jobTemplate.spec.completions", "1e2", true},
		{"hpa maxReplicas", "h.yaml", "HorizontalPodAutoscaler", "spec.maxReplicas", "1e3", true},
		{"hpa minReplicas", "h.yaml", "HorizontalPodAutoscaler", "spec.minReplicas", "60.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := strings.Split(tc.field, ".")
			var doc string
			if strings.HasSuffix(tc.file, ".json") {
				inner := fmt.Sprintf("%q: %s", path[len(path)-1], tc.value)
				for i := len(path) - 2; i >= 0; i-- {
					inner = fmt.Sprintf("%q: {%s}", path[i], inner)
				}
				doc = fmt.Sprintf(`{"apiVersion": %q, "kind": %q, "metadata": {"name": "w"}, %s}`, apiVersion[tc.kind], tc.kind, inner)
			} else {
				doc = fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: w}\n", apiVersion[tc.kind], tc.kind)
				for i, p := range path[:len(path)-1] {
					doc += strings.Repeat("  ", i) + p + ":\n"
				}
				doc += strings.Repeat("  ", len(path)-1) + path[len(path)-1] + ": " + tc.value + "\n"
			}
			sub, err := ReadSubmission(writeSubmission(t, map[string]string{tc.file: doc}), contract)
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, r := range sub.Refused {
				rules = append(rules, r.Rule)
			}
			switch {
			case tc.refused && (len(rules) != 1 || rules[0] != RuleReplicas):
				t.Errorf("%s: %s not refused by %s: refused %v, accepted %d\n%s", tc.field, tc.value, RuleReplicas, sub.Refused, len(sub.Objects), doc)
			case tc.refused && !strings.Contains(sub.Refused[0].Message, tc.field+":"):
				t.Errorf("refusal does not name %s: %s", tc.field, sub.Refused[0].Message)
			case !tc.refused && (len(rules) != 0 || len(sub.Objects) != 1):
				t.Errorf("%s: %s refused: %v\n%s", tc.field, tc.value, sub.Refused, doc)
			}
		})
	}
}
