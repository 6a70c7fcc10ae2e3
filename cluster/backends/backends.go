// Package backends is the one place a backend is chosen: a backend's name,
// the options that go with it and a topology make a cluster.Backend, and
// a cluster's name finds the one that runs it. The command line, the test
// helpers (engine/enginetest) and everything they run make theirs here.
package backends

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/cluster/kubeconfig"
)

// The backends' names.
const (
	// Embedded runs components as local processes, with kwok nodes.
	Embedded = "embedded"
	// Docker runs components and real nodes in containers.
	Docker = "docker"
	// Kubeconfig runs on an existing cluster, in a namespace of its own.
	Kubeconfig = "kubeconfig"
)

// Names are the backends' names, for flags and messages.
var Names = []string{Embedded, Docker, Kubeconfig}

// ErrUnknown is returned for a name that is none of Names.
var ErrUnknown = errors.New("unknown backend")

// New makes a backend for topology t.
type New = func(t cluster.Topology) (cluster.Backend, error)

// Options are what every backend of one home shares.
type Options struct {
	// Home is kubelab's state directory: embedded clusters under it,
	// docker clusters under docker/, runs on existing clusters under
	// kubeconfig/.
	Home string
	// Binary is the kubelab executable that carries the components.
	Binary string
	// Ephemeral clusters belong to this process: they are removed once it
	// is gone (embedded processes die with it, the reaper removes docker
	// containers).
	Ephemeral bool
	// Fresh boots control planes from nothing instead of the seed.
	Fresh bool
	// Kubeconfig and Context choose the existing cluster of the
	// kubeconfig backend; only that backend takes them.
	Kubeconfig, Context string
	// OwnerStart identifies the process that owns ephemeral docker
	// clusters (its start time), for the reaper.
	OwnerStart string
	// Log receives the backends' debug logs (may be nil).
	Log *slog.Logger
}

// Check refuses a name that is no backend, a kubeconfig backend without a
// kubeconfig, and a kubeconfig given to another backend: kubelab never
// uses a cluster it did not create by accident (not even through
// $KUBECONFIG).
func Check(name string, o Options) error {
	switch {
	case name != Embedded && name != Docker && name != Kubeconfig && name != "":
		return fmt.Errorf("%w %q (want %s, %s or %s)", ErrUnknown, name, Embedded, Docker, Kubeconfig)
	case name == Kubeconfig && o.Kubeconfig == "":
		return errors.New("--backend kubeconfig needs --kubeconfig FILE (kubelab does not read $KUBECONFIG for this)")
	case name == Kubeconfig:
		return kubeconfig.CheckFile(o.Kubeconfig, o.Context)
	case name != Kubeconfig && (o.Kubeconfig != "" || o.Context != ""):
		return fmt.Errorf("--kubeconfig and --context choose a cluster kubelab did not create: say so with --backend kubeconfig (not %q)", name)
	}
	return nil
}

// Make makes a backend of the named kind ("" is embedded) for topology t.
func Make(name string, t cluster.Topology, o Options) (cluster.Backend, error) {
	if err := Check(name, o); err != nil {
		return nil, err
	}
	t.Fresh = t.Fresh || o.Fresh
	switch name {
	case Docker:
		t = t.WithDefaults()
		return docker.New(t, docker.Options{Home: o.Home, Dir: DockerDir(o.Home, t.Name), Binary: o.Binary, Ephemeral: o.Ephemeral, OwnerStart: o.OwnerStart})
	case Kubeconfig:
		return kubeconfig.New(t, kubeconfig.Options{Kubeconfig: o.Kubeconfig, Context: o.Context, Dir: KubeconfigDir(o.Home, t.Name)})
	}
	return embedded.New(t, embeddedOptions(o))
}

// Factory checks the name and options now and returns what makes a
// backend for each topology (a runner's Backend).
func Factory(name string, o Options) (New, error) {
	if err := Check(name, o); err != nil {
		return nil, err
	}
	return func(t cluster.Topology) (cluster.Backend, error) { return Make(name, t, o) }, nil
}

// embeddedOptions are the embedded backend's options of o.
func embeddedOptions(o Options) embedded.Options {
	return embedded.Options{Home: embedded.Home(o.Home), Binary: o.Binary, Ephemeral: o.Ephemeral, Log: o.Log}
}

// EmbeddedHome is where the embedded clusters of home live.
func EmbeddedHome(o Options) embedded.Home { return embeddedOptions(o).Home }

// DockerDir is the state directory of the docker cluster name.
func DockerDir(home, name string) string { return filepath.Join(home, "docker", name) }

// KubeconfigDir is the state directory of a run named name on a cluster
// kubelab did not create.
func KubeconfigDir(home, name string) string { return filepath.Join(home, "kubeconfig", name) }

// ErrNotFound is returned by Open when no backend runs the cluster.
var ErrNotFound = embedded.ErrNotFound

// Open attaches to the running cluster name on whichever backend has it:
// embedded, then a run on an existing cluster, then docker (when a Docker
// engine answers).
func Open(ctx context.Context, name string, o Options) (cluster.Backend, error) {
	b, err := embedded.Open(name, embeddedOptions(o))
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, embedded.ErrNotFound) {
		return nil, err
	}
	k, kerr := kubeconfig.Open(KubeconfigDir(o.Home, name))
	if kerr == nil {
		return k, nil
	}
	if !errors.Is(kerr, kubeconfig.ErrNotFound) {
		return nil, kerr
	}
	// Every docker cluster of the home has its state directory there:
	// without one there is nothing to ask the engine (whose client costs
	// tens of milliseconds to make, and seconds when the engine hangs).
	if _, serr := os.Stat(DockerDir(o.Home, name)); serr == nil && DockerUp(ctx) {
		d, derr := docker.Open(ctx, name, docker.Options{Home: o.Home, Dir: DockerDir(o.Home, name)})
		if derr == nil {
			return d, nil
		}
		if !errors.Is(derr, docker.ErrNotFound) {
			return nil, derr
		}
	}
	return nil, err // the embedded backend's: no such cluster
}

// DockerUp reports whether a Docker engine answers within 2 s.
func DockerUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return docker.Available(ctx) == nil
}
