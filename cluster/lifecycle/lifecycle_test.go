package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster/seed"
)

// exiting is a Placement whose components exit when the test says, for
// boot.failed; the other methods are not called.
type exiting struct {
	Placement
	exited  map[string]string // component: the end of its log
	started []string
}

func (p *exiting) Failed(context.Context) error {
	for name, log := range p.exited {
		return &Exited{Component: name, Err: fmt.Errorf("%s exited while starting (exit status 1); last lines of its log:\n%s", name, log)}
	}
	return nil
}

func (p *exiting) Start(_ context.Context, names ...string) error {
	for _, n := range names {
		delete(p.exited, n)
	}
	p.started = append(p.started, names...)
	return nil
}

func TestFailedRestartsWhatLostItsLease(t *testing.T) {
	const lost = `E1205 20:04:09.358359   13515 controllermanager.go:413] "leaderelection lost/stopped"`
	plan := Plan{APIServers: []string{"kube-apiserver-1"}, ControllerManagers: []string{"kube-controller-manager-1"}, Schedulers: []string{"kube-scheduler-1"}}
	var said []string
	p := &exiting{exited: map[string]string{}}
	b := &boot{p: p, plan: plan, say: func(c, f string, a ...any) { said = append(said, c+": "+fmt.Sprintf(f, a...)) }}
	ctx := t.Context()

	if err := b.failed(ctx); err != nil {
		t.Fatalf("nothing exited: failed() = %v", err)
	}
	for i := range maxBootRestarts {
		p.exited["kube-controller-manager-1"] = lost
		if err := b.failed(ctx); err != nil {
			t.Fatalf("lease lost (%d): failed() = %v, want it started again", i+1, err)
		}
	}
	if want := slices.Repeat([]string{"kube-controller-manager-1"}, maxBootRestarts); !slices.Equal(p.started, want) {
		t.Errorf("started %v, want %v", p.started, want)
	}
	if len(said) != maxBootRestarts || !strings.Contains(said[0], "lost its leader Lease") {
		t.Errorf("progress %q", said)
	}
	p.exited["kube-controller-manager-1"] = lost
	err := b.failed(ctx)
	var ex *Exited
	if !errors.As(err, &ex) || ex.Component != "kube-controller-manager-1" || !strings.Contains(err.Error(), "4 times") {
		t.Errorf("lost once more than the bound: failed() = %v, want the exit, counted", err)
	}

	for name, log := range map[string]string{
		"kube-scheduler-1": `E1205 flags.go:64] "unknown flag: --bogus"`, // exits for another reason
		"kube-apiserver-1": lost,                                         // not leader-elected
	} {
		p := &exiting{exited: map[string]string{name: log}}
		b := &boot{p: p, plan: plan, say: func(string, string, ...any) {}}
		if err := b.failed(ctx); !errors.As(err, &ex) || ex.Component != name || len(p.started) > 0 {
			t.Errorf("%s: failed() = %v, started %v; want the exit, nothing started", name, err, p.started)
		}
	}
}

// refusing is a Seeder whose restore fails, as a full disk or an
// interruption makes it.
type refusing struct{ Placement }

func (refusing) RestoreSeed(ctx context.Context, _ string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("no space left on device")
}

func TestRestoreSeedKeepsTheSeedWhenInterrupted(t *testing.T) {
	cache := seed.Cache{Dir: t.TempDir()}
	const key = "k1"
	if err := cache.Put(key, strings.NewReader("a snapshot")); err != nil {
		t.Fatal(err)
	}
	boot := func(ctx context.Context) (said []string) {
		b := &boot{p: refusing{}, opts: Options{Seeds: cache, SeedKey: key}, plan: Plan{Etcd: []string{"etcd-1"}},
			say: func(c, f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }}
		b.restoreSeed(ctx)
		if b.seeded {
			t.Error("a seed that did not restore counts as restored")
		}
		return said
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	said := boot(ctx)
	if _, ok, err := cache.Get(key); !ok || err != nil {
		t.Errorf("interrupted restore: seed gone (ok=%v, err=%v), want it kept; progress %q", ok, err, said)
	}

	said = boot(t.Context())
	if _, ok, _ := cache.Get(key); ok {
		t.Errorf("refused restore: seed kept, want it discarded; progress %q", said)
	}
	if len(said) != 1 || !strings.Contains(said[0], "discarded") {
		t.Errorf("refused restore: progress %q, want one line saying the seed was discarded", said)
	}
}
