package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
)

// apiOnly is a backend with no capability beyond the Kubernetes API.
type apiOnly struct{ cluster.Backend }

func (apiOnly) Name() string                       { return "api-only" }
func (apiOnly) Capabilities() []cluster.Capability { return nil }

func TestLabNeeds(t *testing.T) {
	for file, want := range map[string][]cluster.Capability{
		"../labs/01-apply-to-running.yaml":     {cluster.CapAuditLog},
		"../labs/02-etcd-leader-failover.yaml": {cluster.CapComponentFaults, cluster.CapEtcdRaft},
		"../labs/05-cordon-and-taints.yaml":    nil,
	} {
		lab, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		var got []cluster.Capability
		for k := range lab.Needs() {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s needs %v, want %v", file, got, want)
		}
		err = lab.CheckBackend(apiOnly{})
		if (len(want) == 0) != (err == nil) || (err != nil && !errors.Is(err, cluster.ErrMissingCapability)) {
			t.Errorf("%s on an API-only backend: %v", file, err)
		}
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), string(w)+" (") {
				t.Errorf("%s: refusal %v does not name %s and what needs it", file, err, w)
			}
		}
	}
}
