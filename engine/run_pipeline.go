package engine

import (
	"context"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/report"
)

// PipelineStages are the apiserver's request pipeline in order: a refused
// request is drawn stopping at its stage.
var PipelineStages = report.PipelineStages

// PipelineRequest is a request the apiservers refused, with the stage of
// their request pipeline that stopped it and why (from the audit log).
type PipelineRequest = report.Request

// maxRefused bounds the refused requests a run keeps: the latest ones.
const maxRefused = 20

// refused lists the requests the apiservers refused since start, the
// latest maxRefused; none when the audit log is not read.
func refused(ctx context.Context, live assertions.View, start time.Time) []PipelineRequest {
	evs, err := live.Audit(ctx, map[string]any{})
	if err != nil {
		return nil
	}
	var out []PipelineRequest
	for _, a := range evs {
		if a.Refusal == "" || a.Time.Before(start) {
			continue
		}
		out = append(out, pipelineRequest(a))
	}
	if len(out) > maxRefused {
		out = out[len(out)-maxRefused:]
	}
	return out
}

// pipelineRequest is an audit event as the pipeline pictures draw it.
func pipelineRequest(a assertions.AuditEvent) PipelineRequest {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Name != "" {
		res += " " + a.Name
	}
	if a.Namespace != "" {
		res += " (" + a.Namespace + ")"
	}
	reason := a.Why
	if reason == "" {
		reason = a.Message
	}
	return PipelineRequest{Time: a.Time, User: a.User, Verb: a.Verb, Resource: res, Code: a.Code, Stage: a.Refusal, By: a.RefusedBy, Reason: reason}
}

// Refused lists the requests the apiservers refused since the session
// started (the latest ones; none without the audit log).
func (s *Session) Refused(ctx context.Context) []PipelineRequest {
	return refused(ctx, s.x.live, s.x.start)
}
