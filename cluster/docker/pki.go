package docker

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
)

// pkiDir is the host directory whose files are copied to /pki in every
// container (certificates, keys, kubeconfigs, the kubelet configuration).
type pkiDir struct{ dir string }

func (p *pkiDir) path(name string) string { return filepath.Join(p.dir, name) }

// mount bind-mounts the directory read-only at /pki. (Copying its ~40
// files into each container was one Docker API call a file: seconds per
// container.)
func (p *pkiDir) mount(hc *container.HostConfig) {
	src, err := filepath.Abs(p.dir)
	if err != nil {
		src = p.dir
	}
	hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: src, Target: "/pki", ReadOnly: true})
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

// servingPort is the upstream secure port of a kube-scheduler (10259) or
// kube-controller-manager (10257) in its container.
func servingPort(component string) int {
	if strings.HasPrefix(component, string(cluster.RoleScheduler)) {
		return 10259
	}
	return 10257
}

// site is where the shared control-plane plan's components are in this
// backend: files under /pki, members and apiservers by name on the lab
// network, the upstream ports.
func (b *Backend) site() controlplane.Site {
	return controlplane.Site{
		Path: func(file string) string { return "/pki/" + file },
		Etcd: func(m string) controlplane.EtcdURLs {
			return controlplane.EtcdURLs{
				ListenClient: "https://0.0.0.0:2379", AdvertiseClient: "https://" + m + ":2379",
				ListenClientHTTP: "https://0.0.0.0:2382",
				ListenPeer:       "https://0.0.0.0:2380", AdvertisePeer: "https://" + m + ":2380",
				DataDir: "/var/lib/etcd",
			}
		},
		APIServer: func(string) controlplane.Serving {
			return controlplane.Serving{Bind: "0.0.0.0", Port: 6443, Advertise: "@HOST_IP@"}
		},
		Serving: func(n string) controlplane.Serving {
			return controlplane.Serving{Bind: "0.0.0.0", Port: servingPort(n)}
		},
		AuditLog:          func(string) string { return "/var/log/kubelab/audit.log" },
		SchedulingLog:     func(string) string { return "/var/log/kubelab/scheduling.jsonl" },
		Server:            b.server(),
		AllocateNodeCIDRs: true,
	}
}

// server is where components on the lab network reach the apiservers:
// the load balancer in front of several, the one apiserver directly (as
// on the embedded backend: a balancer in front of one would cost a
// container, its start and a hop on every request).
func (b *Backend) server() string {
	if b.topo.APIServers > 1 {
		return "https://" + string(cluster.RoleLoadBalancer) + ":6443"
	}
	return "https://" + controlplane.APIServers(b.topo)[0] + ":6443"
}

// pki writes the cluster's certificates and configurations.
func (b *Backend) pki() (*pkiDir, error) {
	p := &pkiDir{dir: filepath.Join(b.opts.Dir, "pki")}
	pk, err := controlplane.WritePKI(p.dir, b.topo)
	if err != nil {
		return nil, err
	}
	site := b.site()
	ids := []controlplane.Identity{controlplane.ControllerManager, controlplane.Scheduler, controlplane.KubeProxy}
	for _, n := range b.topo.Nodes {
		ids = append(ids, controlplane.Node(n.Name))
	}
	for _, id := range ids {
		if err := pk.Kubeconfig(id, site.Server, site); err != nil {
			return nil, err
		}
	}
	// A kubelet renews its lease every lease/4: with a shortened grace
	// period the lease shrinks too, or a healthy node goes Ready=Unknown
	// whenever one renewal is late (as embedded's kwok does).
	kc := kubeletConfig + "nodeLeaseDurationSeconds: " + strconv.Itoa(b.topo.Timings.NodeLeaseSeconds()) + "\n"
	if err := os.WriteFile(p.path("kubelet.yaml"), []byte(kc), 0o644); err != nil {
		return nil, err
	}
	if err := controlplane.WriteSchedulerConfig(p.dir, b.topo, site); err != nil {
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
