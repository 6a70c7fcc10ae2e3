package embedded

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/pki"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

// Network settings shared by every embedded cluster (they are virtual: no
// traffic is routed to them).
const (
	serviceCIDR = "10.96.0.0/16"
	podCIDR     = "10.244.0.0/16"
)

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
// records how to start every component.
func (b *Backend) plan() error {
	t := b.st.Topology
	dir := b.dir
	pkiDir := filepath.Join(dir, "pki")
	for _, d := range []string{pkiDir, filepath.Join(dir, "logs"), filepath.Join(dir, "data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	nports := 2*t.Etcd + t.APIServers + t.Schedulers + t.ControllerManagers + 1
	ports, err := freePorts(nports, b.opts.Home.usedPorts())
	if err != nil {
		return err
	}
	b.st.Ports = map[string]int{}
	for i, p := range ports {
		b.st.Ports[fmt.Sprint(i)] = p
	}
	next := func() int { p := ports[0]; ports = ports[1:]; return p }
	files := map[string]string{}
	b.st.Files = files

	ca, err := pki.NewCA(pkiDir, "ca", "kubelab-"+b.name+"-ca")
	if err != nil {
		return err
	}
	etcdCA, err := pki.NewCA(pkiDir, "etcd-ca", "kubelab-"+b.name+"-etcd-ca")
	if err != nil {
		return err
	}
	files["ca"], files["ca.key"], files["etcd-ca"] = ca.Path, filepath.Join(pkiDir, "ca.key"), etcdCA.Path
	local := []net.IP{net.ParseIP("127.0.0.1")}
	frontProxyCA, err := pki.NewCA(pkiDir, "front-proxy-ca", "kubelab-"+b.name+"-front-proxy-ca")
	if err != nil {
		return err
	}
	frontProxy, err := frontProxyCA.Issue(pkiDir, "front-proxy-client", pki.Request{CommonName: "front-proxy-client", Client: true})
	if err != nil {
		return err
	}
	sa, err := pki.NewSigningKey(pkiDir, "sa")
	if err != nil {
		return err
	}
	etcdClient, err := etcdCA.Issue(pkiDir, "etcd-client", pki.Request{CommonName: "kube-apiserver-etcd-client", Client: true})
	if err != nil {
		return err
	}
	files["etcd-client.crt"], files["etcd-client.key"] = etcdClient.Cert, etcdClient.Key

	logf := func(name string) string { return filepath.Join(dir, "logs", name+".log") }
	add := func(p *procSpec) { b.st.Procs = append(b.st.Procs, p) }

	// etcd
	type member struct{ name, client, peer string }
	var members []member
	for i := 1; i <= t.Etcd; i++ {
		members = append(members, member{
			name:   fmt.Sprintf("etcd-%d", i),
			client: fmt.Sprintf("https://127.0.0.1:%d", next()),
			peer:   fmt.Sprintf("https://127.0.0.1:%d", next()),
		})
	}
	var initial, etcdServers []string
	for _, m := range members {
		initial = append(initial, m.name+"="+m.peer)
		etcdServers = append(etcdServers, m.client)
	}
	for _, m := range members {
		cert, err := etcdCA.Issue(pkiDir, m.name, pki.Request{CommonName: m.name, DNSNames: []string{"localhost", m.name}, IPs: local, Server: true, Client: true})
		if err != nil {
			return err
		}
		add(&procSpec{
			Name: m.name, Role: string(cluster.RoleEtcd), Endpoint: m.client, Log: logf(m.name),
			Args: []string{"component", "etcd",
				"--name=" + m.name,
				"--data-dir=" + filepath.Join(dir, "data", m.name),
				"--listen-client-urls=" + m.client, "--advertise-client-urls=" + m.client,
				"--listen-peer-urls=" + m.peer, "--initial-advertise-peer-urls=" + m.peer,
				"--initial-cluster=" + strings.Join(initial, ","),
				"--initial-cluster-state=new", "--initial-cluster-token=kubelab-" + b.name,
				"--client-cert-auth", "--trusted-ca-file=" + etcdCA.Path, "--cert-file=" + cert.Cert, "--key-file=" + cert.Key,
				"--peer-client-cert-auth", "--peer-trusted-ca-file=" + etcdCA.Path, "--peer-cert-file=" + cert.Cert, "--peer-key-file=" + cert.Key,
				"--snapshot-count=10000", "--log-level=info",
			},
		})
	}

	// kube-apiserver
	apiCert, err := ca.Issue(pkiDir, "apiserver", pki.Request{
		CommonName: "kube-apiserver", Server: true, IPs: append(local, net.ParseIP("10.96.0.1")),
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return err
	}
	tm := t.Timings
	var apiURLs []string
	for i := 1; i <= t.APIServers; i++ {
		name := fmt.Sprintf("kube-apiserver-%d", i)
		port := next()
		url := fmt.Sprintf("https://127.0.0.1:%d", port)
		apiURLs = append(apiURLs, url)
		args := []string{"component", "kube-apiserver",
			"--bind-address=127.0.0.1", "--secure-port=" + itoa(port), "--advertise-address=127.0.0.1",
			"--endpoint-reconciler-type=none",
			"--etcd-servers=" + strings.Join(etcdServers, ","),
			"--etcd-cafile=" + etcdCA.Path, "--etcd-certfile=" + etcdClient.Cert, "--etcd-keyfile=" + etcdClient.Key,
			"--tls-cert-file=" + apiCert.Cert, "--tls-private-key-file=" + apiCert.Key,
			"--client-ca-file=" + ca.Path,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + sa.Cert, "--service-account-signing-key-file=" + sa.Key,
			"--service-cluster-ip-range=" + serviceCIDR,
			"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
			"--allow-privileged=true", "--profiling=false",
			"--requestheader-client-ca-file=" + frontProxyCA.Path, "--requestheader-allowed-names=front-proxy-client",
			"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file=" + frontProxy.Cert, "--proxy-client-key-file=" + frontProxy.Key,
		}
		args = append(args, tm.APIServerFlags()...)
		add(&procSpec{Name: name, Role: string(cluster.RoleAPIServer), Endpoint: url, Log: logf(name), Hostname: name, Args: args})
	}

	// L4 load balancer in front of the apiservers (also with one apiserver,
	// so the address clients use never changes).
	lbPort := next()
	lbURL := fmt.Sprintf("https://127.0.0.1:%d", lbPort)
	lbArgs := []string{"component", "kubelab-lb", "--listen=127.0.0.1:" + itoa(lbPort)}
	for _, u := range apiURLs {
		lbArgs = append(lbArgs, "--backend="+strings.TrimPrefix(u, "https://"))
	}
	add(&procSpec{Name: "load-balancer", Role: string(cluster.RoleLoadBalancer), Endpoint: lbURL, Log: logf("load-balancer"), Args: lbArgs})

	// kubeconfigs: one identity per component.
	kc := func(file, user string, r pki.Request) (string, error) {
		r.Client = true
		pair, err := ca.Issue(pkiDir, file, r)
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, file+".kubeconfig")
		return path, pki.Kubeconfig(path, "kubelab-"+b.name, lbURL, ca.Path, user, pair)
	}
	admin, err := kc("admin", "kubelab-admin", pki.Request{CommonName: "kubelab-admin", Organization: []string{"system:masters"}})
	if err != nil {
		return err
	}
	files["kubeconfig"] = admin
	kcmKC, err := kc("kube-controller-manager", "system:kube-controller-manager", pki.Request{CommonName: "system:kube-controller-manager"})
	if err != nil {
		return err
	}
	schedKC, err := kc("kube-scheduler", "system:kube-scheduler", pki.Request{CommonName: "system:kube-scheduler"})
	if err != nil {
		return err
	}
	kwokKC, err := kc("kwok", "kubelab-kwok", pki.Request{CommonName: "kubelab-kwok", Organization: []string{"system:masters"}})
	if err != nil {
		return err
	}
	for i := 1; i <= t.ControllerManagers; i++ {
		name := fmt.Sprintf("kube-controller-manager-%d", i)
		port := next()
		args := append([]string{"component", "kube-controller-manager",
			"--kubeconfig=" + kcmKC, "--authentication-kubeconfig=" + kcmKC, "--authorization-kubeconfig=" + kcmKC,
			"--bind-address=127.0.0.1", "--secure-port=" + itoa(port),
			"--use-service-account-credentials=true",
			// Upstream 20 QPS makes KCM spend ~5 s minting per-controller
			// credentials at start and caps a Deployment at 20 pods/s.
			"--kube-api-qps=200", "--kube-api-burst=400",
			"--service-account-private-key-file=" + sa.Key, "--root-ca-file=" + ca.Path,
			"--cluster-signing-cert-file=" + ca.Path, "--cluster-signing-key-file=" + files["ca.key"],
			"--service-cluster-ip-range=" + serviceCIDR, "--cluster-cidr=" + podCIDR, "--allocate-node-cidrs=false",
		}, tm.ControllerManagerFlags()...)
		add(&procSpec{Name: name, Role: string(cluster.RoleControllerManager), Endpoint: fmt.Sprintf("https://127.0.0.1:%d", port), Log: logf(name), Hostname: name, Args: args})
	}
	for i := 1; i <= t.Schedulers; i++ {
		name := fmt.Sprintf("kube-scheduler-%d", i)
		port := next()
		args := append([]string{"component", "kube-scheduler",
			"--kubeconfig=" + schedKC, "--authentication-kubeconfig=" + schedKC, "--authorization-kubeconfig=" + schedKC,
			"--bind-address=127.0.0.1", "--secure-port=" + itoa(port),
		}, tm.LeaderElectionFlags()...)
		add(&procSpec{Name: name, Role: string(cluster.RoleScheduler), Endpoint: fmt.Sprintf("https://127.0.0.1:%d", port), Log: logf(name), Hostname: name, Args: args})
	}

	// Simulated nodes: one kwok controller per node.
	stages := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o644); err != nil {
		return err
	}
	// kwok renews every lease/4 like a kubelet; with a shortened grace
	// period the lease must shrink too or healthy nodes would flap.
	lease := 40
	if d := t.Timings.NodeLeaseDuration.Duration; d > 0 {
		lease = int(d / time.Second)
	} else if g := t.Timings.NodeMonitorGracePeriod.Duration; g > 0 && g < 40*time.Second {
		lease = max(4, int(g/time.Second))
	}
	for i, n := range t.Nodes {
		add(&procSpec{
			Name: n.Name, Role: string(cluster.RoleNode), Log: logf(n.Name),
			Args: []string{"component", "kwok", "--config=" + stages, "--kubeconfig=" + kwokKC,
				"--manage-single-node=" + n.Name,
				"--cidr=" + nodePodCIDR(i), "--node-ip=" + nodeIP(i),
				"--node-lease-duration-seconds=" + itoa(lease),
			},
		})
	}
	return nil
}

// nodePodCIDR is node i's pod range; kwok allocates pod IPs from it.
func nodePodCIDR(i int) string { return fmt.Sprintf("10.244.%d.0/24", i+1) }

// nodeIP is node i's InternalIP (virtual).
func nodeIP(i int) string { return fmt.Sprintf("10.89.0.%d", i+10) }
