package app

import (
	"strings"
	"testing"
)

// TestCourseWorksOutsideACheckout: from a directory that is not a
// checkout, the listings show the whole shipped course and shipped names
// load, from the course in the binary.
func TestCourseWorksOutsideACheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"list"}, []string{"labs/02-etcd-leader-failover.yaml", "labs/docker/14-kube-proxy-iptables.yaml", "labs/embedded/scale-scheduling.yaml"}},
		{[]string{"drill", "list"}, []string{"etcd-leader.feature", "docker/cri.feature"}},
		{[]string{"exercise", "list"}, []string{"spread-replicas", "fix-dead-scheduler"}},
		{[]string{"list", "--topics"}, []string{"etcd-raft"}},
		{[]string{"validate", "labs/02-etcd-leader-failover.yaml", "labs/docker/"}, []string{"ok (etcd-leader-failover"}},
		{[]string{"exercise", "show", "exercises/pdb-drain"}, []string{"PodDisruptionBudget"}},
	} {
		out, code := run(t, tc.args...)
		for _, w := range tc.want {
			if code != ExitPassed || !strings.Contains(out, w) {
				t.Errorf("kubelab %s (outside a checkout): exit %d, want 0 and %q in:\n%s", strings.Join(tc.args, " "), code, w, out)
				break
			}
		}
	}
	if out, code := run(t, "exercise", "list", t.TempDir()); code != ExitInvalid || !strings.Contains(out, "no exercises") {
		t.Errorf("exercise list of an empty directory: exit %d\n%s", code, out)
	}
}
