package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestReissueAddsAnAddress: a re-issued serving certificate keeps the
// names of the one it replaces, adds the address, and verifies against
// the CA loaded back from its files.
func TestReissueAddsAnAddress(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	old, err := ca.Issue(dir, "apiserver", Request{CommonName: "kube-apiserver", DNSNames: []string{"kubernetes.default.svc"}, IPs: []net.IP{net.ParseIP("10.96.0.1")}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCA(filepath.Join(dir, "ca"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := loaded.Reissue(old.Cert, filepath.Join(dir, "own"), "apiserver", net.ParseIP("172.24.0.2"))
	if err == nil {
		t.Fatalf("re-issued into a missing directory: %+v", p)
	}
	if err := os.Mkdir(filepath.Join(dir, "own"), 0o700); err != nil {
		t.Fatal(err)
	}
	if p, err = loaded.Reissue(old.Cert, filepath.Join(dir, "own"), "apiserver", net.ParseIP("172.24.0.2")); err != nil {
		t.Fatal(err)
	}
	kp, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(kp.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, name := range []string{"172.24.0.2", "10.96.0.1", "kubernetes.default.svc"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if cert.Subject.CommonName != "kube-apiserver" {
		t.Errorf("common name %q", cert.Subject.CommonName)
	}
}
