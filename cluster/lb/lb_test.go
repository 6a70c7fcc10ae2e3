package lb

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// apiserver is a stand-in for a kube-apiserver: HTTPS, /readyz, and /who
// answering its name. It can be killed (listener and connections closed)
// and started again on the same address.
type apiserver struct {
	t     *testing.T
	name  string
	addr  string
	ready atomic.Bool
	srv   *httptest.Server
}

func newAPIServer(t *testing.T, name string) *apiserver {
	a := &apiserver{t: t, name: name}
	a.ready.Store(true)
	a.start()
	t.Cleanup(a.kill)
	return a
}

func (a *apiserver) start() {
	addr := a.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		a.t.Fatalf("listen %s: %v", addr, err)
	}
	a.addr = l.Addr().String()
	a.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && !a.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, a.name)
	}))
	a.srv.Listener = l
	a.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut by kills
	a.srv.StartTLS()
}

func (a *apiserver) kill() {
	if a.srv != nil {
		a.srv.CloseClientConnections()
		a.srv.Close()
		a.srv = nil
	}
}

// balance starts a balancer over addrs and returns its address.
func balance(t *testing.T, b *Balancer) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.Log = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	go func() { done <- b.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Logf("%s", p); return len(p), nil }

// who makes one request on a new connection through the balancer, as a
// new kubectl process does.
func who(lb string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}} //nolint:gosec // test server
	resp, err := c.Get("https://" + lb + "/who")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// requests makes n requests on new connections and counts the answers by
// backend name, failing the test on any error.
func requests(t *testing.T, lb string, n int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for i := range n {
		name, err := who(lb)
		if err != nil {
			t.Errorf("request %d of %d: %v", i+1, n, err)
			continue
		}
		seen[name]++
	}
	return seen
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A killed backend gets no new connection, even before any health check
// notices: every one of 50 new connections right after the kill succeeds.
func TestNewConnectionsSurviveAKilledBackend(t *testing.T) {
	a, b := newAPIServer(t, "a"), newAPIServer(t, "b")
	bal := &Balancer{Backends: []string{a.addr, b.addr}, CheckPath: "/readyz", Interval: time.Hour}
	lb := balance(t, bal)
	if seen := requests(t, lb, 4); seen["a"] == 0 || seen["b"] == 0 {
		t.Fatalf("before the kill, want both backends used, got %v", seen)
	}

	a.kill()
	seen := requests(t, lb, 50)
	if seen["b"] != 50 {
		t.Errorf("after killing a: answers %v, want all 50 from b", seen)
	}
	if bal.Healthy(a.addr) {
		t.Errorf("a still marked healthy after a failed dial")
	}
}

// The health checks take out a backend that accepts connections but is
// not ready, and bring it back when it is ready again or restarted.
func TestHealthChecksTakeOutAndBringBack(t *testing.T) {
	a, b := newAPIServer(t, "a"), newAPIServer(t, "b")
	bal := &Balancer{Backends: []string{a.addr, b.addr}, CheckPath: "/readyz", Interval: 20 * time.Millisecond}
	lb := balance(t, bal)

	a.ready.Store(false)
	waitFor(t, "a to be marked down by its /readyz", func() bool { return !bal.Healthy(a.addr) })
	if seen := requests(t, lb, 20); seen["b"] != 20 {
		t.Errorf("a not ready: answers %v, want all 20 from b", seen)
	}

	a.ready.Store(true)
	waitFor(t, "a to be marked up again", func() bool { return bal.Healthy(a.addr) })
	if seen := requests(t, lb, 10); seen["a"] == 0 {
		t.Errorf("a ready again: answers %v, want some from a", seen)
	}

	a.kill()
	if seen := requests(t, lb, 10); seen["b"] != 10 {
		t.Errorf("a killed: answers %v, want all 10 from b", seen)
	}
	a.start()
	waitFor(t, "restarted a to be marked up", func() bool { return bal.Healthy(a.addr) })
	if seen := requests(t, lb, 10); seen["a"] == 0 {
		t.Errorf("a restarted: answers %v, want some from a", seen)
	}
}

// A health check that passed just before a backend died must not mark it
// up again after a dial to it failed.
func TestStaleHealthCheckDoesNotReviveABackend(t *testing.T) {
	bal := &Balancer{Backends: []string{"a:1", "b:1"}}
	bal.once.Do(bal.init)
	started := time.Now()
	bal.dialFailed("a:1", fmt.Errorf("connection refused"))
	bal.checked("a:1", started, nil)
	if bal.Healthy("a:1") {
		t.Fatal("a check that started before the failed dial marked the backend up")
	}
	time.Sleep(time.Millisecond)
	bal.checked("a:1", time.Now(), nil)
	if !bal.Healthy("a:1") {
		t.Fatal("a later passing check did not mark the backend up")
	}
}

// A backend that does not answer a connect is given up after DialTimeout
// and the connection goes to the next one.
func TestUnansweredConnectIsRedispatched(t *testing.T) {
	b := newAPIServer(t, "b")
	// 192.0.2.0/24 is TEST-NET-1: nothing answers there (a dial times out,
	// or fails at once when there is no route).
	bal := &Balancer{Backends: []string{"192.0.2.1:6443", b.addr}, CheckPath: "/readyz", Interval: time.Hour,
		DialTimeout: 100 * time.Millisecond}
	lb := balance(t, bal)
	if seen := requests(t, lb, 10); seen["b"] != 10 {
		t.Errorf("answers %v, want all 10 from b", seen)
	}
}

// With every backend dead a client sees its connection closed, not a hang.
func TestNoBackendClosesTheConnection(t *testing.T) {
	a := newAPIServer(t, "a")
	bal := &Balancer{Backends: []string{a.addr}, CheckPath: "/readyz", Interval: time.Hour}
	lb := balance(t, bal)
	a.kill()
	c, err := net.Dial("tcp", lb)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read = %v, want EOF (connection closed by the balancer)", err)
	}
}
