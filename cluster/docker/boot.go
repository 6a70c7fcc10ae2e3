package docker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/testcontainers/testcontainers-go"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/probe"
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
		g.Go(func() error {
			return b.run(gctx, c.Name, c.Role, b.images.Kubelab, append([]string{"component", string(c.Role)}, c.Args...), pk, nil, mods)
		})
	}
	return g.Wait()
}

func nodeNames(t cluster.Topology) []string {
	out := make([]string, len(t.Nodes))
	for i, n := range t.Nodes {
		out[i] = n.Name
	}
	return out
}

func names(comps []controlplane.Component) []string {
	out := make([]string, len(comps))
	for i, c := range comps {
		out[i] = c.Name
	}
	return out
}

// upEtcd starts every member at once and waits for a Raft leader.
func (b *Backend) upEtcd(ctx context.Context, say func(string, string, ...any), pk *pkiDir, etcds []controlplane.Component) error {
	if err := b.startAll(ctx, pk, etcds); err != nil {
		return err
	}
	// The host reaches etcd members and apiservers at their addresses on the
	// lab network (only the load balancer's port is published); their
	// certificates name "localhost" for that.
	etcdTLS, err := tlsConfig(pk.path(controlplane.EtcdCA), pk.path(controlplane.EtcdClientCert), pk.path(controlplane.EtcdClientKey))
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.access.EtcdTLS = etcdTLS
	b.access.EtcdDial = b.dialByName
	b.mu.Unlock()
	say("etcd", "waiting for Raft quorum and a leader")
	if err := waitFor(ctx, "etcd", func(ctx context.Context) error {
		for _, ep := range b.Access().EtcdEndpoints {
			if err := probe.EtcdLeader(ctx, ep, etcdTLS, b.dialByName); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return b.withLogs(ctx, err, names(etcds)...)
	}
	return nil
}

// upAPIServers starts the apiservers at once, waits for each, then puts
// HAProxy in front of them and writes the admin kubeconfig.
func (b *Backend) upAPIServers(ctx context.Context, say func(string, string, ...any), pk *pkiDir, apis []controlplane.Component) error {
	if err := b.startAll(ctx, pk, apis); err != nil {
		return err
	}
	admin, err := tlsConfig(pk.path(controlplane.CA), pk.path(controlplane.AdminCert), pk.path(controlplane.AdminKey))
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
		return b.withLogs(ctx, err, names(apis)...)
	}
	// HAProxy in front of the apiservers; its port is the only way in.
	cfg := haproxyConfig(names(apis))
	if err := os.WriteFile(filepath.Join(b.opts.Dir, "haproxy.cfg"), []byte(cfg), 0o644); err != nil {
		return err
	}
	lbFiles := []testcontainers.ContainerFile{{HostFilePath: filepath.Join(b.opts.Dir, "haproxy.cfg"), ContainerFilePath: "/etc/haproxy/haproxy.cfg", FileMode: 0o644}}
	if err := b.runWith(ctx, "load-balancer", cluster.RoleLoadBalancer, b.images.Node, []string{"haproxy", "-W", "-db", "-f", "/etc/haproxy/haproxy.cfg"}, lbFiles, []string{"6443/tcp"}, []string{"/usr/bin/tini", "--"}, lbSysctls); err != nil {
		return err
	}
	lbURL := "https://" + b.get("load-balancer").ports["6443/tcp"]
	say("load-balancer", "waiting for /readyz through HAProxy")
	if err := waitFor(ctx, "load-balancer", func(ctx context.Context) error { return probe.HTTPOK(ctx, httpc, lbURL+"/readyz") }); err != nil {
		return b.withLogs(ctx, err, "load-balancer")
	}
	kc := filepath.Join(b.opts.Dir, "admin.kubeconfig")
	if err := controlplane.OpenPKI(pk.dir).AdminKubeconfig(kc, b.topo.Name, lbURL); err != nil {
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

// upRest starts the controller-managers, schedulers and workers at once
// (they all talk to the load balancer by name) and waits for every node to
// be Ready with a pod range.
func (b *Backend) upRest(ctx context.Context, say func(string, string, ...any), pk *pkiDir, plan []controlplane.Component, cs kubernetes.Interface) error {
	rest := append(byRole(plan, cluster.RoleControllerManager), byRole(plan, cluster.RoleScheduler)...)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.startAll(gctx, pk, rest) })
	for _, node := range b.topo.Nodes {
		g.Go(func() error { return b.startWorker(gctx, node, pk) })
	}
	if err := g.Wait(); err != nil {
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
			if cluster.NodeUsable(&n) && n.Spec.PodCIDR != "" {
				ready++
			}
		}
		if ready != len(b.topo.Nodes) {
			return fmt.Errorf("%d of %d nodes Ready, untainted by the node lifecycle controller and with a pod CIDR", ready, len(b.topo.Nodes))
		}
		return nil
	}); err != nil {
		return b.withLogs(ctx, err, append(names(rest), nodeNames(b.topo)...)...)
	}
	return b.SyncRoutes(ctx)
}

// haproxyConfig balances TCP over the apiservers. A new connection must
// never wait on a dead apiserver (a killed container's address never
// answers, so connecting to it times out rather than being refused):
//   - connecting times out fast (the lab network is one bridge) and a failed
//     connect is retried on another server (redispatch on every retry);
//   - the /readyz health check takes a dead server out of rotation within
//     inter + timeout connect (under a second);
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
func haproxyConfig(apis []string) string {
	var s strings.Builder
	s.WriteString("global\n  log stdout format raw local0\n")
	s.WriteString("defaults\n  mode tcp\n  timeout connect 300ms\n  timeout check 1s\n  timeout client 1h\n  timeout server 1h\n  retries 3\n  option redispatch 1\n")
	s.WriteString("frontend apiserver\n  bind *:6443\n  default_backend apiservers\n")
	s.WriteString("backend apiservers\n  option httpchk GET /readyz\n  http-check expect status 200\n  balance roundrobin\n")
	s.WriteString("  option srvtcpka\n  srvtcpka-idle 1s\n  srvtcpka-intvl 1s\n  srvtcpka-cnt 2\n")
	s.WriteString("  default-server check check-ssl verify none inter 500ms fastinter 250ms downinter 1s fall 1 rise 1\n")
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
