package ops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

func init() {
	Register("probe", "{name: api, every: 200ms, kubectl: [get, --raw, /readyz]}", func(p *ProbeOp) Op { return p })
}

// ProbesBinding is the binding background probes are read through:
// probes.NAME is the record of probe NAME.
const ProbesBinding = "probes"

// BackgroundBinding is the binding background operations are read
// through: background.NAME is the record of the operation started with
// background: NAME.
const BackgroundBinding = "background"

// ProbeOp starts a background probe: kubectl runs every interval, while
// the later steps run (and inject faults), until the lab ends. Later
// expressions read its record as probes.NAME (attempts, failures,
// maxGap, availability): what chaos tools call a steady-state probe,
// e.g. "the apiserver kept answering during the failover".
type ProbeOp struct {
	Name           string           `yaml:"name"`
	Every          cluster.Duration `yaml:"every,omitempty"`
	Kubectl        []string         `yaml:"kubectl"`
	AttemptTimeout cluster.Duration `yaml:"attemptTimeout,omitempty"`
}

// Summary names the probe and its command.
func (p *ProbeOp) Summary() string {
	return fmt.Sprintf("probe %s every %s: kubectl %s", p.Name, p.every(), strings.Join(p.Kubectl, " "))
}

// DefaultTimeout is that of an instant operation: starting the probe.
func (p *ProbeOp) DefaultTimeout() time.Duration { return writeTimeout }

func (p *ProbeOp) every() time.Duration {
	if p.Every.Duration > 0 {
		return p.Every.Duration
	}
	return time.Second
}

func (p *ProbeOp) attemptTimeout() time.Duration {
	if p.AttemptTimeout.Duration > 0 {
		return p.AttemptTimeout.Duration
	}
	return 5 * time.Second
}

var probesType = reflect.TypeFor[map[string]assertions.Probe]()

// Validate checks the name, interval and command and binds probes.
func (p *ProbeOp) Validate(c Checker) {
	if d := p.Every.Duration; d != 0 && d < 10*time.Millisecond {
		c.Errorf("every", "want at least 10ms, got %s", p.Every)
	}
	if p.Kubectl != nil && len(p.Kubectl) == 0 {
		c.Errorf("kubectl", "want at least one argument")
	}
	if p.Name != "" && !identifierRE(p.Name) {
		c.Errorf("name", "invalid probe name %q: want an identifier (letters, digits and _, not starting with a digit)", p.Name)
	}
	c.BindType(ProbesBinding, probesType, "name")
}

func identifierRE(s string) bool {
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}

// Exec starts the probe in the background and returns.
func (p *ProbeOp) Exec(_ context.Context, env Env) (string, error) {
	rec := &probeRecord{start: time.Now(), lastOK: time.Now()}
	env.Probe(p.Name, rec.snapshot)
	env.Go(func(ctx context.Context) {
		defer rec.stop()
		tick := time.NewTicker(p.every())
		defer tick.Stop()
		for {
			actx, cancel := context.WithTimeout(ctx, p.attemptTimeout())
			args := append(kubectl(env), p.Kubectl...)
			cmd := exec.CommandContext(actx, args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster().Access().Kubeconfig)
			out, err := cmd.CombinedOutput()
			cancel()
			if ctx.Err() != nil {
				return // the lab ended: this attempt says nothing about the cluster
			}
			rec.add(err, strings.TrimSpace(string(out)))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return "started", nil
}

// probeRecord is a probe's record, written by its goroutine and read by
// evaluations.
type probeRecord struct {
	mu                  sync.Mutex
	start, lastOK       time.Time
	attempts, successes int
	streak              int
	maxGap              time.Duration
	lastError           string
	stopped             bool
}

func (r *probeRecord) add(err error, out string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.attempts++
	if err == nil {
		r.successes++
		r.streak++
		r.maxGap = max(r.maxGap, now.Sub(r.lastOK))
		r.lastOK = now
		return
	}
	r.streak = 0
	r.lastError = fmt.Sprintf("%v: %s", err, out)
}

func (r *probeRecord) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
}

func (r *probeRecord) snapshot() assertions.Probe {
	r.mu.Lock()
	defer r.mu.Unlock()
	gap := r.maxGap
	if !r.stopped {
		gap = max(gap, time.Since(r.lastOK))
	}
	p := assertions.Probe{Attempts: r.attempts, Successes: r.successes, Failures: r.attempts - r.successes,
		Streak: r.streak, MaxGap: gap.Seconds(), Availability: 1, LastError: r.lastError, Running: !r.stopped}
	if r.attempts > 0 {
		p.Availability = float64(r.successes) / float64(r.attempts)
	}
	return p
}
