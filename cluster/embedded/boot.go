package embedded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/probe"
)

// EventControlPlaneReady is the progress message sent when every component
// is healthy and every node Ready (before the default ServiceAccount).
const EventControlPlaneReady = "control plane and nodes ready"

// bootTimeout bounds how long one component may take to become healthy.
const bootTimeout = 90 * time.Second

func clientTLS(caPath, cert, key string) (*tls.Config, error) {
	ca, err := os.ReadFile(caPath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// boot starts the components in dependency order and waits for each stage.
func (b *Backend) boot(ctx context.Context, say func(comp, format string, args ...any)) error {
	byRole := func(r cluster.Role) []*procSpec {
		var out []*procSpec
		for _, p := range b.st.Procs {
			if cluster.Role(p.Role) == r {
				out = append(out, p)
			}
		}
		return out
	}
	start := func(ps []*procSpec) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range ps {
			if err := startProc(b.opts.Binary, string(b.opts.Home), b.name, p, b.opts.Ephemeral); err != nil {
				return err
			}
		}
		return b.opts.Home.save(b.name, b.st)
	}
	admin, err := clientTLS(b.st.Files["ca"], "", "")
	if err != nil {
		return err
	}
	adminKC, err := clientcmd.BuildConfigFromFlags("", b.st.Files["kubeconfig"])
	if err != nil {
		return err
	}
	if pair, err := tls.LoadX509KeyPair(adminKC.CertFile, adminKC.KeyFile); err == nil {
		admin.Certificates = []tls.Certificate{pair}
	}
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: admin}}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed component serving certs

	// etcd: all members at once (they need each other for quorum).
	etcd := byRole(cluster.RoleEtcd)
	if err := start(etcd); err != nil {
		return err
	}
	etcdTLS, err := clientTLS(b.st.Files["etcd-ca"], b.st.Files["etcd-client.crt"], b.st.Files["etcd-client.key"])
	if err != nil {
		return err
	}
	if err := b.waitAll(ctx, etcd, say, "waiting for Raft quorum and a leader", func(ctx context.Context, p *procSpec) error {
		return probe.EtcdLeader(ctx, p.Endpoint, etcdTLS, nil)
	}); err != nil {
		return err
	}

	// apiservers, each checked directly, then the load balancer. The
	// schedulers and controller-managers cannot start earlier: the
	// controller-manager reads kube-system's
	// extension-apiserver-authentication ConfigMap at start and exits if
	// RBAC's bootstrap roles (part of /readyz) are not there yet.
	apis := byRole(cluster.RoleAPIServer)
	if err := start(apis); err != nil {
		return err
	}
	readyz := func(client *http.Client, path string) func(context.Context, *procSpec) error {
		return func(ctx context.Context, p *procSpec) error { return probe.HTTPOK(ctx, client, p.Endpoint+path) }
	}
	if err := b.waitAll(ctx, apis, say, "waiting for /readyz (etcd connection, RBAC bootstrap)", readyz(httpc, "/readyz")); err != nil {
		return err
	}
	lb := byRole(cluster.RoleLoadBalancer)
	if err := start(lb); err != nil {
		return err
	}
	if err := b.waitAll(ctx, lb, say, "waiting for /readyz through the load balancer", readyz(httpc, "/readyz")); err != nil {
		return err
	}

	// Nodes are registered before their kwok controllers start, with the
	// labels, taints and capacity of the topology.
	cs, err := b.adminClient()
	if err != nil {
		return err
	}
	// kwok is not in system:masters: its least-privilege role must exist
	// before it starts.
	if err := controlplane.RBAC(ctx, cs, controlplane.Kwok); err != nil {
		return err
	}
	// The DNS addon's Deployment waits for nodes to be scheduled on; kwok
	// runs its pods as it runs every other.
	if err := controlplane.InstallDNS(ctx, cs); err != nil {
		return err
	}
	say("nodes", "registering %d node(s)", len(b.st.Topology.Nodes))
	if err := registerNodes(ctx, cs, b.st.Topology.Nodes); err != nil {
		return err
	}
	say("nodes", "registered %d node(s)", len(b.st.Topology.Nodes))
	kwok := byRole(roleKwok)
	rest := append(append(byRole(cluster.RoleControllerManager), byRole(cluster.RoleScheduler)...), kwok...)
	if err := start(rest); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		errs[0] = b.waitAll(ctx, byRole(cluster.RoleControllerManager), say, "waiting for /healthz", readyz(insecure, "/healthz"))
	}()
	go func() {
		defer wg.Done()
		errs[1] = b.waitAll(ctx, byRole(cluster.RoleScheduler), say, "waiting for /healthz", readyz(insecure, "/healthz"))
	}()
	go func() {
		defer wg.Done()
		errs[2] = b.waitNodesReady(ctx, cs, kwok[0], b.st.Topology.Nodes, say)
	}()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	say("cluster", EventControlPlaneReady)
	return b.waitUsable(ctx, cs, byRole(cluster.RoleControllerManager)[0], say)
}

// waitUsable waits for what a lab's first step may need beyond the
// control plane: the default ServiceAccount and cluster DNS.
func (b *Backend) waitUsable(ctx context.Context, cs kubernetes.Interface, kcm *procSpec, say func(comp, format string, args ...any)) error {
	// Pods cannot be created before the controller-manager has made the
	// default ServiceAccount (it first mints a credential per controller,
	// ~5 s): the cluster is not usable until then.
	say("cluster", "waiting for the controller-manager to create the default ServiceAccount")
	if err := b.waitOne(ctx, kcm, func(ctx context.Context, _ *procSpec) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	say("coredns", "waiting for cluster DNS (the coredns Deployment)")
	return controlplane.WaitDNS(ctx, cs, time.Minute)
}

// waitAll polls check for every process until it passes, failing fast when
// a process exits and naming the component with the tail of its log.
func (b *Backend) waitAll(ctx context.Context, ps []*procSpec, say func(comp, format string, args ...any), what string, check func(context.Context, *procSpec) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			say(p.Name, "%s", what)
			errs[i] = b.waitOne(ctx, p, check)
			if errs[i] == nil {
				say(p.Name, "ready")
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (b *Backend) waitOne(ctx context.Context, p *procSpec, check func(context.Context, *procSpec) error) error {
	ctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	delay := 50 * time.Millisecond
	var last error
	for {
		if !procAlive(p.PID, b.name, p.Name) {
			return fmt.Errorf("%s exited while starting%s; last lines of %s:\n%s", p.Name, exitNote(p.PID), p.Log, tail(p.Log, 15))
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx, p)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy: %w (last check: %v); last lines of %s:\n%s", p.Name, ctx.Err(), last, p.Log, tail(p.Log, 15))
		case <-time.After(delay):
		}
		if delay < 200*time.Millisecond {
			delay *= 2
		}
	}
}
