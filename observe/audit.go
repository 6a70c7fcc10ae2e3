// Package observe reads what real Kubernetes mechanisms record about a
// cluster as it works, one stream per source: today the apiservers' audit
// logs, the request pipeline seen from inside (who asked for what, the
// authorization decision and reason, what admission said, the response).
// It parses and classifies; it does not decide whether a lab passes.
package observe

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Stages a refused request stops at, as Refusal names them.
const (
	StageAuthentication = "authentication"
	StageAuthorization  = "authorization"
	StageAdmission      = "admission"
	StageValidation     = "validation"
)

// AuditEvent is one request as an apiserver's audit log saw it, flattened
// for expressions.
type AuditEvent struct {
	// APIServer that served the request.
	APIServer string `json:"apiserver" expr:"apiserver"`
	// ID is the request's audit ID.
	ID string `json:"id" expr:"id"`
	// Stage is the audit stage: ResponseComplete (or Panic).
	Stage string `json:"stage" expr:"stage"`
	// Verb: get, list, watch, create, update, patch, delete...
	Verb string `json:"verb" expr:"verb"`
	// URI of the request.
	URI string `json:"uri" expr:"uri"`
	// Resource, Subresource, Group, Namespace and Name of the object.
	Resource    string `json:"resource,omitempty" expr:"resource"`
	Subresource string `json:"subresource,omitempty" expr:"subresource"`
	Group       string `json:"group,omitempty" expr:"group"`
	Namespace   string `json:"namespace,omitempty" expr:"namespace"`
	Name        string `json:"name,omitempty" expr:"name"`
	// User is the authenticated username ("system:anonymous" when none).
	User string `json:"user" expr:"user"`
	// Groups of the user.
	Groups []string `json:"groups,omitempty" expr:"groups"`
	// Impersonator is who impersonated User (kubectl --as), if anyone.
	Impersonator string `json:"impersonator,omitempty" expr:"impersonator"`
	// UserAgent of the client (kubectl/..., kube-controller-manager/...).
	UserAgent string `json:"userAgent,omitempty" expr:"userAgent"`
	// Code is the HTTP status of the response.
	Code int `json:"code" expr:"code"`
	// Message is the response status's message (why it was refused).
	Message string `json:"message,omitempty" expr:"message"`
	// Reason is the response status's reason (Forbidden, Invalid...).
	Reason string `json:"reason,omitempty" expr:"reason"`
	// Decision and Why are the authorizer's: "allow" or "forbid", and its
	// reason (e.g. the RBAC binding that allowed it).
	Decision string `json:"decision,omitempty" expr:"decision"`
	Why      string `json:"why,omitempty" expr:"why"`
	// Annotations are every audit annotation (admission plugins and
	// policies write theirs here).
	Annotations map[string]string `json:"annotations,omitempty" expr:"annotations"`
	// Refusal is the pipeline stage that refused the request:
	// "authentication", "authorization", "admission", "validation", or ""
	// when it was not refused there.
	Refusal string `json:"refusal,omitempty" expr:"refusal"`
	// RefusedBy names what refused it when known: "RBAC",
	// "ValidatingAdmissionPolicy/<name>", "webhook/<name>", "PodSecurity".
	RefusedBy string `json:"refusedBy,omitempty" expr:"refusedBy"`
	// Object is the name of the object the response carries (a create
	// with generateName has no name in its request), Owners its owner
	// references as Kind/name, and Phase its status.phase (pods).
	Object string   `json:"object,omitempty" expr:"object"`
	Owners []string `json:"owners,omitempty" expr:"owners"`
	Phase  string   `json:"phase,omitempty" expr:"phase"`
	// Targets are what an EndpointSlice's endpoints point at (Pod/name).
	Targets []string `json:"targets,omitempty" expr:"targets"`
	// Time the request was received, and Latency until the response.
	Time    time.Time `json:"time" expr:"time"`
	Latency float64   `json:"latency" expr:"latency"` // seconds
}

// FromAudit flattens an upstream audit event.
func FromAudit(apiserver string, e *auditv1.Event) AuditEvent {
	a := AuditEvent{
		APIServer: apiserver, ID: string(e.AuditID), Stage: string(e.Stage), Verb: e.Verb, URI: e.RequestURI,
		User: e.User.Username, Groups: e.User.Groups, UserAgent: e.UserAgent,
		Annotations: e.Annotations, Time: e.RequestReceivedTimestamp.Time,
		Latency: e.StageTimestamp.Sub(e.RequestReceivedTimestamp.Time).Seconds(),
	}
	if u := e.ImpersonatedUser; u != nil {
		// The request acts as the impersonated user: that is who
		// authorization and admission judged.
		a.Impersonator, a.User, a.Groups = a.User, u.Username, u.Groups
	}
	if r := e.ObjectRef; r != nil {
		a.Resource, a.Subresource, a.Group, a.Namespace, a.Name = r.Resource, r.Subresource, r.APIGroup, r.Namespace, r.Name
	}
	if s := e.ResponseStatus; s != nil {
		a.Code, a.Message, a.Reason = int(s.Code), s.Message, string(s.Reason)
	}
	if o := e.ResponseObject; o != nil && len(o.Raw) > 0 {
		var obj struct {
			Metadata struct {
				Name            string `json:"name"`
				OwnerReferences []struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
			Endpoints []struct {
				TargetRef struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"targetRef"`
			} `json:"endpoints"`
		}
		if json.Unmarshal(o.Raw, &obj) == nil {
			a.Object, a.Phase = obj.Metadata.Name, obj.Status.Phase
			for _, r := range obj.Metadata.OwnerReferences {
				a.Owners = append(a.Owners, r.Kind+"/"+r.Name)
			}
			for _, ep := range obj.Endpoints {
				if ep.TargetRef.Name != "" {
					a.Targets = append(a.Targets, ep.TargetRef.Kind+"/"+ep.TargetRef.Name)
				}
			}
		}
	}
	if a.Object == "" {
		a.Object = a.Name
	}
	a.Decision = e.Annotations["authorization.k8s.io/decision"]
	a.Why = e.Annotations["authorization.k8s.io/reason"]
	a.Refusal, a.RefusedBy = refusal(a)
	return a
}

// Refusers named in a refusal's message by the admission steps that
// refused it.
var (
	refusedByPolicy  = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)'`)
	refusedByWebhook = regexp.MustCompile(`admission webhook "([^"]+)"`)
)

// refusal says which stage of the pipeline refused a request, and which
// admission step when it was admission, from what the apiserver recorded:
// authentication answers 401 before any authorizer runs; authorization
// writes its decision ("forbid"); admission refusals name their policy or
// webhook in the message (a ValidatingAdmissionPolicy's answers 422,
// others 403); what is left of a 422 is schema and field validation.
func refusal(a AuditEvent) (stage, by string) {
	switch {
	case a.Code < 400:
		return "", ""
	case a.Code == 401:
		return StageAuthentication, ""
	case a.Decision == "forbid":
		return StageAuthorization, "RBAC"
	}
	if m := refusedByPolicy.FindStringSubmatch(a.Message); m != nil {
		return StageAdmission, "ValidatingAdmissionPolicy/" + m[1]
	}
	if m := refusedByWebhook.FindStringSubmatch(a.Message); m != nil {
		return StageAdmission, "webhook/" + m[1]
	}
	if strings.Contains(a.Message, "violates PodSecurity") {
		return StageAdmission, "PodSecurity"
	}
	switch a.Code {
	case 403:
		return StageAdmission, ""
	case 422:
		return StageValidation, ""
	}
	return "", ""
}

// TailAudit reads the audit log at path as the apiserver appends to it
// (waiting for the file to appear), handing each event to fn, until ctx
// ends. It reads each line once: it wakes on file-system notifications,
// and every 250 ms at most otherwise.
func TailAudit(ctx context.Context, apiserver, path string, fn func(AuditEvent)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch audit log: %w", err)
	}
	defer w.Close()
	var f *os.File
	for f == nil {
		f, err = os.Open(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("open audit log: %w", err)
		}
		if f == nil && !sleep(ctx, w) {
			return nil
		}
	}
	defer f.Close()
	if err := w.Add(path); err != nil {
		return fmt.Errorf("watch audit log %s: %w", path, err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var partial []byte
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = append(partial, line...)
			partial = nil
			var e auditv1.Event
			if jerr := json.Unmarshal(line, &e); jerr == nil {
				fn(FromAudit(apiserver, &e))
			}
			continue
		}
		partial = append(partial, line...)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read audit log %s: %w", path, err)
		}
		if !sleep(ctx, w) {
			return nil
		}
	}
}

// sleep waits for a change to a watched file or 250 ms; false once ctx ends.
func sleep(ctx context.Context, w *fsnotify.Watcher) bool {
	t := time.NewTimer(250 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-w.Events:
	case <-w.Errors:
	case <-t.C:
	}
	return true
}
