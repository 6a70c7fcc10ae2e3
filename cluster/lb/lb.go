// Package lb is the L4 (TCP) load balancer the embedded backend puts in
// front of its kube-apiservers, as HAProxy does in a kubeadm HA setup:
// round-robin over backends that pass an HTTPS /readyz check, with
// passive failover when a connection to a backend is refused.
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

// Balancer forwards TCP connections to healthy backends.
type Balancer struct {
	Backends []string
	// CheckPath is requested over HTTPS to decide health ("" = TCP only).
	CheckPath string
	Interval  time.Duration
	Log       *slog.Logger

	next    atomic.Uint64
	mu      sync.RWMutex
	healthy map[string]bool
}

// Serve accepts on l until ctx ends.
func (b *Balancer) Serve(ctx context.Context, l net.Listener) error {
	b.healthy = map[string]bool{}
	for _, be := range b.Backends {
		b.healthy[be] = true
	}
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

func (b *Balancer) order() []string {
	n := len(b.Backends)
	start := int(b.next.Add(1) % uint64(n))
	b.mu.RLock()
	defer b.mu.RUnlock()
	var up, down []string
	for i := range n {
		be := b.Backends[(start+i)%n]
		if b.healthy[be] {
			up = append(up, be)
		} else {
			down = append(down, be)
		}
	}
	return append(up, down...) // unhealthy ones only as a last resort
}

func (b *Balancer) forward(ctx context.Context, c net.Conn) {
	defer c.Close()
	var be net.Conn
	var err error
	for _, addr := range b.order() {
		d := net.Dialer{Timeout: time.Second}
		be, err = d.DialContext(ctx, "tcp", addr)
		if err == nil {
			break
		}
		b.mark(addr, false)
	}
	if be == nil {
		b.Log.Warn("no backend", "err", err)
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

func (b *Balancer) mark(addr string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.healthy[addr] != ok {
		b.Log.Info("backend health changed", "backend", addr, "healthy", ok)
	}
	b.healthy[addr] = ok
}

func (b *Balancer) check(ctx context.Context) {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}, //nolint:gosec // health probe only
	}
	t := time.NewTicker(b.Interval)
	defer t.Stop()
	for {
		for _, be := range b.Backends {
			go func() { b.mark(be, b.probe(ctx, client, be) == nil) }()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
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
	b := &Balancer{Backends: backends, CheckPath: *check, Interval: *interval, Log: log}
	return b.Serve(ctx, l)
}
