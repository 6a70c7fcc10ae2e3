package cluster_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/pki"
)

// booted writes, at the same paths in dir every time, a new CA, a
// server certificate and an admin kubeconfig for a TLS server it starts:
// what a cluster removed and booted again under its name leaves there.
func booted(t *testing.T, dir string) string {
	t.Helper()
	ca, err := pki.NewCA(dir, "ca", "kubelab-same-name-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(dir, "apiserver", pki.Request{CommonName: "apiserver", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ca.Issue(dir, "admin", pki.Request{CommonName: "admin", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(srv.Cert, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"35","gitVersion":"v1.35.0"}`))
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.StartTLS()
	t.Cleanup(s.Close)
	path := filepath.Join(dir, "admin.kubeconfig")
	if err := pki.Kubeconfig(path, "same-name", s.URL, ca.Path, "admin", admin); err != nil {
		t.Fatal(err)
	}
	return path
}

// A cluster booted again under the same name is reached with its new
// authority, though the old one is at the same path (client-go keys its
// transports by file path, and re-reads a CA file every 5 minutes).
func TestLoadRESTConfigAfterTheSameNameBootsAgain(t *testing.T) {
	dir := t.TempDir()
	for boot := range 2 {
		if boot == 1 {
			for _, f := range []string{"ca.crt", "apiserver.crt", "admin.crt"} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}
		cfg, err := cluster.LoadRESTConfig(booted(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CAFile != "" || cfg.CertFile != "" || len(cfg.CAData) == 0 || len(cfg.CertData) == 0 {
			t.Fatalf("boot %d: files not inlined: CAFile %q CertFile %q", boot, cfg.CAFile, cfg.CertFile)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			t.Fatalf("boot %d: %v", boot, err)
		}
	}
}

func TestLoadRESTConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(path, []byte("clusters: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := cluster.LoadRESTConfig(path)
	if err == nil {
		t.Fatal("a broken kubeconfig loaded")
	}
	if got := err.Error(); !strings.Contains(got, path) {
		t.Errorf("error %q does not name %s", got, path)
	}
}
