package embedded

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

var (
	syscallSIGSTOP = syscall.SIGSTOP
	syscallSIGCONT = syscall.SIGCONT
)

func signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// freePorts picks n distinct free ports on 127.0.0.1 below the kernel's
// ephemeral range (32768+), so outgoing connections never take them, and
// not in used (ports other clusters recorded but may not listen on yet).
func freePorts(n int, used map[int]bool) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for p := range used {
		seen[p] = true
	}
	for tries := 0; len(out) < n && tries < 5000; tries++ {
		p := 20000 + rand.IntN(12000)
		if seen[p] {
			continue
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		_ = l.Close()
		out = append(out, p)
	}
	if len(out) < n {
		return nil, fmt.Errorf("found only %d of %d free ports in 20000-32000", len(out), n)
	}
	return out, nil
}

// plan writes the PKI, kubeconfigs and kwok config, allocates ports and
// records how to start every component: the shared control-plane plan,
// placed as processes on 127.0.0.1. It picks no port in used.
func (b *Backend) plan(used map[int]bool) error {
	t := b.st.Topology
	dir := b.dir
	for _, d := range []string{filepath.Join(dir, "logs"), filepath.Join(dir, "data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	nports := 3*t.Etcd + t.APIServers + t.Schedulers + t.ControllerManagers + 1
	ports, err := freePorts(nports, used)
	if err != nil {
		return err
	}
	b.st.Ports = map[string]int{}
	for i, p := range ports {
		b.st.Ports[fmt.Sprint(i)] = p
	}
	next := func() int { p := ports[0]; ports = ports[1:]; return p }
	lay := newLayout(t, dir, next)
	site := lay.site
	pk, err := controlplane.WritePKI(filepath.Join(dir, "pki"), t)
	if err != nil {
		return err
	}
	b.st.Files = map[string]string{
		"ca": pk.Path(controlplane.CA), "etcd-ca": pk.Path(controlplane.EtcdCA),
		"etcd-client.crt": pk.Path(controlplane.EtcdClientCert), "etcd-client.key": pk.Path(controlplane.EtcdClientKey),
		"kubeconfig": filepath.Join(dir, "admin.kubeconfig"),
	}
	if err := pk.AdminKubeconfig(b.st.Files["kubeconfig"], b.name, site.Server); err != nil {
		return err
	}
	for _, id := range []controlplane.Identity{controlplane.ControllerManager, controlplane.Scheduler, controlplane.Kwok} {
		if err := pk.Kubeconfig(id, site.Server, site); err != nil {
			return err
		}
	}
	if err := controlplane.WriteSchedulerConfig(pk.Dir, t, site); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "scheduling"), 0o755); err != nil {
		return err
	}

	logf := func(name string) string { return filepath.Join(dir, "logs", name+".log") }
	add := func(p *procSpec) { b.st.Procs = append(b.st.Procs, p) }
	var apiAddrs []string
	for _, c := range controlplane.Components(t, site) {
		p := &procSpec{Name: c.Name, Role: string(c.Role), Log: logf(c.Name), Args: append([]string{"component", string(c.Role)}, c.Args...)}
		switch c.Role {
		case cluster.RoleEtcd:
			p.Endpoint, p.HTTP = lay.etcd[c.Name].AdvertiseClient, lay.etcd[c.Name].ListenClientHTTP
		case cluster.RoleAPIServer:
			if err := os.MkdirAll(filepath.Dir(auditLog(dir, c.Name)), 0o700); err != nil {
				return err
			}
			// Own UTS namespaces: distinct apiserver identity leases and
			// leader-election identities that name the instance.
			p.Endpoint, p.Hostname = lay.url(c.Name), c.Name
			apiAddrs = append(apiAddrs, strings.TrimPrefix(p.Endpoint, "https://"))
		default:
			p.Endpoint, p.Hostname = lay.url(c.Name), c.Name
		}
		add(p)
		if c.Role == cluster.RoleAPIServer && len(apiAddrs) == t.APIServers && t.APIServers > 1 {
			// L4 load balancer in front of the apiservers. One apiserver
			// is reached directly: a balancer in front of it would cost a
			// process, a hop on every request and a stage of the boot.
			// It checks /readyz but for the bootstrap hooks (see
			// lifecycle.ServingReadyz), four times a second: an apiserver
			// takes requests as soon as it can serve them.
			lbArgs := []string{"component", "kubelab-lb", "--listen=127.0.0.1:" + itoa(lay.lbPort),
				"--check-path=" + lifecycle.ServingReadyz, "--interval=250ms"}
			for _, a := range apiAddrs {
				lbArgs = append(lbArgs, "--backend="+a)
			}
			add(&procSpec{Name: "load-balancer", Role: string(cluster.RoleLoadBalancer), Endpoint: site.Server, Log: logf("load-balancer"), Args: lbArgs})
		}
	}
	return b.planNodes(pk.Path(controlplane.Kwok.Kubeconfig()), logf)
}

// layout is where the shared plan's components are in this backend:
// processes on 127.0.0.1, each on a port of its own, files in the
// cluster's directory.
type layout struct {
	site    controlplane.Site
	etcd    map[string]controlplane.EtcdURLs
	serving map[string]controlplane.Serving
	lbPort  int
}

// schedulingLog is where scheduler n of the cluster in dir records its
// decisions.
func schedulingLog(dir, n string) string { return filepath.Join(dir, "scheduling", n+".jsonl") }

// auditLog is where apiserver n of the cluster in dir writes its audit log.
func auditLog(dir, n string) string { return filepath.Join(dir, "audit", n, "audit.log") }

// url is where a component serves.
func (l layout) url(name string) string {
	return fmt.Sprintf("https://127.0.0.1:%d", l.serving[name].Port)
}

// newLayout takes the ports it needs from next, in a fixed order.
func newLayout(t cluster.Topology, dir string, next func() int) layout {
	url := func(port int) string { return fmt.Sprintf("https://127.0.0.1:%d", port) }
	l := layout{etcd: map[string]controlplane.EtcdURLs{}, serving: map[string]controlplane.Serving{}}
	for _, m := range controlplane.EtcdMembers(t) {
		client, peer := url(next()), url(next())
		l.etcd[m] = controlplane.EtcdURLs{ListenClient: client, AdvertiseClient: client, ListenPeer: peer, AdvertisePeer: peer,
			DataDir: filepath.Join(dir, "data", m)}
	}
	for _, n := range controlplane.APIServers(t) {
		l.serving[n] = controlplane.Serving{Bind: "127.0.0.1", Port: next(), Advertise: "127.0.0.1"}
	}
	for _, n := range append(controlplane.ControllerManagers(t), controlplane.Schedulers(t)...) {
		l.serving[n] = controlplane.Serving{Bind: "127.0.0.1", Port: next()}
	}
	l.lbPort = next()
	// Taken last, so the ports above stay where they were (a cluster
	// planned before these ports existed has none: next gives 0).
	for _, m := range controlplane.EtcdMembers(t) {
		if p := next(); p != 0 {
			u := l.etcd[m]
			u.ListenClientHTTP = url(p)
			l.etcd[m] = u
		}
	}
	server := url(l.lbPort)
	if t.APIServers == 1 {
		server = url(l.serving[controlplane.APIServers(t)[0]].Port)
	}
	l.site = controlplane.Site{
		Path:          func(file string) string { return filepath.Join(dir, "pki", file) },
		Etcd:          func(m string) controlplane.EtcdURLs { return l.etcd[m] },
		APIServer:     func(n string) controlplane.Serving { return l.serving[n] },
		Serving:       func(n string) controlplane.Serving { return l.serving[n] },
		Server:        server,
		AuditLog:      func(n string) string { return auditLog(dir, n) },
		SchedulingLog: func(n string) string { return schedulingLog(dir, n) },
	}
	return l
}

// Simulated nodes. One kwok controller heartbeats every node that has
// the label labelKubelet=kubeletRunning: a node taken down loses the label,
// kwok stops renewing its Lease and updating its status, and the real node
// lifecycle controller marks it NotReady, taints it and evicts its pods,
// as for a dead kubelet. One process serves any number of nodes (~22 MiB
// per node with a controller each).
const (
	labelKubelet   = "kubelab.dev/kubelet"
	kubeletRunning = "running"
	kubeletStopped = "stopped"
	// roleKwok is the kwok controller's role among the components.
	roleKwok = cluster.Role("kwok")
)

// planNodes records the kwok controller and one entry per simulated node.
func (b *Backend) planNodes(kubeconfig string, logf func(string) string) error {
	t := b.st.Topology
	stages := filepath.Join(b.dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o644); err != nil {
		return err
	}
	// kwok renews every lease/4 like a kubelet; with a shortened grace
	// period the lease must shrink too or healthy nodes would flap.
	lease := t.Timings.NodeLeaseSeconds()
	b.st.Procs = append(b.st.Procs, &procSpec{
		Name: "kwok", Role: string(roleKwok), Log: logf("kwok"),
		Args: []string{"component", "kwok", "--config=" + stages, "--kubeconfig=" + kubeconfig,
			"--manage-nodes-with-label-selector=" + labelKubelet + "=" + kubeletRunning,
			"--node-lease-duration-seconds=" + itoa(lease),
		},
	})
	for _, n := range t.Nodes {
		b.st.Procs = append(b.st.Procs, &procSpec{Name: n.Name, Role: string(cluster.RoleNode), Virtual: true})
	}
	return nil
}

// nodePodCIDR is node i's pod range, the (i+1)th /24 of the cluster's pod
// network (4,095 nodes fit); kwok allocates pod IPs from it.
func nodePodCIDR(i int) string {
	return netip.PrefixFrom(addIP(netip.MustParsePrefix(controlplane.PodCIDR).Addr(), (i+1)*256), 24).String()
}

// nodeIP is node i's InternalIP (virtual: nothing listens there).
func nodeIP(i int) string { return addIP(netip.MustParseAddr("10.89.0.0"), i+10).String() }

// addIP returns the IPv4 address n after a.
func addIP(a netip.Addr, n int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) + uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
