package docker

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/testcontainers/testcontainers-go"

	"kubelab.dev/kubelab/cluster/pki"
)

// pkiDir is the host directory whose files are copied to /pki in every
// container (certificates, keys, kubeconfigs, the kubelet configuration).
type pkiDir struct{ dir string }

func (p *pkiDir) path(name string) string { return filepath.Join(p.dir, name) }

func (p *pkiDir) files() []testcontainers.ContainerFile {
	ents, _ := os.ReadDir(p.dir)
	var out []testcontainers.ContainerFile
	for _, e := range ents {
		out = append(out, testcontainers.ContainerFile{HostFilePath: p.path(e.Name()), ContainerFilePath: "/pki/" + e.Name(), FileMode: 0o644})
	}
	return out
}

const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: /pki/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
failSwapOn: false
protectKernelDefaults: true
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "0%", nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
resolvConf: ""
`

// corefile serves cluster.local from the Kubernetes API (no upstream
// resolvers: a lab cluster has no outside network).
const corefile = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /pki/coredns.kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
`

// pki writes the cluster's certificates and configurations.
func (b *Backend) pki() (*pkiDir, error) {
	p := &pkiDir{dir: filepath.Join(b.opts.Dir, "pki")}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, err
	}
	name := b.topo.Name
	ca, err := pki.NewCA(p.dir, "ca", "kubelab-"+name+"-ca")
	if err != nil {
		return nil, err
	}
	etcdCA, err := pki.NewCA(p.dir, "etcd-ca", "kubelab-"+name+"-etcd-ca")
	if err != nil {
		return nil, err
	}
	if _, err := pki.NewSigningKey(p.dir, "sa"); err != nil {
		return nil, err
	}
	local := []net.IP{net.ParseIP("127.0.0.1")}
	for i := 1; i <= b.topo.Etcd; i++ {
		n := fmt.Sprintf("etcd-%d", i)
		if _, err := etcdCA.Issue(p.dir, n, pki.Request{CommonName: n, DNSNames: []string{n, "localhost"}, IPs: local, Server: true, Client: true}); err != nil {
			return nil, err
		}
	}
	if _, err := etcdCA.Issue(p.dir, "etcd-client", pki.Request{CommonName: "kube-apiserver-etcd-client", Client: true}); err != nil {
		return nil, err
	}
	dns := []string{"localhost", "load-balancer", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	for i := 1; i <= b.topo.APIServers; i++ {
		dns = append(dns, fmt.Sprintf("kube-apiserver-%d", i))
	}
	if _, err := ca.Issue(p.dir, "apiserver", pki.Request{CommonName: "kube-apiserver", DNSNames: dns, IPs: append(local, net.ParseIP("10.96.0.1")), Server: true}); err != nil {
		return nil, err
	}
	issue := func(file string, r pki.Request) (pki.Pair, error) {
		r.Client = true
		return ca.Issue(p.dir, file, r)
	}
	if _, err := issue("apiserver-kubelet-client", pki.Request{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}); err != nil {
		return nil, err
	}
	if _, err := issue("admin", pki.Request{CommonName: "kubelab-admin", Organization: []string{"system:masters"}}); err != nil {
		return nil, err
	}
	const lb = "https://load-balancer:6443"
	kc := func(file string, r pki.Request) error {
		pair, err := issue(file, r)
		if err != nil {
			return err
		}
		// Paths inside the container.
		in := pki.Pair{Cert: "/pki/" + filepath.Base(pair.Cert), Key: "/pki/" + filepath.Base(pair.Key)}
		return pki.Kubeconfig(p.path(file+".kubeconfig"), "kubelab", lb, "/pki/ca.crt", r.CommonName, in)
	}
	for file, r := range map[string]pki.Request{
		// CoreDNS reads Services, EndpointSlices, Pods and Namespaces.
		"coredns":                 {CommonName: "system:coredns", Organization: []string{"system:masters"}},
		"kube-controller-manager": {CommonName: "system:kube-controller-manager"},
		"kube-scheduler":          {CommonName: "system:kube-scheduler"},
		"kube-proxy":              {CommonName: "system:kube-proxy"},
	} {
		if err := kc(file, r); err != nil {
			return nil, err
		}
	}
	for _, n := range b.topo.Nodes {
		if err := kc(n.Name, pki.Request{CommonName: "system:node:" + n.Name, Organization: []string{"system:nodes"}}); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(p.path("kubelet.yaml"), []byte(kubeletConfig), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.path("Corefile"), []byte(corefile), 0o644); err != nil {
		return nil, err
	}
	// Everything in /pki is readable inside containers (they run as root).
	return p, os.Chmod(p.dir, 0o755)
}

func tlsConfig(caPath, cert, key string) (*tls.Config, error) {
	b, err := os.ReadFile(caPath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, ServerName: "localhost"}, nil
}

// EtcdClientFiles returns the etcd CA, client certificate and key paths on
// the host (for etcdctl).
func (b *Backend) EtcdClientFiles() [3]string {
	p := &pkiDir{dir: filepath.Join(b.opts.Dir, "pki")}
	return [3]string{p.path("etcd-ca.crt"), p.path("etcd-client.crt"), p.path("etcd-client.key")}
}
