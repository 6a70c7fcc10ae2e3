package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/internal/junit"
	"kubelab.dev/kubelab/internal/testbin"
)

// subset is what CI runs: quick specs (under 20 s each in the full run
// recorded in docs/conformance.md, where each passed) of what needs real
// nodes: logs and exec through the apiserver, a container's environment,
// cluster DNS, Services and pod networking across the workers, the
// apiserver's proxy, volumes, an admission webhook served by a pod, and
// an aggregated API served by a pod (the sample-apiserver image).
// It includes the two specs that found kubelab defects: the Service
// network leaking out of the nodes, and the apiserver's serving
// certificate not naming the address it advertises.
var subset = []string{
	"[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs [Conformance] [NodeConformance]",
	"[sig-node] Pods should support remote command execution over websockets [Conformance] [NodeConformance]",
	"[sig-node] ConfigMap should be consumable via the environment [Conformance] [NodeConformance]",
	"[sig-network] DNS should provide DNS for the cluster [Conformance]",
	"[sig-network] Services should serve a basic endpoint from pods [Conformance]",
	"[sig-network] Services should serve endpoints on same port and different protocols [Conformance]",
	"[sig-network] Networking Granular Checks: Pods should function for intra-pod communication: udp [Conformance] [NodeConformance]",
	"[sig-network] Proxy version v1 should proxy through a service and a pod [Conformance]",
	"[sig-storage] ConfigMap should be consumable from pods in volume [Conformance] [NodeConformance]",
	"[sig-api-machinery] AdmissionWebhook [Privileged:ClusterAdmin] should unconditionally reject operations on fail closed webhook [Conformance]",
	"[sig-auth] ServiceAccounts ServiceAccountIssuerDiscovery should support OIDC discovery of service account issuer [Conformance]",
	"[sig-api-machinery] Aggregator Should be able to support the 1.17 Sample API Server using the current Aggregator [LinuxOnly] [Conformance]",
}

// embeddedSubset is what CI runs on embedded (kwok) nodes: quick specs
// of hack/conformance/embedded-subset.txt's "run" lines: the API
// machinery (watch, CRDs, field validation, admission policies), the
// controllers' object behaviour (garbage collection, Deployments,
// StatefulSets, PodDisruptionBudgets and eviction), RBAC reviews and
// kubectl.
var embeddedSubset = []string{
	"[sig-api-machinery] Watchers should be able to restart watching from the last resource version observed by the previous watch [Conformance]",
	"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin] Simple CustomResourceDefinition creating/deleting custom resource definition objects works [Conformance]",
	"[sig-api-machinery] FieldValidation should detect unknown and duplicate fields of a typed object [Conformance]",
	"[sig-api-machinery] ValidatingAdmissionPolicy [Privileged:ClusterAdmin] should validate against a Deployment [Conformance]",
	"[sig-api-machinery] Garbage collector should delete RS created by deployment when not orphaning [Conformance]",
	"[sig-apps] Deployment RollingUpdateDeployment should delete old pods and create new ones [Conformance]",
	"[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should have a working scale subresource [Conformance]",
	"[sig-apps] DisruptionController should block an eviction until the PDB is updated to allow it [Conformance]",
	"[sig-auth] SubjectReview should support SubjectReview API operations [Conformance]",
	"[sig-cli] Kubectl client Kubectl describe should check if kubectl describe prints relevant information for rc and pods [Conformance]",
}

func TestConformanceSubsetOnDocker(t *testing.T) {
	t.Parallel() // the two subsets mostly wait on their clusters: side by side
	if testing.Short() {
		t.Skip("boots a docker cluster and runs upstream's e2e suite; skipped with -short")
	}
	if !enginetest.HaveDocker() {
		t.Skip("no Docker engine answers: the conformance subset needs docker nodes")
	}
	runSubset(t, "docker", subset)
}

func TestConformanceSubsetOnEmbedded(t *testing.T) {
	t.Parallel() // the two subsets mostly wait on their clusters: side by side
	if testing.Short() {
		t.Skip("boots a cluster and runs upstream's e2e suite; skipped with -short")
	}
	runSubset(t, "embedded", embeddedSubset)
}

// runSubset runs specs (full names, as the JUnit report gives them)
// through hack/conformance.sh on backend, and fails unless each passed
// and none failed or was skipped.
func runSubset(t *testing.T, backend string, specs []string) {
	t.Helper()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(specs))
	for i, s := range specs {
		quoted[i] = regexp.QuoteMeta(s)
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join("..", "conformance.sh"), backend, "--focus", strings.Join(quoted, "|"))
	cmd.Env = append(os.Environ(), "KUBELAB_BIN="+bin, "KUBELAB_CONFORMANCE_OUT="+out, "KUBELAB_HOME="+filepath.Join(out, "home"))
	b, err := cmd.CombinedOutput()
	t.Logf("hack/conformance.sh %s:\n%s", backend, tail(string(b), 40))
	s, rerr := junit.Read(filepath.Join(out, "junit.xml"))
	if rerr != nil {
		t.Fatalf("no report (script: %v): %v", err, rerr)
	}
	for _, f := range s.Failures {
		t.Errorf("failed: %s\n    %s", f.Name, f.First)
	}
	for _, f := range s.Skips {
		t.Errorf("skipped: %s\n    %s", f.Name, f.First)
	}
	ran := map[string]bool{}
	for _, p := range s.Passed {
		ran[p] = true
	}
	for _, want := range specs {
		if !ran[want] {
			t.Errorf("did not pass: %s", want)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("hack/conformance.sh: %v", err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
