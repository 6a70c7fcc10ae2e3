// Package lb is the L4 (TCP) load balancer the embedded backend puts in
// front of its kube-apiservers, as HAProxy does in a kubeadm HA setup:
// round-robin over backends that pass an HTTPS /readyz check.
//
// A new connection never waits on a dead backend: a dial that fails (or
// does not connect within DialTimeout) marks that backend down at once and
// the connection is redispatched to the next healthy one, as HAProxy's
// `option redispatch` with `retries` does. The health checks bring a
// backend back, and take down one that still accepts connections but is
// not ready. Connections already proxied to a backend that dies fail with
// it: TCP cannot move them.
//
// It proxies bytes only; TLS stays end to end between client and
// apiserver. It exists because the embedded backend must run without
// Docker or extra system packages; the Docker backend uses HAProxy.
package lb

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDialTimeout bounds a connect to one backend before the connection
// is redispatched to the next. Backends are on the same host or network,
// where a healthy one answers a SYN in well under a millisecond.
const DefaultDialTimeout = 500 * time.Millisecond

// Balancer forwards TCP connections to healthy backends.
type Balancer struct {
	Backends []string
	// CheckPath is requested over HTTPS to decide health ("" = TCP only).
	CheckPath string
	// Interval between health checks of each backend.
	Interval time.Duration
	// DialTimeout bounds each connect to a backend (DefaultDialTimeout when 0).
	DialTimeout time.Duration
	Log         *slog.Logger

	next  atomic.Uint64
	once  sync.Once
	mu    sync.RWMutex
	state map[string]*backend
}

// backend is the health of one backend address.
type backend struct {
	healthy bool
	// failedAt is when a dial to it last failed: a health check that
	// started before then is stale and cannot mark it up again.
	failedAt time.Time
}

// Serve accepts on l until ctx ends.
func (b *Balancer) Serve(ctx context.Context, l net.Listener) error {
	b.once.Do(b.init)
	go b.check(ctx)
	go func() { <-ctx.Done(); _ = l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		go b.forward(ctx, c)
	}
}

func (b *Balancer) init() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state = map[string]*backend{}
	for _, be := range b.Backends {
		b.state[be] = &backend{healthy: true}
	}
	if b.Log == nil {
		b.Log = slog.New(slog.DiscardHandler)
	}
}

// Healthy reports whether addr is currently considered up (every backend
// is, until checked).
func (b *Balancer) Healthy(addr string) bool {
	b.once.Do(b.init)
	b.mu.RLock()
	defer b.mu.RUnlock()
	s := b.state[addr]
	return s != nil && s.healthy
}

// order is the round-robin order of backends for one connection, healthy
// ones first; unhealthy ones follow, as a last resort.
func (b *Balancer) order() []string {
	n := len(b.Backends)
	start := int(b.next.Add(1) % uint64(n))
	b.mu.RLock()
	defer b.mu.RUnlock()
	var up, down []string
	for i := range n {
		be := b.Backends[(start+i)%n]
		if b.state[be].healthy {
			up = append(up, be)
		} else {
			down = append(down, be)
		}
	}
	return append(up, down...)
}

// dial connects to the first backend of order() that answers, marking
// each one that does not as down.
func (b *Balancer) dial(ctx context.Context) (net.Conn, string, error) {
	timeout := b.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	var errs []error
	for _, addr := range b.order() {
		d := net.Dialer{Timeout: timeout}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, addr, nil
		}
		errs = append(errs, err)
		b.dialFailed(addr, err)
	}
	return nil, "", fmt.Errorf("no backend answered: %w", errors.Join(errs...))
}

func (b *Balancer) forward(ctx context.Context, c net.Conn) {
	defer c.Close()
	be, _, err := b.dial(ctx)
	if err != nil {
		b.Log.Warn("connection dropped", "client", c.RemoteAddr().String(), "err", err)
		return
	}
	defer be.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(be, c)
	go pipe(c, be)
	select {
	case <-done:
		<-done
	case <-ctx.Done():
	}
}

// dialFailed marks addr down at once: new connections go elsewhere until
// a health check that started after this failure passes.
func (b *Balancer) dialFailed(addr string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.state[addr]
	if s.healthy {
		b.Log.Info("backend down: dial failed", "backend", addr, "err", err)
	}
	s.healthy, s.failedAt = false, time.Now()
}

// checked applies the result of a health check that started at started.
func (b *Balancer) checked(addr string, started time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.state[addr]
	ok := err == nil
	if ok && !started.After(s.failedAt) {
		return // stale: a dial failed while this check was under way
	}
	if s.healthy != ok {
		b.Log.Info("backend health changed", "backend", addr, "healthy", ok, "err", err)
	}
	s.healthy = ok
}

// check probes each backend every Interval, one probe at a time per
// backend so that a slow probe's result never lands after a newer one's.
func (b *Balancer) check(ctx context.Context) {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}, //nolint:gosec // health probe only
	}
	for _, be := range b.Backends {
		go func() {
			t := time.NewTicker(b.Interval)
			defer t.Stop()
			for {
				started := time.Now()
				b.checked(be, started, b.probe(ctx, client, be))
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
}

func (b *Balancer) probe(ctx context.Context, client *http.Client, addr string) error {
	if b.CheckPath == "" {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+b.CheckPath, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

type multi []string

func (m *multi) String() string     { return fmt.Sprint(*m) }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// Main runs the balancer as the "kubelab-lb" component:
// --listen ADDR --backend ADDR [--backend ADDR...].
func Main(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("kubelab-lb", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:6443", "address to listen on")
	check := fs.String("check-path", "/readyz", "HTTPS path probed on each backend (empty: TCP connect)")
	interval := fs.Duration("interval", time.Second, "health check interval")
	dialTimeout := fs.Duration("connect-timeout", DefaultDialTimeout, "connect timeout to one backend before trying the next")
	var backends multi
	fs.Var(&backends, "backend", "backend address (repeat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(backends) == 0 {
		return errors.New("kubelab-lb: at least one --backend is required")
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	log.Info("load balancer listening", "addr", *listen, "backends", []string(backends))
	b := &Balancer{Backends: backends, CheckPath: *check, Interval: *interval, DialTimeout: *dialTimeout, Log: log}
	return b.Serve(ctx, l)
}
