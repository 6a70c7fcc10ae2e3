package docker

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
)

// run starts a control-plane container with the PKI directory copied in.
func (b *Backend) run(ctx context.Context, name string, role cluster.Role, image string, cmd []string, env map[string]string, pk *pkiDir, ports []string, mods func(*container.HostConfig)) error {
	return b.runWith(ctx, name, role, image, cmd, env, nil, ports, nil, func(hc *container.HostConfig) {
		pk.mount(hc)
		if mods != nil {
			mods(hc)
		}
	})
}

func (b *Backend) runWith(ctx context.Context, name string, role cluster.Role, image string, cmd []string, env map[string]string, files []testcontainers.ContainerFile, ports, entrypoint []string, mods func(*container.HostConfig)) error {
	req := testcontainers.ContainerRequest{
		Image:          image,
		Name:           b.objectName(name),
		Cmd:            cmd,
		Env:            env,
		Entrypoint:     entrypoint,
		Labels:         b.labels(name, string(role)),
		Networks:       []string{b.netName},
		NetworkAliases: map[string][]string{b.netName: {name}},
		Files:          files,
		ExposedPorts:   ports,
		ConfigModifier: func(c *container.Config) { c.Hostname = name },
		HostConfigModifier: func(hc *container.HostConfig) {
			// Published ports only on loopback. testcontainers merges these
			// bindings with ExposedPorts after this modifier (a port with
			// no binding would be published on every address).
			hc.PortBindings = loopbackBindings(ports)
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
	kubelet = append(kubelet, b.capacity[n.Name]...)
	mode := cmp.Or(n.ProxyMode, cluster.ProxyIPTables)
	proxy := []string{"--kubeconfig=/pki/kube-proxy.kubeconfig", "--proxy-mode=" + mode, "--cluster-cidr=" + controlplane.PodCIDR,
		"--hostname-override=" + n.Name, "--conntrack-max-per-core=0",
		"--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0"}
	vol := b.objectName(n.Name) + "-containerd"
	req := testcontainers.ContainerRequest{
		Image:          b.images.Node,
		Name:           b.objectName(n.Name),
		Labels:         b.labels(n.Name, string(cluster.RoleNode)),
		Networks:       []string{b.netName},
		NetworkAliases: map[string][]string{b.netName: {n.Name}},
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
			pk.mount(hc)
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

// loopbackBindings publishes each port ("6443/tcp") on 127.0.0.1 only, at
// a port the engine picks.
func loopbackBindings(ports []string) network.PortMap {
	m := network.PortMap{}
	for _, p := range ports {
		m[network.MustParsePort(p)] = []network.PortBinding{{HostIP: netipLoopback}}
	}
	return m
}

// fixedLoopbackBinding publishes port ("6443/tcp") on 127.0.0.1 at
// hostPort: the same at every start of the container.
func fixedLoopbackBinding(port string, hostPort int) network.PortMap {
	return network.PortMap{network.MustParsePort(port): []network.PortBinding{{HostIP: netipLoopback, HostPort: strconv.Itoa(hostPort)}}}
}

func (b *Backend) clientset() (kubernetes.Interface, error) {
	cfg, err := cluster.LoadRESTConfig(b.access.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// SyncRoutes makes every worker route every other worker's pod CIDR to
// that worker, so pods reach pods across nodes (the job a CNI like flannel
// host-gw does), and every apiserver route every pod CIDR, so it reaches
// the pods behind an APIService or a webhook (the apiservers run with
// --enable-aggregator-routing: they dial endpoints, as they have no
// kube-proxy). It runs after up and after a node or apiserver starts
// again. Each container gets all its routes in one exec, and every
// container at once: an exec costs ~0.25 s here, and one per route, one
// container after the other, took 3 s of an HA boot's 28.
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
	b.mu.Lock()
	ctrs := make([]*ctr, 0, len(b.ctrs))
	for _, c := range b.ctrs {
		ctrs = append(ctrs, c)
	}
	b.mu.Unlock()
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, c := range ctrs {
		role := cluster.Role(c.role)
		if c.stopped || role != cluster.RoleAPIServer && role != cluster.RoleNode {
			continue
		}
		var args []string // replace CIDR via GATEWAY, for every other node
		var batch strings.Builder
		for other, r := range routes {
			if other != c.name {
				args = append(args, "replace", r.cidr, "via", r.via)
				fmt.Fprintf(&batch, "route replace %s via %s\n", r.cidr, r.via)
			}
		}
		if len(args) == 0 {
			continue
		}
		wg.Go(func() {
			var out string
			var err error
			if role == cluster.RoleAPIServer { // FROM scratch: kubelab's own ip-route
				out, err = b.exec(ctx, c.id, append([]string{"/kubelab", "component", "ip-route"}, args...)...)
			} else {
				out, err = b.execStdin(ctx, c.id, strings.NewReader(batch.String()), "ip", "-batch", "-")
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("routes on %s: %w: %s", c.name, err, out))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (b *Backend) get(name string) *ctr {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctrs[name]
}

// exec runs a command in a container and returns its output (stdout
// and stderr, demultiplexed).
func (b *Backend) exec(ctx context.Context, id string, cmd ...string) (string, error) {
	return b.execStdin(ctx, id, nil, cmd...)
}

// withLogs adds the tail of each named container's log to err.
func (b *Backend) withLogs(ctx context.Context, err error, names ...string) error {
	var s strings.Builder
	for _, n := range names {
		rc, lerr := b.ComponentLog(ctx, n, cluster.LogOptions{Tail: 15})
		if lerr != nil {
			continue
		}
		text, _ := cluster.LastLines(rc, 15)
		rc.Close()
		fmt.Fprintf(&s, "\nlast lines of %s:\n%s", n, text)
	}
	return fmt.Errorf("%w%s", err, s.String())
}

// stripMux joins the stdout and stderr that Docker multiplexes in the
// logs and exec output of a container without a TTY (as all of kubelab's
// are).
func stripMux(b []byte) string {
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, bytes.NewReader(b)); err != nil {
		return string(b) // not multiplexed after all: as it came
	}
	return out.String()
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
	if b.access.Serving == nil {
		b.access.Serving = map[string]string{}
	}
	if b.ips == nil {
		b.ips = map[string]string{}
	}
	b.ips[c.name] = ip
	switch cluster.Role(c.role) {
	case cluster.RoleEtcd:
		// By name (the member's certificate names it); dialByName finds it.
		b.access.EtcdEndpoints[c.name] = "https://" + c.name + ":2379"
		b.access.Serving[c.name] = "https://" + ip + ":2382"
	case cluster.RoleAPIServer:
		b.access.APIServers[c.name] = "https://" + ip + ":6443"
	case cluster.RoleScheduler, cluster.RoleControllerManager:
		b.access.Serving[c.name] = "https://" + net.JoinHostPort(ip, strconv.Itoa(servingPort(c.name)))
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
