package controlplane_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// normalize replaces what a backend may choose (addresses, ports, where
// files are) with placeholders, and drops the flags that follow from the
// kind of nodes (simulated nodes get their pod ranges from kubelab) or
// from a loopback address.
func normalize(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	url := regexp.MustCompile(`https://[^,:/]+:\d+`)
	file := regexp.MustCompile(`=(/[^/,]+)+/([^/,]+)$`)
	differs := regexp.MustCompile(`^--(endpoint-reconciler-type|allocate-node-cidrs|node-cidr-mask-size)=`)
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		a := strings.TrimSpace(line)
		if differs.MatchString(a) {
			continue
		}
		switch {
		case strings.HasPrefix(a, "--bind-address="), strings.HasPrefix(a, "--advertise-address="),
			strings.HasPrefix(a, "--secure-port="), strings.HasPrefix(a, "--data-dir="),
			strings.HasPrefix(a, "--kubelab-scheduling-log="):
			a, _, _ = strings.Cut(a, "=")
			a += "=<placed>"
		default:
			a = url.ReplaceAllString(a, "https://<addr>")
			a = file.ReplaceAllString(a, "=<dir>/$2")
		}
		out = append(out, a)
	}
	return out
}

// TestBackendsRenderOnePlan: both backends give every component the same
// arguments but for where things are. Each backend's golden file is
// written by its own TestControlPlaneGolden.
func TestBackendsRenderOnePlan(t *testing.T) {
	emb := normalize(t, "../embedded/testdata/controlplane.golden")
	dock := normalize(t, "../docker/testdata/controlplane.golden")
	if len(emb) != len(dock) {
		t.Fatalf("embedded renders %d lines, docker %d", len(emb), len(dock))
	}
	for i := range emb {
		if emb[i] != dock[i] {
			t.Errorf("line %d: embedded %q, docker %q", i+1, emb[i], dock[i])
		}
	}
	for _, want := range []string{"--proxy-client-cert-file=<dir>/front-proxy-client.crt", "--requestheader-client-ca-file=<dir>/front-proxy-ca.crt"} {
		found := false
		for _, l := range dock {
			found = found || l == want
		}
		if !found {
			t.Errorf("docker apiservers lack %s", want)
		}
	}
}
