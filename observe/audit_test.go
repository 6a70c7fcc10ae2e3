package observe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lines as kube-apiserver v1.37 wrote them for each kind of refusal.
const (
	listAllowed     = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/team/pods?limit=500","verb":"list","user":{"username":"system:serviceaccount:team:reader","groups":["system:serviceaccounts","system:serviceaccounts:team","system:authenticated"]},"userAgent":"kubectl/v1.37.2","objectRef":{"resource":"pods","namespace":"team","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T11:12:00.000000Z","stageTimestamp":"2026-12-01T11:12:00.004000Z","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"reader-reads-pods/team\" of Role \"pod-reader\" to ServiceAccount \"reader/team\""}}`
	deleteForbidden = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/team/pods/nope","verb":"delete","user":{"username":"system:serviceaccount:team:reader"},"objectRef":{"resource":"pods","namespace":"team","name":"nope","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"pods \"nope\" is forbidden: User \"system:serviceaccount:team:reader\" cannot delete resource \"pods\" in API group \"\" in the namespace \"team\"","reason":"Forbidden","code":403},"requestReceivedTimestamp":"2026-12-01T11:12:01.000000Z","stageTimestamp":"2026-12-01T11:12:01.001000Z","annotations":{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":""}}`
	policyDenied    = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"a3","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/team/deployments","verb":"create","user":{"username":"kubelab-admin","groups":["system:masters","system:authenticated"]},"objectRef":{"resource":"deployments","namespace":"team","name":"big","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-team' denied request: at most 5 replicas in team","reason":"Invalid","code":422},"requestReceivedTimestamp":"2026-12-01T11:12:02.000000Z","stageTimestamp":"2026-12-01T11:12:02.002000Z","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}`
	schemaInvalid   = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"a4","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/team/services","verb":"create","user":{"username":"kubelab-admin"},"objectRef":{"resource":"services","namespace":"team","name":"bad","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"Service \"bad\" is invalid: spec.ports[0].port: Invalid value: 99999: must be between 1 and 65535, inclusive","reason":"Invalid","code":422},"requestReceivedTimestamp":"2026-12-01T11:12:03.000000Z","stageTimestamp":"2026-12-01T11:12:03.001000Z","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}`
	unauthenticated = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a5","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/default/pods?limit=500","verb":"list","user":{},"objectRef":{"resource":"pods","namespace":"default","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401},"requestReceivedTimestamp":"2026-12-01T11:12:04.000000Z","stageTimestamp":"2026-12-01T11:12:04.000100Z"}`
	impersonated    = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a6","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/team/pods","verb":"list","user":{"username":"kubelab-admin","groups":["system:masters"]},"impersonatedUser":{"username":"system:serviceaccount:team:reader","groups":["system:serviceaccounts"]},"objectRef":{"resource":"pods","namespace":"team","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T11:12:05.000000Z","stageTimestamp":"2026-12-01T11:12:05.001000Z","annotations":{"authorization.k8s.io/decision":"allow"}}`
)

func TestTailAuditClassifiesEveryRefusal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	got := map[string]AuditEvent{}
	done := make(chan error, 1)
	go func() {
		done <- TailAudit(ctx, "kube-apiserver-1", path, func(e AuditEvent) {
			mu.Lock()
			got[e.ID] = e
			mu.Unlock()
		})
	}()
	// The file appears after the tail started, and lines arrive in pieces
	// as an apiserver appends them.
	time.Sleep(50 * time.Millisecond)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := []string{listAllowed, deleteForbidden, policyDenied, schemaInvalid, unauthenticated, impersonated}
	for _, l := range lines {
		half := len(l) / 2
		_, _ = f.WriteString(l[:half])
		time.Sleep(10 * time.Millisecond)
		_, _ = f.WriteString(l[half:] + "\n")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == len(lines) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, refusal, by, user string
		code                  int
	}{
		{"a1", "", "", "system:serviceaccount:team:reader", 200},
		{"a2", StageAuthorization, "RBAC", "system:serviceaccount:team:reader", 403},
		{"a3", StageAdmission, "ValidatingAdmissionPolicy/max-replicas", "kubelab-admin", 422},
		{"a4", StageValidation, "", "kubelab-admin", 422},
		{"a5", StageAuthentication, "", "", 401},
		{"a6", "", "", "system:serviceaccount:team:reader", 200},
	} {
		e, ok := got[tc.id]
		if !ok {
			t.Errorf("%s: not read", tc.id)
			continue
		}
		if e.Refusal != tc.refusal || e.RefusedBy != tc.by || e.User != tc.user || e.Code != tc.code {
			t.Errorf("%s: refusal %q by %q user %q code %d, want %q by %q user %q code %d", tc.id, e.Refusal, e.RefusedBy, e.User, e.Code, tc.refusal, tc.by, tc.user, tc.code)
		}
	}
	if e := got["a1"]; e.Decision != "allow" || len(e.Groups) != 3 || e.Latency <= 0 || e.APIServer != "kube-apiserver-1" {
		t.Errorf("allowed list: %+v", e)
	}
	if e := got["a6"]; e.Impersonator != "kubelab-admin" {
		t.Errorf("impersonated list: impersonator %q, want kubelab-admin", e.Impersonator)
	}
}

func TestTraceOrdersTheHopsOfADeployment(t *testing.T) {
	at := func(ms int) time.Time { return time.Date(2026, 12, 1, 11, 0, 0, ms*int(time.Millisecond), time.UTC) }
	ev := func(ms int, user, verb, resource, sub, name string, mod func(*AuditEvent)) AuditEvent {
		e := AuditEvent{Time: at(ms), User: user, Verb: verb, Resource: resource, Subresource: sub, Name: name, Object: name, Namespace: "default", Code: 200}
		if mod != nil {
			mod(&e)
		}
		return e
	}
	events := []AuditEvent{
		ev(0, "kubelab-admin", "create", "deployments", "", "web", func(e *AuditEvent) { e.Code = 201 }),
		ev(1, "kubelab-admin", "create", "deployments", "", "other", nil),
		ev(5, "system:serviceaccount:kube-system:deployment-controller", "create", "replicasets", "", "web-1", func(e *AuditEvent) { e.Owners = []string{"Deployment/web"} }),
		ev(6, "system:serviceaccount:kube-system:deployment-controller", "create", "replicasets", "", "other-1", func(e *AuditEvent) { e.Owners = []string{"Deployment/other"} }),
		ev(9, "system:serviceaccount:kube-system:replicaset-controller", "create", "pods", "", "", func(e *AuditEvent) { e.Object, e.Owners = "web-1-a", []string{"ReplicaSet/web-1"} }),
		ev(10, "system:kube-scheduler", "create", "pods", "binding", "web-1-a", nil),
		ev(12, "kubelab:kwok", "patch", "pods", "status", "web-1-a", func(e *AuditEvent) { e.Phase = "Pending" }),
		ev(15, "kubelab:kwok", "patch", "pods", "status", "web-1-a", func(e *AuditEvent) { e.Phase = "Running" }),
		ev(16, "kubelab:kwok", "patch", "pods", "status", "web-1-a", func(e *AuditEvent) { e.Phase = "Running" }),
		ev(20, "system:serviceaccount:kube-system:endpointslice-controller", "update", "endpointslices", "", "web-x", func(e *AuditEvent) { e.Targets = []string{"Pod/web-1-a"} }),
		ev(21, "system:serviceaccount:kube-system:endpointslice-controller", "update", "endpointslices", "", "other-x", func(e *AuditEvent) { e.Targets = []string{"Pod/other-1-a"} }),
	}
	c := NewChain(Trace(events, "default", "web"))
	if got, want := strings.Join(c.Kinds, ","), strings.Join(TraceKinds, ","); got != want {
		t.Fatalf("kinds %s, want %s", got, want)
	}
	if len(c.Hops) != 6 {
		t.Errorf("%d hops, want 6 (one running per pod, nothing of other): %+v", len(c.Hops), c.Hops)
	}
	if h := c.First["binding"]; h.Actor != "system:kube-scheduler" || h.Object != "pods/web-1-a/binding" || h.After != 0.010 {
		t.Errorf("binding hop: %+v", h)
	}
	if h := c.First["running"]; h.After != 0.015 {
		t.Errorf("running hop at +%vs, want +0.015s (the first Running status)", h.After)
	}
}
