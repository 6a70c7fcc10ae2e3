package controlplane

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/pki"
)

// Files of the plan. Member certificates are "<member>.crt" and
// "<member>.key"; an identity's kubeconfig is Identity.Kubeconfig().
const (
	CA                   = "ca.crt"
	CAKey                = "ca.key"
	EtcdCA               = "etcd-ca.crt"
	EtcdClientCert       = "etcd-client.crt"
	EtcdClientKey        = "etcd-client.key"
	FrontProxyCA         = "front-proxy-ca.crt"
	FrontProxyClientCert = "front-proxy-client.crt"
	FrontProxyClientKey  = "front-proxy-client.key"
	SAPublic             = "sa.pub"
	SAKey                = "sa.key"
	APIServerCert        = "apiserver.crt"
	APIServerKey         = "apiserver.key"
	KubeletClientCert    = "apiserver-kubelet-client.crt"
	KubeletClientKey     = "apiserver-kubelet-client.key"
	AdminCert            = "admin.crt"
	AdminKey             = "admin.key"
)

const frontProxyClientCN = "front-proxy-client"

// ServingCert and ServingKey name the serving certificate of a
// controller-manager or scheduler (component names one: its name). Each is
// issued by the cluster CA at plan time: without one the component
// generates a self-signed RSA certificate at every start, measured at
// 0.3-2 s of CPU when four of them start at once on two cores.
func ServingCert(component string) string { return component + "-serving.crt" }

// ServingKey is the key of ServingCert.
func ServingKey(component string) string { return component + "-serving.key" }

// Identity is a client of the apiservers with a certificate of its own.
type Identity struct {
	// File names the certificate, key and kubeconfig (File + ".crt", ...).
	File string
	// User is the certificate's common name: the username RBAC sees.
	User string
	// Groups are the certificate's organizations.
	Groups []string
	// ServiceAccount ("namespace/name") is set for an identity of pods:
	// it has no certificate, and RBAC binds the ServiceAccount.
	ServiceAccount string
}

// Kubeconfig is the identity's kubeconfig file name.
func (id Identity) Kubeconfig() string { return id.File + ".kubeconfig" }

// ServiceAccountName is the name part of the identity's ServiceAccount.
func (id Identity) ServiceAccountName() string {
	_, name, _ := strings.Cut(id.ServiceAccount, "/")
	return name
}

// The identities of the plan. None but the admin is in system:masters:
// each gets the upstream ClusterRole of its component, or a least-privilege
// one of kubelab's (see RBAC).
var (
	Admin             = Identity{File: "admin", User: "kubelab-admin", Groups: []string{"system:masters"}}
	ControllerManager = Identity{File: "kube-controller-manager", User: "system:kube-controller-manager"}
	Scheduler         = Identity{File: "kube-scheduler", User: "system:kube-scheduler"}
	KubeProxy         = Identity{File: "kube-proxy", User: "system:kube-proxy"}
	// Kwok simulates nodes (embedded backend).
	Kwok = Identity{File: "kwok", User: "kubelab:kwok"}
	// CoreDNS serves cluster DNS from the pods of the coredns Deployment;
	// User names its ClusterRole.
	CoreDNS = Identity{User: "system:coredns", ServiceAccount: "kube-system/coredns"}
)

// Node is the identity of a real node's kubelet.
func Node(name string) Identity {
	return Identity{File: name, User: "system:node:" + name, Groups: []string{"system:nodes"}}
}

// PKI is a cluster's certificate authorities, written to one directory.
type PKI struct {
	// Dir holds every file of the plan under its File name.
	Dir string
	ca  *pki.CA
}

// Path is where a file of the plan is in Dir.
func (p *PKI) Path(file string) string { return filepath.Join(p.Dir, file) }

// WritePKI makes the audit policy and the certificate authorities, keys and certificates of
// the control plane of a defaulted topology in dir: cluster, etcd and
// front-proxy CAs, the service-account key, one serving certificate per
// etcd member, controller-manager and scheduler, the apiservers' serving
// certificate, and the client
// certificates the apiservers use (etcd, kubelets, front proxy) and the
// admin's. Kubeconfigs are written by Kubeconfig.
func WritePKI(dir string, t cluster.Topology) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki dir: %w", err)
	}
	p := &PKI{Dir: dir}
	ca, err := pki.NewCA(dir, "ca", "kubelab-"+t.Name+"-ca")
	if err != nil {
		return nil, err
	}
	p.ca = ca
	etcdCA, err := pki.NewCA(dir, "etcd-ca", "kubelab-"+t.Name+"-etcd-ca")
	if err != nil {
		return nil, err
	}
	frontProxyCA, err := pki.NewCA(dir, "front-proxy-ca", "kubelab-"+t.Name+"-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	if _, err := pki.NewSigningKey(dir, "sa"); err != nil {
		return nil, err
	}
	// Members and apiservers are reached by name on a container network
	// and at 127.0.0.1 from the host.
	local := []net.IP{net.ParseIP("127.0.0.1")}
	type leaf struct {
		ca   *pki.CA
		file string
		req  pki.Request
	}
	var leaves []leaf
	for _, m := range EtcdMembers(t) {
		leaves = append(leaves, leaf{etcdCA, m, pki.Request{CommonName: m, DNSNames: []string{"localhost", m}, IPs: local, Server: true, Client: true}})
	}
	dns := []string{"localhost", "load-balancer", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	dns = append(dns, APIServers(t)...)
	leaves = append(leaves,
		leaf{etcdCA, "etcd-client", pki.Request{CommonName: "kube-apiserver-etcd-client", Client: true}},
		leaf{ca, "apiserver", pki.Request{CommonName: "kube-apiserver", DNSNames: dns, IPs: append(local, net.ParseIP(KubernetesServiceIP)), Server: true}},
		leaf{ca, "apiserver-kubelet-client", pki.Request{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}, Client: true}},
		leaf{frontProxyCA, "front-proxy-client", pki.Request{CommonName: frontProxyClientCN, Client: true}},
		leaf{ca, Admin.File, pki.Request{CommonName: Admin.User, Organization: Admin.Groups, Client: true}},
	)
	for _, n := range append(ControllerManagers(t), Schedulers(t)...) {
		leaves = append(leaves, leaf{ca, n + "-serving", pki.Request{CommonName: n, DNSNames: []string{"localhost", n}, IPs: local, Server: true}})
	}
	for _, l := range leaves {
		if _, err := l.ca.Issue(dir, l.file, l.req); err != nil {
			return nil, err
		}
	}
	return p, WriteAuditPolicy(dir)
}

// Kubeconfig issues a client certificate for id and writes its kubeconfig
// in Dir, reaching server and naming files as s.Path says (the paths the
// component will see).
func (p *PKI) Kubeconfig(id Identity, server string, s Site) error {
	if _, err := p.ca.Issue(p.Dir, id.File, pki.Request{CommonName: id.User, Organization: id.Groups, Client: true}); err != nil {
		return err
	}
	pair := pki.Pair{Cert: s.Path(id.File + ".crt"), Key: s.Path(id.File + ".key")}
	return pki.Kubeconfig(p.Path(id.Kubeconfig()), "kubelab", server, s.Path(CA), id.User, pair)
}

// AdminKubeconfig writes the admin's kubeconfig at path for a client on
// the host reaching server (the admin certificate is made by WritePKI).
func (p *PKI) AdminKubeconfig(path, clusterName, server string) error {
	pair := pki.Pair{Cert: p.Path(AdminCert), Key: p.Path(AdminKey)}
	return pki.Kubeconfig(path, "kubelab-"+clusterName, server, p.Path(CA), Admin.User, pair)
}

// OpenPKI reads no file: it names the PKI of an existing cluster's
// directory, for paths only (issuing needs WritePKI's authorities).
func OpenPKI(dir string) *PKI { return &PKI{Dir: dir} }
