// Package pki makes the certificates and keys a lab cluster needs: a
// cluster CA and an etcd CA, serving certificates, one client identity per
// component, and the service-account signing key. It writes PEM files and
// kubeconfigs; it does not decide which component gets which (backends do).
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// CA is a certificate authority held in memory while a cluster is made.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// Path of the CA certificate file.
	Path string
}

// Pair is the paths of a certificate and its key.
type Pair struct{ Cert, Key string }

const validity = 10 * 365 * 24 * time.Hour

// NewCA makes a CA and writes dir/name.crt and dir/name.key.
func NewCA(dir, name, cn string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := Pair{Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}
	if err := write(p, der, key); err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, Path: p.Cert}, nil
}

// Request describes a leaf certificate.
type Request struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Server       bool
	Client       bool
}

// Issue signs a leaf certificate and writes dir/name.crt and dir/name.key.
func (ca *CA) Issue(dir, name string, r Request) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("generate %s key: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: r.CommonName, Organization: r.Organization},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     r.DNSNames,
		IPAddresses:  r.IPs,
	}
	if r.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if r.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return Pair{}, fmt.Errorf("sign %s: %w", name, err)
	}
	p := Pair{Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}
	return p, write(p, der, key)
}

// LoadCA reads a CA written by NewCA: prefix.crt and prefix.key.
func LoadCA(prefix string) (*CA, error) {
	kp, err := tls.LoadX509KeyPair(prefix+".crt", prefix+".key")
	if err != nil {
		return nil, fmt.Errorf("load CA %s: %w", prefix, err)
	}
	cert, err := x509.ParseCertificate(kp.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("load CA %s: %w", prefix, err)
	}
	key, ok := kp.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("load CA %s: its key cannot sign", prefix)
	}
	return &CA{Cert: cert, Key: key, Path: prefix + ".crt"}, nil
}

// Reissue signs a new server certificate with the names of the one at
// certPath plus ips, and writes dir/name.crt and dir/name.key.
func (ca *CA) Reissue(certPath, dir, name string, ips ...net.IP) (Pair, error) {
	certs, err := certutil.CertsFromFile(certPath)
	if err != nil {
		return Pair{}, err
	}
	old := certs[0]
	return ca.Issue(dir, name, Request{CommonName: old.Subject.CommonName, Organization: old.Subject.Organization,
		DNSNames: old.DNSNames, IPs: append(old.IPAddresses, ips...), Server: true})
}

// NewSigningKey writes a service-account signing key pair: dir/name.key
// (private) and dir/name.pub (public).
func NewSigningKey(dir, name string) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("generate %s: %w", name, err)
	}
	p := Pair{Cert: filepath.Join(dir, name+".pub"), Key: filepath.Join(dir, name+".key")}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return Pair{}, err
	}
	if err := os.WriteFile(p.Cert, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return Pair{}, fmt.Errorf("write %s: %w", p.Cert, err)
	}
	return p, writeKey(p.Key, key)
}

// Kubeconfig writes a kubeconfig at path (mode 0600) for server, trusting
// the CA and authenticating with the client pair.
func Kubeconfig(path, cluster, server, caPath, user string, client Pair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caPath}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: client.Cert, ClientKey: client.Key}
	cfg.Contexts[cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user}
	cfg.CurrentContext = cluster
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

func write(p Pair, der []byte, key crypto.Signer) error {
	if err := os.WriteFile(p.Cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p.Cert, err)
	}
	return writeKey(p.Key, key)
}

func writeKey(path string, key crypto.Signer) error {
	b, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}
