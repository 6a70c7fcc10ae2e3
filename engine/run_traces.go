package engine

import (
	"context"
	"strings"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/report"
)

// DeploymentTrace is the chain of writes behind one Deployment.
type DeploymentTrace = report.Trace

// traces reads the trace of every Deployment the timeline saw created.
func traces(ctx context.Context, live assertions.View, tl []TimelineEvent) []DeploymentTrace {
	var out []DeploymentTrace
	for _, e := range tl {
		ref, ok := strings.CutPrefix(e.Subject, "Deployment ")
		if e.Kind != EventObject || !ok || e.Detail != "created" {
			continue
		}
		ns, name, _ := strings.Cut(ref, "/")
		t, err := live.Trace(ctx, ns, name)
		if err != nil || len(t.Hops) == 0 {
			continue
		}
		out = append(out, DeploymentTrace{Deployment: ref, Hops: t.Hops})
	}
	return out
}
