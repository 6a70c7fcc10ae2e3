// Package docker is kubelab's container backend: every component runs in
// its own container through testcontainers-go, on one Docker network per
// cluster. Workers are real nodes: containerd, the kubelet and kube-proxy
// (iptables mode) with a CNI bridge and routes between nodes; the
// apiservers sit behind HAProxy. Containers, networks and volumes carry
// labels naming their cluster, so everything is found (and removed) from
// the world, with no hidden state file.
//
// Images are built locally (no registry is reachable): see BuildImages.
package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/internal/probe"
	"kubelab.dev/kubelab/cluster/pki"
)

// Labels on every container, network and volume of a cluster.
const (
	labelManaged   = "dev.kubelab.managed"
	labelCluster   = "dev.kubelab.cluster"
	labelComponent = "dev.kubelab.component"
	labelRole      = "dev.kubelab.role"
	labelOwner     = "dev.kubelab.owner"     // "<pid>:<start time>" of the process that made the cluster
	labelEphemeral = "dev.kubelab.ephemeral" // "true": the cluster dies with its owner
	labelDir       = "dev.kubelab.dir"       // the cluster's state directory on the host
	readyMarker    = "ready"                 // file in the state directory once a persistent up finished
)

func init() {
	// The reaper image cannot be pulled here; kubelab removes its own
	// containers by label (Down, Sweep). And testcontainers must dial the
	// daemon's published ports on localhost (it otherwise guesses a
	// gateway address because /.dockerenv exists on some hosts).
	setDefaultEnv("TESTCONTAINERS_RYUK_DISABLED", "true")
	setDefaultEnv("TESTCONTAINERS_HOST_OVERRIDE", "localhost")
	// kubelab reports progress itself.
	tclog.SetDefault(quiet{})
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func setDefaultEnv(k, v string) {
	if os.Getenv(k) == "" {
		os.Setenv(k, v)
	}
}

// Options configure a docker cluster.
type Options struct {
	// Dir is the cluster's state directory on the host (PKI, kubeconfig).
	Dir string
	// Binary is the kubelab binary put into the images.
	Binary string
	// Ephemeral clusters are removed by the next Sweep once their owner
	// process is gone.
	Ephemeral bool
	// OwnerStart is the owner's start time (for the owner label).
	OwnerStart string
	Log        *slog.Logger
}

// Backend is a cluster of containers.
type Backend struct {
	opts Options
	topo cluster.Topology
	cli  *client.Client

	mu      sync.Mutex
	netID   string
	netName string
	ctrs    map[string]*ctr // by component name
	access  cluster.Access
	ips     map[string]string // component -> address on the lab network
	images  Images
}

type ctr struct {
	name, role, id string
	ports          map[string]string // container port -> 127.0.0.1:hostport
	stopped        bool
}

// Available reports whether a Docker engine answers.
func Available(ctx context.Context) error {
	c, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Ping(ctx, client.PingOptions{})
	return err
}

// New prepares a docker cluster; Up creates it.
func New(t cluster.Topology, opts Options) (*Backend, error) {
	t = t.WithDefaults()
	if errs := t.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("topology: %w", errors.Join(errs...))
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	dc, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	return &Backend{opts: opts, topo: t, cli: dc.Client, ctrs: map[string]*ctr{}}, nil
}

// Name implements cluster.Backend.
func (b *Backend) Name() string { return "docker" }

// Topology implements cluster.Backend.
func (b *Backend) Topology() cluster.Topology { return b.topo }

// Access implements cluster.Backend.
func (b *Backend) Access() cluster.Access {
	b.mu.Lock()
	defer b.mu.Unlock()
	acc := b.access
	acc.EtcdEndpoints, acc.APIServers = map[string]string{}, map[string]string{}
	for k, v := range b.access.EtcdEndpoints {
		acc.EtcdEndpoints[k] = v
	}
	for k, v := range b.access.APIServers {
		acc.APIServers[k] = v
	}
	return acc
}

func (b *Backend) labels(component, role string) map[string]string {
	return map[string]string{labelManaged: "true", labelCluster: b.topo.Name, labelComponent: component, labelRole: role,
		labelOwner: fmt.Sprintf("%d:%s", os.Getpid(), b.opts.OwnerStart), labelEphemeral: strconv.FormatBool(b.opts.Ephemeral),
		labelDir: b.opts.Dir}
}

// Up implements cluster.Backend.
func (b *Backend) Up(ctx context.Context, progress func(cluster.Event)) (err error) {
	if progress == nil {
		progress = func(cluster.Event) {}
	}
	start := time.Now()
	say := func(comp, format string, args ...any) {
		progress(cluster.Event{Component: comp, Message: fmt.Sprintf(format, args...), Elapsed: time.Since(start)})
	}
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := b.Down(dctx); derr != nil {
				err = errors.Join(err, fmt.Errorf("clean up after failed up: %w", derr))
			}
		}
	}()
	say("images", "building or reusing images")
	b.images, err = BuildImages(ctx, b.cli, b.opts.Binary, func(s string) { say("images", "%s", s) })
	if err != nil {
		return err
	}
	if err := os.MkdirAll(b.opts.Dir, 0o700); err != nil {
		return err
	}
	if err := b.startReaper(); err != nil {
		return err
	}
	pk, err := b.pki()
	if err != nil {
		return err
	}
	say("network", "creating the lab network")
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(b.labels("network", "network")))
	if err != nil {
		return fmt.Errorf("create network: %w", err)
	}
	b.netID, b.netName = nw.ID, nw.Name

	// etcd
	var initial, servers []string
	for i := 1; i <= b.topo.Etcd; i++ {
		n := fmt.Sprintf("etcd-%d", i)
		initial = append(initial, fmt.Sprintf("%s=https://%s:2380", n, n))
		servers = append(servers, fmt.Sprintf("https://%s:2379", n))
	}
	var etcds []string
	for i := 1; i <= b.topo.Etcd; i++ {
		n := fmt.Sprintf("etcd-%d", i)
		etcds = append(etcds, n)
		cmd := []string{"component", "etcd", "--name=" + n, "--data-dir=/var/lib/etcd",
			"--listen-client-urls=https://0.0.0.0:2379", "--advertise-client-urls=https://" + n + ":2379",
			"--listen-peer-urls=https://0.0.0.0:2380", "--initial-advertise-peer-urls=https://" + n + ":2380",
			"--initial-cluster=" + strings.Join(initial, ","), "--initial-cluster-state=new", "--initial-cluster-token=" + b.topo.Name,
			"--client-cert-auth", "--trusted-ca-file=/pki/etcd-ca.crt", "--cert-file=/pki/" + n + ".crt", "--key-file=/pki/" + n + ".key",
			"--peer-client-cert-auth", "--peer-trusted-ca-file=/pki/etcd-ca.crt", "--peer-cert-file=/pki/" + n + ".crt", "--peer-key-file=/pki/" + n + ".key"}
		if err := b.run(ctx, n, cluster.RoleEtcd, b.images.Kubelab, cmd, pk, nil, nil); err != nil {
			return err
		}
	}
	// The host reaches etcd members and apiservers at their addresses on the
	// lab network (only the load balancer's port is published); their
	// certificates name "localhost" for that.
	etcdTLS, err := tlsConfig(pk.path("etcd-ca.crt"), pk.path("etcd-client.crt"), pk.path("etcd-client.key"))
	if err != nil {
		return err
	}
	b.access.EtcdTLS = etcdTLS
	b.access.EtcdDial = b.dialByName
	say("etcd", "waiting for Raft quorum and a leader")
	if err := waitFor(ctx, "etcd", func(ctx context.Context) error {
		for _, ep := range b.Access().EtcdEndpoints {
			if err := probe.EtcdLeader(ctx, ep, etcdTLS, b.dialByName); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return b.withLogs(ctx, err, etcds...)
	}

	// apiservers
	var apis []string
	for i := 1; i <= b.topo.APIServers; i++ {
		n := fmt.Sprintf("kube-apiserver-%d", i)
		apis = append(apis, n)
		cmd := []string{"component", "kube-apiserver", "--advertise-address=@HOST_IP@", "--secure-port=6443",
			"--etcd-servers=" + strings.Join(servers, ","), "--etcd-cafile=/pki/etcd-ca.crt",
			"--etcd-certfile=/pki/etcd-client.crt", "--etcd-keyfile=/pki/etcd-client.key",
			"--tls-cert-file=/pki/apiserver.crt", "--tls-private-key-file=/pki/apiserver.key", "--client-ca-file=/pki/ca.crt",
			"--kubelet-client-certificate=/pki/apiserver-kubelet-client.crt", "--kubelet-client-key=/pki/apiserver-kubelet-client.key",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=/pki/sa.pub", "--service-account-signing-key-file=/pki/sa.key",
			"--service-cluster-ip-range=10.96.0.0/16", "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
			"--allow-privileged=true", "--profiling=false"}
		cmd = append(cmd, b.topo.Timings.APIServerFlags()...)
		if err := b.run(ctx, n, cluster.RoleAPIServer, b.images.Kubelab, cmd, pk, nil, nil); err != nil {
			return err
		}
	}
	admin, err := tlsConfig(pk.path("ca.crt"), pk.path("admin.crt"), pk.path("admin.key"))
	if err != nil {
		return err
	}
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: admin}}
	say("kube-apiserver", "waiting for /readyz")
	if err := waitFor(ctx, "kube-apiserver", func(ctx context.Context) error {
		for _, u := range b.Access().APIServers {
			if err := probe.HTTPOK(ctx, httpc, u+"/readyz"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return b.withLogs(ctx, err, apis...)
	}

	// HAProxy in front of the apiservers; its port is the only way in.
	cfg := haproxyConfig(apis)
	if err := os.WriteFile(filepath.Join(b.opts.Dir, "haproxy.cfg"), []byte(cfg), 0o644); err != nil {
		return err
	}
	lbFiles := []testcontainers.ContainerFile{{HostFilePath: filepath.Join(b.opts.Dir, "haproxy.cfg"), ContainerFilePath: "/etc/haproxy/haproxy.cfg", FileMode: 0o644}}
	if err := b.runWith(ctx, "load-balancer", cluster.RoleLoadBalancer, b.images.Node, []string{"haproxy", "-W", "-db", "-f", "/etc/haproxy/haproxy.cfg"}, lbFiles, []string{"6443/tcp"}, []string{"/usr/bin/tini", "--"}, nil); err != nil {
		return err
	}
	lbURL := "https://" + b.ctrs["load-balancer"].ports["6443/tcp"]
	say("load-balancer", "waiting for /readyz through HAProxy")
	if err := waitFor(ctx, "load-balancer", func(ctx context.Context) error { return probe.HTTPOK(ctx, httpc, lbURL+"/readyz") }); err != nil {
		return b.withLogs(ctx, err, "load-balancer")
	}
	kc := filepath.Join(b.opts.Dir, "admin.kubeconfig")
	if err := pki.Kubeconfig(kc, "kubelab-"+b.topo.Name, lbURL, pk.path("ca.crt"), "kubelab-admin", pki.Pair{Cert: pk.path("admin.crt"), Key: pk.path("admin.key")}); err != nil {
		return err
	}
	if err := setServerName(kc, "localhost"); err != nil {
		return err
	}
	b.access.Kubeconfig = kc

	// Cluster DNS: CoreDNS in a container on the lab network, behind the
	// kube-dns Service (10.96.0.10, the kubelets' clusterDNS).
	say("coredns", "starting cluster DNS")
	if err := b.run(ctx, "coredns", cluster.RoleDNS, b.images.Kubelab, []string{"component", "coredns", "-conf", "/pki/Corefile"}, pk, nil, nil); err != nil {
		return err
	}
	if err := b.publishDNS(ctx); err != nil {
		return err
	}

	// controller-managers and schedulers talk to the LB by name.
	var rest []string
	for i := 1; i <= b.topo.ControllerManagers; i++ {
		n := fmt.Sprintf("kube-controller-manager-%d", i)
		rest = append(rest, n)
		cmd := append([]string{"component", "kube-controller-manager",
			"--kubeconfig=/pki/kube-controller-manager.kubeconfig", "--authentication-kubeconfig=/pki/kube-controller-manager.kubeconfig",
			"--authorization-kubeconfig=/pki/kube-controller-manager.kubeconfig", "--use-service-account-credentials=true",
			"--kube-api-qps=200", "--kube-api-burst=400",
			"--service-account-private-key-file=/pki/sa.key", "--root-ca-file=/pki/ca.crt",
			"--cluster-signing-cert-file=/pki/ca.crt", "--cluster-signing-key-file=/pki/ca.key",
			"--service-cluster-ip-range=10.96.0.0/16", "--cluster-cidr=10.244.0.0/16", "--allocate-node-cidrs=true", "--node-cidr-mask-size=24"},
			b.topo.Timings.ControllerManagerFlags()...)
		if err := b.run(ctx, n, cluster.RoleControllerManager, b.images.Kubelab, cmd, pk, nil, nil); err != nil {
			return err
		}
	}
	for i := 1; i <= b.topo.Schedulers; i++ {
		n := fmt.Sprintf("kube-scheduler-%d", i)
		rest = append(rest, n)
		cmd := append([]string{"component", "kube-scheduler", "--kubeconfig=/pki/kube-scheduler.kubeconfig",
			"--authentication-kubeconfig=/pki/kube-scheduler.kubeconfig", "--authorization-kubeconfig=/pki/kube-scheduler.kubeconfig"}, b.topo.Timings.LeaderElectionFlags()...)
		if err := b.run(ctx, n, cluster.RoleScheduler, b.images.Kubelab, cmd, pk, nil, nil); err != nil {
			return err
		}
	}

	// workers
	for _, node := range b.topo.Nodes {
		if err := b.startWorker(ctx, node, pk); err != nil {
			return err
		}
	}
	cs, err := b.clientset()
	if err != nil {
		return err
	}
	say("nodes", "waiting for %d node(s) to be Ready", len(b.topo.Nodes))
	if err := waitFor(ctx, "nodes", func(ctx context.Context) error {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && n.Spec.PodCIDR != "" {
					ready++
				}
			}
		}
		if ready != len(b.topo.Nodes) {
			return fmt.Errorf("%d of %d nodes Ready with a pod CIDR", ready, len(b.topo.Nodes))
		}
		return nil
	}); err != nil {
		names := append([]string{}, rest...)
		for _, n := range b.topo.Nodes {
			names = append(names, n.Name)
		}
		return b.withLogs(ctx, err, names...)
	}
	if err := b.SyncRoutes(ctx); err != nil {
		return err
	}
	say("cluster", "waiting for the default ServiceAccount")
	if err := waitFor(ctx, "default ServiceAccount", func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	if !b.opts.Ephemeral {
		// Handed over to the user: no longer an orphan when this process exits.
		if err := os.WriteFile(filepath.Join(b.opts.Dir, readyMarker), nil, 0o644); err != nil {
			return err
		}
	}
	say("cluster", "ready")
	return nil
}

// publishDNS makes the kube-dns Service and an EndpointSlice that points
// at the CoreDNS container.
func (b *Backend) publishDNS(ctx context.Context) error {
	ins, err := b.cli.ContainerInspect(ctx, b.get("coredns").id, client.ContainerInspectOptions{})
	if err != nil {
		return err
	}
	ep, ok := ins.Container.NetworkSettings.Networks[b.netName]
	if !ok || !ep.IPAddress.IsValid() {
		return fmt.Errorf("coredns has no address on %s", b.netName)
	}
	cs, err := b.clientset()
	if err != nil {
		return err
	}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	_, err = cs.CoreV1().Services("kube-system").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{
			{Name: "dns", Port: 53, Protocol: udp}, {Name: "dns-tcp", Port: 53, Protocol: tcp}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create kube-dns service: %w", err)
	}
	port, name, tname := int32(53), "dns", "dns-tcp"
	ready := true
	_, err = cs.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kube-dns-coredns", Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns", discoveryv1.LabelManagedBy: "kubelab"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ep.IPAddress.String()}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &udp}, {Name: &tname, Port: &port, Protocol: &tcp}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create kube-dns endpoints: %w", err)
	}
	return nil
}

func haproxyConfig(apis []string) string {
	var s strings.Builder
	s.WriteString("global\n  log stdout format raw local0\ndefaults\n  mode tcp\n  timeout connect 2s\n  timeout client 1h\n  timeout server 1h\n")
	s.WriteString("frontend apiserver\n  bind *:6443\n  default_backend apiservers\n")
	s.WriteString("backend apiservers\n  option httpchk GET /readyz\n  http-check expect status 200\n  balance roundrobin\n")
	for _, a := range apis {
		fmt.Fprintf(&s, "  server %s %s:6443 check check-ssl verify none inter 1s fall 2 rise 1\n", a, a)
	}
	return s.String()
}

// run starts a control-plane container with the PKI directory copied in.
func (b *Backend) run(ctx context.Context, name string, role cluster.Role, image string, cmd []string, pk *pkiDir, ports []string, mods func(*container.HostConfig)) error {
	return b.runWith(ctx, name, role, image, cmd, pk.files(), ports, nil, mods)
}

func (b *Backend) runWith(ctx context.Context, name string, role cluster.Role, image string, cmd []string, files []testcontainers.ContainerFile, ports, entrypoint []string, mods func(*container.HostConfig)) error {
	req := testcontainers.ContainerRequest{
		Image:          image,
		Name:           b.topo.Name + "-" + name,
		Cmd:            cmd,
		Entrypoint:     entrypoint,
		Labels:         b.labels(name, string(role)),
		Networks:       []string{b.netName},
		NetworkAliases: map[string][]string{b.netName: {name}},
		Files:          files,
		ExposedPorts:   ports,
		ConfigModifier: func(c *container.Config) { c.Hostname = name },
		HostConfigModifier: func(hc *container.HostConfig) {
			// Published ports only on loopback.
			for p, bs := range hc.PortBindings {
				for i := range bs {
					bs[i].HostIP = netipLoopback
				}
				hc.PortBindings[p] = bs
			}
			if mods != nil {
				mods(hc)
			}
		},
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if c != nil {
		b.mu.Lock()
		b.ctrs[name] = &ctr{name: name, role: string(role), id: c.GetContainerID(), ports: map[string]string{}}
		b.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	return b.refreshPorts(ctx, b.get(name))
}

// startWorker starts a node container: containerd, kubelet, kube-proxy.
func (b *Backend) startWorker(ctx context.Context, n cluster.NodeSpec, pk *pkiDir) error {
	kubelet := []string{"--config=/pki/kubelet.yaml", "--kubeconfig=/pki/" + n.Name + ".kubeconfig",
		"--node-ip=@HOST_IP@", "--hostname-override=" + n.Name}
	var labels []string
	for k, v := range n.Labels {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	if len(labels) > 0 {
		kubelet = append(kubelet, "--node-labels="+strings.Join(labels, ","))
	}
	var taints []string
	for _, t := range n.Taints {
		taints = append(taints, t.Key+"="+t.Value+":"+t.Effect)
	}
	if len(taints) > 0 {
		kubelet = append(kubelet, "--register-with-taints="+strings.Join(taints, ","))
	}
	proxy := []string{"--kubeconfig=/pki/kube-proxy.kubeconfig", "--proxy-mode=iptables", "--cluster-cidr=10.244.0.0/16",
		"--hostname-override=" + n.Name, "--conntrack-max-per-core=0",
		"--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0"}
	vol := b.topo.Name + "-" + n.Name + "-containerd"
	req := testcontainers.ContainerRequest{
		Image:          b.images.Node,
		Name:           b.topo.Name + "-" + n.Name,
		Labels:         b.labels(n.Name, string(cluster.RoleNode)),
		Networks:       []string{b.netName},
		NetworkAliases: map[string][]string{b.netName: {n.Name}},
		Files:          pk.files(),
		Env: map[string]string{
			"KUBELET_ARGS":    strings.Join(kubelet, " "),
			"KUBE_PROXY_ARGS": strings.Join(proxy, " "),
			"PATH":            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		},
		Tmpfs:          map[string]string{"/run": "rw", "/tmp": "rw"},
		ConfigModifier: func(c *container.Config) { c.Hostname = n.Name },
		HostConfigModifier: func(hc *container.HostConfig) {
			// --privileged fails here (no CAP_SYS_RESOURCE): grant the rest.
			hc.CapAdd = []string{"ALL"}
			hc.CapDrop = []string{"SYS_RESOURCE"}
			hc.SecurityOpt = []string{"seccomp=unconfined", "apparmor=unconfined"}
			hc.DeviceCgroupRules = []string{"a *:* rwm"}
			hc.CgroupnsMode = container.CgroupnsModePrivate
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Source: vol, Target: "/var/lib/containerd",
				VolumeOptions: &mount.VolumeOptions{Labels: b.labels(n.Name, "volume")}})
		},
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if c != nil {
		b.mu.Lock()
		b.ctrs[n.Name] = &ctr{name: n.Name, role: string(cluster.RoleNode), id: c.GetContainerID(), ports: map[string]string{}}
		b.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("start node %s: %w", n.Name, err)
	}
	return nil
}

var netipLoopback = netip.MustParseAddr("127.0.0.1")

func (b *Backend) clientset() (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", b.access.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// SyncRoutes makes every worker route every other worker's pod CIDR to
// that worker, so pods reach pods across nodes (the job a CNI like flannel
// host-gw does). It runs after up and after a node starts again.
func (b *Backend) SyncRoutes(ctx context.Context) error {
	cs, err := b.clientset()
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	type route struct{ cidr, via string }
	routes := map[string]route{}
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && n.Spec.PodCIDR != "" {
				routes[n.Name] = route{n.Spec.PodCIDR, a.Address}
			}
		}
	}
	var errs []error
	for name := range routes {
		c := b.get(name)
		if c == nil || c.stopped {
			continue
		}
		for other, r := range routes {
			if other == name {
				continue
			}
			if out, err := b.exec(ctx, c.id, "ip", "route", "replace", r.cidr, "via", r.via); err != nil {
				errs = append(errs, fmt.Errorf("route on %s to %s: %w: %s", name, other, err, out))
			}
		}
	}
	return errors.Join(errs...)
}

func (b *Backend) get(name string) *ctr {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctrs[name]
}

// exec runs a command in a container and returns its output.
func (b *Backend) exec(ctx context.Context, id string, cmd ...string) (string, error) {
	ex, err := b.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", err
	}
	att, err := b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", err
	}
	defer att.Close()
	var out bytes.Buffer
	_, _ = io.Copy(&out, att.Reader)
	ins, err := b.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	if err != nil {
		return out.String(), err
	}
	if ins.ExitCode != 0 {
		return out.String(), fmt.Errorf("%s exited %d", strings.Join(cmd, " "), ins.ExitCode)
	}
	return out.String(), nil
}

// withLogs adds the tail of each named container's log to err.
func (b *Backend) withLogs(ctx context.Context, err error, names ...string) error {
	var s strings.Builder
	for _, n := range names {
		c := b.get(n)
		if c == nil {
			continue
		}
		rc, lerr := b.cli.ContainerLogs(ctx, c.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "15"})
		if lerr != nil {
			continue
		}
		var buf bytes.Buffer
		_, _ = io.Copy(&buf, rc)
		rc.Close()
		fmt.Fprintf(&s, "\nlast lines of %s:\n%s", n, stripMux(buf.Bytes()))
	}
	return fmt.Errorf("%w%s", err, s.String())
}

// stripMux removes Docker's 8-byte stream headers from multiplexed logs.
func stripMux(b []byte) string {
	var out bytes.Buffer
	for len(b) >= 8 && (b[0] == 1 || b[0] == 2) {
		n := int(b[4])<<24 | int(b[5])<<16 | int(b[6])<<8 | int(b[7])
		b = b[8:]
		if n > len(b) {
			n = len(b)
		}
		out.Write(b[:n])
		b = b[n:]
	}
	out.Write(b)
	return out.String()
}

// Components implements cluster.Backend.
func (b *Backend) Components(ctx context.Context) ([]cluster.Component, error) {
	b.mu.Lock()
	cs := make([]*ctr, 0, len(b.ctrs))
	for _, c := range b.ctrs {
		cs = append(cs, c)
	}
	b.mu.Unlock()
	sort.Slice(cs, func(i, j int) bool { return order(cs[i]) < order(cs[j]) })
	acc := b.Access()
	out := make([]cluster.Component, 0, len(cs))
	for _, c := range cs {
		comp := cluster.Component{Name: c.name, Role: cluster.Role(c.role), ID: c.id[:12]}
		for _, p := range c.ports {
			comp.Endpoint = "https://" + p
		}
		if ep, ok := acc.EtcdEndpoints[c.name]; ok {
			comp.Endpoint = ep
		}
		if ep, ok := acc.APIServers[c.name]; ok {
			comp.Endpoint = ep
		}
		ins, err := b.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
		switch {
		case err != nil:
			comp.State = cluster.StateExited
		case ins.Container.State.Paused:
			comp.State = cluster.StatePaused
		case ins.Container.State.Running:
			comp.State, comp.PID = cluster.StateRunning, ins.Container.State.Pid
		case c.stopped:
			comp.State = cluster.StateStopped
		default:
			comp.State = cluster.StateExited
		}
		out = append(out, comp)
	}
	return out, nil
}

func order(c *ctr) string {
	rank := map[string]string{"etcd": "0", "kube-apiserver": "1", "load-balancer": "2", "kube-controller-manager": "3", "kube-scheduler": "4", "dns": "5", "node": "6"}
	return rank[c.role] + c.name
}

// Act implements cluster.Backend.
func (b *Backend) Act(ctx context.Context, name string, a cluster.Action) error {
	c := b.get(name)
	if c == nil {
		return fmt.Errorf("no component %q in cluster %s", name, b.topo.Name)
	}
	var err error
	switch a {
	case cluster.Kill:
		_, err = b.cli.ContainerKill(ctx, c.id, client.ContainerKillOptions{Signal: "KILL"})
		c.stopped = true
	case cluster.Stop:
		t := 20
		_, err = b.cli.ContainerStop(ctx, c.id, client.ContainerStopOptions{Timeout: &t})
		c.stopped = true
	case cluster.Start:
		_, err = b.cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{})
		if err == nil {
			c.stopped = false
			if c.role == string(cluster.RoleNode) {
				err = b.refreshPorts(ctx, c)
			}
		}
	case cluster.Restart:
		t := 20
		if _, err = b.cli.ContainerStop(ctx, c.id, client.ContainerStopOptions{Timeout: &t}); err == nil {
			_, err = b.cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{})
		}
	case cluster.Pause:
		_, err = b.cli.ContainerPause(ctx, c.id, client.ContainerPauseOptions{})
	case cluster.Resume:
		_, err = b.cli.ContainerUnpause(ctx, c.id, client.ContainerUnpauseOptions{})
	case cluster.Partition:
		err = b.Partition(ctx, name)
	case cluster.Heal:
		if err = b.Heal(ctx, name); err == nil && c.role == string(cluster.RoleNode) {
			go func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				_ = waitFor(rctx, "routes", b.SyncRoutes)
			}()
		}
	default:
		return fmt.Errorf("unknown action %q", a)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", a, name, err)
	}
	if a == cluster.Start || a == cluster.Restart {
		// A restarted container may get new published ports; a worker
		// needs its routes again (its IP may have changed).
		if err := b.refreshPorts(ctx, c); err != nil {
			return err
		}
		if c.role == string(cluster.RoleNode) {
			go func() { // the node must register again before routes can be computed
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				_ = waitFor(rctx, "routes", b.SyncRoutes)
			}()
		}
	}
	return nil
}

// Heal reconnects a partitioned component to the lab network under its name.
func (b *Backend) Heal(ctx context.Context, name string) error {
	c := b.get(name)
	if c == nil {
		return fmt.Errorf("no component %q", name)
	}
	_, err := b.cli.NetworkConnect(ctx, b.netID, client.NetworkConnectOptions{Container: c.id,
		EndpointConfig: &network.EndpointSettings{Aliases: []string{name}}})
	return err
}

func (b *Backend) refreshPorts(ctx context.Context, c *ctr) error {
	ins, err := b.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for p, bs := range ins.Container.NetworkSettings.Ports {
		if len(bs) > 0 {
			c.ports[p.String()] = "127.0.0.1:" + bs[0].HostPort
		}
	}
	ip := ""
	if ep, ok := ins.Container.NetworkSettings.Networks[b.netName]; ok && ep.IPAddress.IsValid() {
		ip = ep.IPAddress.String()
	}
	if ip == "" {
		return nil // not running, or partitioned: keep the last known address
	}
	if b.access.EtcdEndpoints == nil {
		b.access.EtcdEndpoints, b.access.APIServers = map[string]string{}, map[string]string{}
	}
	if b.ips == nil {
		b.ips = map[string]string{}
	}
	b.ips[c.name] = ip
	switch cluster.Role(c.role) {
	case cluster.RoleEtcd:
		// By name (the member's certificate names it); dialByName finds it.
		b.access.EtcdEndpoints[c.name] = "https://" + c.name + ":2379"
	case cluster.RoleAPIServer:
		b.access.APIServers[c.name] = "https://" + ip + ":6443"
	}
	return nil
}

// dialByName connects to "component:port" at the component's address on
// the lab network, which the host can reach but not resolve.
func (b *Backend) dialByName(ctx context.Context, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	ip, ok := b.ips[host]
	b.mu.Unlock()
	if ok {
		host = ip
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
}

// EtcdctlEnv points etcdctl at the members' addresses.
func (b *Backend) EtcdctlEnv() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var eps []string
	for n, ip := range b.ips {
		if strings.HasPrefix(n, "etcd-") {
			eps = append(eps, "https://"+ip+":2379")
		}
	}
	sort.Strings(eps)
	f := b.EtcdClientFiles()
	return map[string]string{"ETCDCTL_ENDPOINTS": strings.Join(eps, ","), "ETCDCTL_CACERT": f[0], "ETCDCTL_CERT": f[1], "ETCDCTL_KEY": f[2],
		// Members' certificates name them, not their addresses on the lab network.
		"ETCDCTL_INSECURE_SKIP_TLS_VERIFY": "true"}
}

// setServerName makes a kubeconfig verify the server as name.
func setServerName(path, name string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return err
	}
	for _, c := range cfg.Clusters {
		c.TLSServerName = name
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// Partition disconnects a component from the lab network; Heal reconnects it.
func (b *Backend) Partition(ctx context.Context, name string) error {
	c := b.get(name)
	if c == nil {
		return fmt.Errorf("no component %q", name)
	}
	_, err := b.cli.NetworkDisconnect(ctx, b.netID, client.NetworkDisconnectOptions{Container: c.id, Force: true})
	return err
}

// Down implements cluster.Backend: removes every container, volume and
// network labelled with the cluster's name, and the state directory.
func (b *Backend) Down(ctx context.Context) error {
	err := RemoveCluster(ctx, b.cli, b.topo.Name)
	return errors.Join(err, os.RemoveAll(b.opts.Dir))
}

// RemoveCluster removes everything labelled with a cluster's name.
func RemoveCluster(ctx context.Context, cli *client.Client, name string) error {
	f := client.Filters{}.Add("label", labelCluster+"="+name)
	return removeMatching(ctx, cli, f)
}

func removeMatching(ctx context.Context, cli *client.Client, f client.Filters) error {
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range cs.Items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err == nil {
		for _, v := range vs.Items {
			if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err == nil {
		for _, n := range ns.Items {
			if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Sweep removes the containers, volumes and networks of clusters whose
// owner process is gone (kubelab was killed with -9) while they were
// ephemeral or still booting, and with all set, of every kubelab cluster.
func Sweep(ctx context.Context, all bool) ([]string, error) {
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, err
	}
	defer dc.Close()
	cli := dc.Client
	if all {
		return nil, removeMatching(ctx, cli, client.Filters{}.Add("label", labelManaged+"=true"))
	}
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", labelOwner)})
	if err != nil {
		return nil, err
	}
	dead := map[string]bool{}
	for _, c := range cs.Items {
		if ownerAlive(c.Labels[labelOwner]) {
			continue
		}
		handedOver := false
		if c.Labels[labelEphemeral] != "true" {
			_, err := os.Stat(filepath.Join(c.Labels[labelDir], readyMarker))
			handedOver = err == nil
		}
		if !handedOver {
			dead[c.Labels[labelCluster]] = true
		}
	}
	var names []string
	var errs []error
	for n := range dead {
		names = append(names, n)
		errs = append(errs, RemoveCluster(ctx, cli, n))
	}
	for _, c := range cs.Items {
		if dead[c.Labels[labelCluster]] && c.Labels[labelDir] != "" {
			_ = os.RemoveAll(c.Labels[labelDir])
		}
	}
	return names, errors.Join(errs...)
}

func ownerAlive(owner string) bool {
	pidS, start, _ := strings.Cut(owner, ":")
	pid, err := strconv.Atoi(pidS)
	if err != nil {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && errors.Is(err, syscall.ESRCH) {
		return false
	}
	return start == "" || procStart(pid) == start
}

func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v)", what, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Open attaches to a running docker cluster by name, from its containers'
// labels and the state directory opts.Dir.
func Open(ctx context.Context, name string, opts Options) (*Backend, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	b := &Backend{opts: opts, cli: dc.Client, ctrs: map[string]*ctr{}}
	f := client.Filters{}.Add("label", labelCluster+"="+name)
	cs, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	if len(cs.Items) == 0 {
		return nil, fmt.Errorf("docker cluster %q: %w", name, ErrNotFound)
	}
	ns, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil || len(ns.Items) == 0 {
		return nil, fmt.Errorf("docker cluster %q: no network: %v", name, err)
	}
	b.netID, b.netName = ns.Items[0].ID, ns.Items[0].Name
	topo := cluster.Topology{Name: name}
	b.access = cluster.Access{Kubeconfig: filepath.Join(opts.Dir, "admin.kubeconfig"), EtcdEndpoints: map[string]string{}, APIServers: map[string]string{}}
	for _, c := range cs.Items {
		x := &ctr{name: c.Labels[labelComponent], role: c.Labels[labelRole], id: c.ID, ports: map[string]string{}, stopped: c.State != "running"}
		b.ctrs[x.name] = x
		if err := b.refreshPorts(ctx, x); err != nil {
			return nil, err
		}
		switch cluster.Role(x.role) {
		case cluster.RoleEtcd:
			topo.Etcd++
		case cluster.RoleAPIServer:
			topo.APIServers++
		case cluster.RoleScheduler:
			topo.Schedulers++
		case cluster.RoleControllerManager:
			topo.ControllerManagers++
		case cluster.RoleNode:
			topo.Nodes = append(topo.Nodes, cluster.NodeSpec{Name: x.name})
		}
	}
	sort.Slice(topo.Nodes, func(i, j int) bool { return topo.Nodes[i].Name < topo.Nodes[j].Name })
	b.topo = topo.WithDefaults()
	b.access.EtcdDial = b.dialByName
	pk := &pkiDir{dir: filepath.Join(opts.Dir, "pki")}
	if b.access.EtcdTLS, err = tlsConfig(pk.path("etcd-ca.crt"), pk.path("etcd-client.crt"), pk.path("etcd-client.key")); err != nil {
		return nil, fmt.Errorf("docker cluster %q: state directory %s: %w", name, opts.Dir, err)
	}
	return b, nil
}

// ErrNotFound is returned by Open for a cluster that does not exist.
var ErrNotFound = errors.New("no such cluster")
