package docker

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

func byRole(plan []controlplane.Component, r cluster.Role) []controlplane.Component {
	var out []controlplane.Component
	for _, c := range plan {
		if c.Role == r {
			out = append(out, c)
		}
	}
	return out
}

// startAll starts components at once: their containers are independent
// (members find each other by name once they run).
func (b *Backend) startAll(ctx context.Context, pk *pkiDir, comps []controlplane.Component) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range comps {
		var mods func(*container.HostConfig)
		if c.Role == cluster.RoleEtcd {
			dir := b.etcdDir(c.Name)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			target := b.site().Etcd(c.Name).DataDir
			mods = func(hc *container.HostConfig) {
				hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: dir, Target: target})
			}
		}
		if c.Role == cluster.RoleAPIServer || c.Role == cluster.RoleScheduler {
			// The audit log and the scheduling decisions are written
			// straight to the host, where kubelab reads them.
			dir, err := filepath.Abs(b.logDir(c.Name))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			apiserver := c.Role == cluster.RoleAPIServer
			mods = func(hc *container.HostConfig) {
				hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: dir, Target: "/var/log/kubelab"})
				if apiserver {
					// SyncRoutes routes the pod CIDRs from inside: the
					// apiserver reaches pods behind APIServices and webhooks.
					hc.CapAdd = []string{"NET_ADMIN"}
				}
			}
		}
		ports := []string(nil)
		if c.Role == cluster.RoleAPIServer && b.apiPort != 0 {
			// The one apiserver is the way in from the host.
			ports = []string{apiPort}
			apiMods := mods
			mods = func(hc *container.HostConfig) {
				apiMods(hc)
				hc.PortBindings = fixedLoopbackBinding(apiPort, b.apiPort)
			}
		}
		var env map[string]string
		switch c.Role {
		case cluster.RoleControllerManager:
			env = map[string]string{controlplane.EnvWaitForAPIServer: "/pki/" + controlplane.ControllerManager.Kubeconfig()}
		case cluster.RoleScheduler:
			env = map[string]string{controlplane.EnvWaitForAPIServer: "/pki/" + controlplane.Scheduler.Kubeconfig()}
		case cluster.RoleAPIServer:
			env = map[string]string{controlplane.EnvServingCA: "/pki/ca"}
		}
		b.mu.Lock()
		if env[controlplane.EnvWaitForAPIServer] != "" && b.seeded {
			env[controlplane.EnvWaitReadyz] = lifecycle.ServingReadyz
			if c.Role == cluster.RoleControllerManager {
				// What the upstream controller-manager waits for first,
				// polling once a second: see lifecycle's startControllers.
				env[controlplane.EnvWaitReadyz] = "/healthz"
			}
		}
		b.mu.Unlock()
		g.Go(func() error {
			return b.run(gctx, c.Name, c.Role, b.images.Kubelab, append([]string{"component", string(c.Role)}, c.Args...), env, pk, ports, mods)
		})
	}
	return g.Wait()
}

// The docker backend is a lifecycle.Placement: the boot lifecycle decides
// the order, the methods below place containers.
var _ lifecycle.Placement = (*Backend)(nil)

// Prepare implements lifecycle.Placement: the node sizes, the images
// (built or reused), the state directory, the reaper, the PKI and the
// lab network.
func (b *Backend) Prepare(ctx context.Context, say lifecycle.Say) (lifecycle.Plan, error) {
	cpus, memory, err := b.machine(ctx)
	if err != nil {
		return lifecycle.Plan{}, err
	}
	if b.capacity, err = capacityFlags(b.topo.Nodes, cpus, memory); err != nil {
		return lifecycle.Plan{}, err
	}
	say("images", "building or reusing images")
	b.images, err = BuildImages(ctx, b.cli, b.opts.Binary, func(s string) { say("images", "%s", s) })
	if err != nil {
		return lifecycle.Plan{}, err
	}
	if err := b.claimDir(ctx); err != nil {
		return lifecycle.Plan{}, err
	}
	if err := b.startReaper(); err != nil {
		return lifecycle.Plan{}, err
	}
	if b.pk, err = b.pki(); err != nil {
		return lifecycle.Plan{}, err
	}
	etcdTLS, err := tlsConfig(b.pk.path(controlplane.EtcdCA), b.pk.path(controlplane.EtcdClientCert), b.pk.path(controlplane.EtcdClientKey))
	if err != nil {
		return lifecycle.Plan{}, err
	}
	// The host reaches etcd members and apiservers at their addresses on the
	// lab network (only the way in, the load balancer's port or the one
	// apiserver's, is published); their
	// certificates name "localhost" for that.
	b.mu.Lock()
	b.access.EtcdTLS = etcdTLS
	b.access.EtcdDial = b.dialByName
	b.mu.Unlock()
	say("network", "creating the lab network")
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(b.labels("network", "network")))
	if err != nil {
		return lifecycle.Plan{}, fmt.Errorf("create network: %w", err)
	}
	b.netID, b.netName = nw.ID, nw.Name
	t := b.topo
	plan := lifecycle.Plan{Etcd: controlplane.EtcdMembers(t), APIServers: controlplane.APIServers(t),
		ControllerManagers: controlplane.ControllerManagers(t), Schedulers: controlplane.Schedulers(t),
		// With two apiservers or more, the controllers' containers start
		// with theirs (a start takes a second or more), gated until an
		// apiserver is ready. With one, they start once it serves: their
		// starts then fill the second its bootstrap hooks sleep instead of
		// slowing its own start (usable 7.21 s against 7.68 s, medians of
		// 13 alternating boots; with HA they started later for no gain:
		// 14.8 s against 14.6 s). The controller-manager may then first
		// see its node NotReady (no pod range yet): with a node monitor
		// period of 1 s, the taint it sets costs at most that second.
		ControllersWait: t.APIServers > 1,
		// A kubelet registers its node NotReady, and turns it Ready once
		// the controller-manager gave it a pod range.
		NodesReportNotReady: true}
	if t.APIServers > 1 {
		plan.LoadBalancer = string(cluster.RoleLoadBalancer)
	} else if b.apiPort, err = freeLoopbackPort(); err != nil {
		return lifecycle.Plan{}, err
	}
	return plan, nil
}

// claimDir makes the cluster's state directory. A cluster of this name
// whose containers exist is refused with cluster.ErrExists, so that the
// failed boot removes nothing of it; a directory without containers is
// what a kubelab killed before it made any left, and is made anew.
func (b *Backend) claimDir(ctx context.Context) error {
	if _, err := os.Stat(b.opts.Dir); err == nil {
		cs, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: homeFilter(b.opts.Home, b.topo.Name)})
		if err != nil {
			return fmt.Errorf("docker cluster %q: %w", b.topo.Name, err)
		}
		if len(cs.Items) > 0 {
			return fmt.Errorf("cluster %q: %w (kubelab down --name %s)", b.topo.Name, cluster.ErrExists, b.topo.Name)
		}
		if err := os.RemoveAll(b.opts.Dir); err != nil {
			return err
		}
	}
	return os.MkdirAll(b.opts.Dir, 0o700)
}

// apiPort is the apiservers' port in their containers.
const apiPort = "6443/tcp"

// freeLoopbackPort is a port free on 127.0.0.1 now, for a container to
// publish at.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port for the apiserver: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start implements lifecycle.Placement: the control-plane containers and
// the load balancer at once, and the admin kubeconfig that reaches the
// balancer or the one apiserver.
func (b *Backend) Start(ctx context.Context, names ...string) error {
	plan := map[string]controlplane.Component{}
	for _, c := range controlplane.Components(b.topo, b.site()) {
		plan[c.Name] = c
	}
	var comps []controlplane.Component
	lb := false
	for _, n := range names {
		c, ok := plan[n]
		switch {
		case n == string(cluster.RoleLoadBalancer):
			lb = true
		case !ok:
			return fmt.Errorf("start %s: no such component in cluster %s", n, b.topo.Name)
		default:
			comps = append(comps, c)
		}
	}
	// HAProxy finds the apiservers by name when it connects, so it starts
	// with them.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.startAll(gctx, b.pk, comps) })
	if lb {
		g.Go(func() error { return b.startLB(gctx) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// The one apiserver is the way in: the admin kubeconfig names the port
	// it publishes.
	if i := slices.IndexFunc(comps, func(c controlplane.Component) bool { return c.Role == cluster.RoleAPIServer }); i >= 0 && b.apiPort != 0 {
		return b.writeAdmin(b.get(comps[i].Name).ports[apiPort])
	}
	return nil
}

// startLB puts HAProxy in front of several apiservers; its port is the
// only way in from the host. It writes the admin kubeconfig.
func (b *Backend) startLB(ctx context.Context) error {
	cfg := haproxyConfig(controlplane.APIServers(b.topo))
	if err := os.WriteFile(filepath.Join(b.opts.Dir, "haproxy.cfg"), []byte(cfg), 0o644); err != nil {
		return err
	}
	lbFiles := []testcontainers.ContainerFile{{HostFilePath: filepath.Join(b.opts.Dir, "haproxy.cfg"), ContainerFilePath: "/etc/haproxy/haproxy.cfg", FileMode: 0o644}}
	if err := b.runWith(ctx, "load-balancer", cluster.RoleLoadBalancer, b.images.Node, []string{"haproxy", "-W", "-db", "-f", "/etc/haproxy/haproxy.cfg"}, nil, lbFiles, []string{apiPort}, []string{"/usr/bin/tini", "--"}, lbSysctls); err != nil {
		return err
	}
	return b.writeAdmin(b.get("load-balancer").ports[apiPort])
}

// writeAdmin writes the admin kubeconfig, reaching the apiservers at
// hostPort ("127.0.0.1:port") on the host.
func (b *Backend) writeAdmin(hostPort string) error {
	kc := filepath.Join(b.opts.Dir, "admin.kubeconfig")
	if err := controlplane.OpenPKI(b.pk.dir).AdminKubeconfig(kc, b.topo.Name, "https://"+hostPort); err != nil {
		return err
	}
	if err := setServerName(kc, "localhost"); err != nil {
		return err
	}
	b.mu.Lock()
	b.access.Kubeconfig = kc
	b.mu.Unlock()
	return nil
}

// Failed implements lifecycle.Placement: a started container that is no
// longer running, with the tail of its log. Inspections are at most one
// per container every half second while all run, however many waits
// ask; one that exited is looked at again at the next ask (the boot may
// start it again).
func (b *Backend) Failed(ctx context.Context) error {
	b.failMu.Lock()
	defer b.failMu.Unlock()
	if time.Since(b.failAt) < 500*time.Millisecond {
		return nil
	}
	b.mu.Lock()
	cs := make([]*ctr, 0, len(b.ctrs))
	for _, c := range b.ctrs {
		if !c.stopped {
			cs = append(cs, c)
		}
	}
	b.mu.Unlock()
	for _, c := range cs {
		ins, err := b.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
		if err != nil {
			continue // a transient error of the engine is not a component's death
		}
		if st := ins.Container.State; st != nil && !st.Running && !st.Paused {
			return &lifecycle.Exited{Component: c.name, Err: b.withLogs(ctx, fmt.Errorf("%s exited while starting (exit code %d)", c.name, st.ExitCode), c.name)}
		}
	}
	b.failAt = time.Now()
	return nil
}

// The docker backend places its nodes early: a worker container needs
// seconds (containerd, its images) before its kubelet starts.
var _ lifecycle.EarlyNodes = (*Backend)(nil)

// StartNodes implements lifecycle.Placement: the workers run already
// (PlaceNodes); the images pods may use are marked as present.
func (b *Backend) StartNodes(ctx context.Context, cs kubernetes.Interface) error {
	return installPreload(ctx, cs)
}

// PlaceNodes implements lifecycle.EarlyNodes: every worker container
// starts at once (containerd, its images, then kube-proxy and the
// kubelet, which register the node once an apiserver serves).
func (b *Backend) PlaceNodes(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, node := range b.topo.Nodes {
		g.Go(func() error { return b.startWorker(gctx, node, b.pk) })
	}
	return g.Wait()
}

// NodesUsable implements lifecycle.NodesUsable: routes between the nodes'
// pod ranges (each has one once usable), while the boot waits for the
// DNS addon (it took 0.2-0.9 s, after every other wait).
func (b *Backend) NodesUsable(ctx context.Context) error { return b.SyncRoutes(ctx) }

// Ready implements lifecycle.Placement: the cluster is handed over to the
// user unless ephemeral.
func (b *Backend) Ready(ctx context.Context) error {
	if !b.opts.Ephemeral {
		// Handed over to the user: no longer an orphan when this process exits.
		return os.WriteFile(filepath.Join(b.opts.Dir, readyMarker), nil, 0o644)
	}
	return nil
}

// haproxyConfig balances TCP over the apiservers. A new connection must
// never wait on a dead apiserver (a killed container's address never
// answers, so connecting to it times out rather than being refused):
//   - connecting times out fast (the lab network is one bridge) and a failed
//     connect is retried on another server (redispatch on every retry);
//   - the /readyz health check takes a dead server out of rotation within
//     inter + timeout connect (under a second), and a server that is down
//     (every apiserver at boot, one that restarts) is checked every 250 ms
//     as well, so it rejoins within a quarter of a second of serving
//     (checked every second, the boot waited 0.5 s for it on average);
//   - a session whose server died is closed within about 3 s, so clients
//     (watches, leader election: they share one HTTP/2 connection)
//     reconnect instead of waiting for HTTP/2 pings (45 s): TCP keepalives
//     on the server side (1 s idle, 2 probes 1 s apart) when it is idle,
//     and lbSysctls when it has data in flight.
//
// A failed connect deliberately does NOT mark the server down (no `observe
// layer4 ... on-error mark-down`), and marking down does not shut sessions
// (no `on-marked-down shutdown-sessions`): either closes the very session
// that is being redispatched, so the client got an EOF on a new connection
// (lab 06 failed 1 run in 10 on docker with them, 0 in 10 without).
//
// Servers are found by name through Docker's DNS at run time, not once at
// start: an apiserver killed and started again may get another address
// (etcd's containers are replaced on a restore, and the one that comes up
// first takes the lowest free address), and a balancer holding the old
// one answered every new connection with EOF.
func haproxyConfig(apis []string) string {
	var s strings.Builder
	s.WriteString("global\n  log stdout format raw local0\n")
	s.WriteString("resolvers docker\n  nameserver dns 127.0.0.11:53\n  resolve_retries 3\n  timeout resolve 250ms\n  timeout retry 250ms\n  hold valid 1s\n  hold other 1s\n  hold refused 1s\n  hold nx 1s\n  hold timeout 1s\n  hold obsolete 1s\n")
	s.WriteString("defaults\n  mode tcp\n  timeout connect 300ms\n  timeout check 1s\n  timeout client 1h\n  timeout server 1h\n  retries 3\n  option redispatch 1\n")
	s.WriteString("frontend apiserver\n  bind *:6443\n  default_backend apiservers\n")
	s.WriteString("backend apiservers\n  option httpchk GET " + lifecycle.ServingReadyz + "\n  http-check expect status 200\n  balance roundrobin\n")
	s.WriteString("  option srvtcpka\n  srvtcpka-idle 1s\n  srvtcpka-intvl 1s\n  srvtcpka-cnt 2\n")
	s.WriteString("  default-server check check-ssl verify none inter 500ms fastinter 250ms downinter 250ms fall 1 rise 1 resolvers docker init-addr last,libc,none\n")
	for _, a := range apis {
		fmt.Fprintf(&s, "  server %s %s:6443\n", a, a)
	}
	return s.String()
}

// lbSysctls: the load balancer's network namespace gives up on a
// connection whose data is not acknowledged after 3 retransmissions
// (0.2+0.4+0.8+1.6 s ≈ 3 s; the kernel's default of 15 is ~15 min), the
// keepalives' counterpart for a busy session to a dead apiserver.
func lbSysctls(hc *container.HostConfig) {
	hc.Sysctls = map[string]string{"net.ipv4.tcp_retries2": "3"}
}

func waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		defer ccancel()
		last = check(cctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready: %w (last check: %v)", what, err, last)
	}
	return nil
}
