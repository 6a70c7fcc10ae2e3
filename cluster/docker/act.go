package docker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
)

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
			comp.Exit = fmt.Sprintf("exit status %d", ins.Container.State.ExitCode)
			if ins.Container.State.OOMKilled {
				comp.Exit = "OOMKilled"
			}
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
	if node, daemon, ok := cluster.SplitNodeDaemon(name); ok {
		return b.actInNode(ctx, node, daemon, a)
	}
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
		if err = b.Heal(ctx, name); err == nil && (c.role == string(cluster.RoleNode) || c.role == string(cluster.RoleAPIServer)) {
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
		if c.role == string(cluster.RoleNode) || c.role == string(cluster.RoleAPIServer) {
			go func() { // a node must register again before routes can be computed
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				_ = waitFor(rctx, "routes", b.SyncRoutes)
			}()
		}
	}
	return nil
}

// daemonctl runs daemons.sh's daemonctl in a node (see files/daemons.sh,
// which node-init.sh supervises the node's daemons with).
const daemonctl = `. /usr/local/lib/kubelab/daemons.sh && daemonctl "$@"`

// actInNode acts on one daemon inside a node, leaving the node's other
// daemons and its pods running: kill and stop hold the daemon down until
// start; restart has its supervisor start it again at once.
func (b *Backend) actInNode(ctx context.Context, node, daemon string, a cluster.Action) error {
	target := node + "/" + daemon
	c := b.get(node)
	switch {
	case c == nil || c.role != string(cluster.RoleNode):
		return fmt.Errorf("%s %s: no node %q in cluster %s", a, target, node, b.topo.Name)
	case !cluster.KnownDaemon(daemon):
		return fmt.Errorf("%s %s: no daemon %q inside a node (want %s)", a, target, daemon, strings.Join(cluster.NodeDaemons, ", "))
	}
	switch a {
	case cluster.Kill, cluster.Stop, cluster.Start, cluster.Restart, cluster.Pause, cluster.Resume:
	default:
		return fmt.Errorf("%s %s: %w: a daemon inside a node can be killed, stopped, started, restarted, paused or resumed; %s its node", a, target, cluster.ErrUnsupported, a)
	}
	out, err := b.exec(ctx, c.id, "sh", "-c", daemonctl, "daemonctl", string(a), daemon)
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", a, target, err, strings.TrimSpace(out))
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

// Partition disconnects a component from the lab network; Heal reconnects it.
func (b *Backend) Partition(ctx context.Context, name string) error {
	c := b.get(name)
	if c == nil {
		return fmt.Errorf("no component %q", name)
	}
	_, err := b.cli.NetworkDisconnect(ctx, b.netID, client.NetworkDisconnectOptions{Container: c.id, Force: true})
	return err
}

var _ cluster.Etcdctler = (*Backend)(nil)

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

// ExecNode implements cluster.NodeExecer: cmd runs in the node's container.
func (b *Backend) ExecNode(ctx context.Context, node string, cmd ...string) (string, error) {
	c := b.get(node)
	if c == nil || c.role != string(cluster.RoleNode) {
		return "", fmt.Errorf("no node %q in cluster %s", node, b.topo.Name)
	}
	out, err := b.exec(ctx, c.id, cmd...)
	if err != nil {
		return out, fmt.Errorf("on %s: %w: %s", node, err, strings.TrimSpace(out))
	}
	return out, nil
}

// CanPartition reports that components sit on a Docker network that can
// be cut.
func (b *Backend) CanPartition() bool { return true }
