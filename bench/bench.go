// Package bench measures kubelab's clusters on this machine: how long
// `up` takes until a cluster is usable and how much memory it holds, and at
// scale how long nodes take to be Ready and pods to be Running. It prints
// tables of measurements; it passes or fails nothing (the targets are in
// the issues and the README, compared by people).
package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/prometheus/procfs"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

// NewBackend makes an ephemeral cluster of a backend.
type NewBackend func(backend string, t cluster.Topology) (cluster.Backend, error)

// Case is one topology to boot.
type Case struct {
	Name     string
	Backend  string
	Topology cluster.Topology
}

// Seeded says whether the case's clusters start from the seed.
func (c Case) Seeded() bool { return !c.Topology.Fresh }

// Observed says whether the case's clusters run the audit log and the
// scheduler's recording.
func (c Case) Observed() bool { return c.Topology.Audited() && c.Topology.Scheduler.Recorded() }

// Cases are the topologies `kubelab bench up` boots: minimal (1 of each,
// 1 node) and HA (3 etcd, 2 of each control-plane component, 3 nodes),
// from the seed or fresh, with observation or without, on each backend.
func Cases(backends []string, seeded, observed []bool) []Case {
	var out []Case
	for _, b := range backends {
		for _, c := range []Case{
			{Name: "minimal", Backend: b, Topology: cluster.Topology{Name: "bench-min"}},
			{Name: "ha", Backend: b, Topology: cluster.Topology{Name: "bench-ha", Etcd: 3, APIServers: 2, Schedulers: 2, ControllerManagers: 2, Workers: 3}},
		} {
			for _, s := range seeded {
				for _, o := range observed {
					c.Topology.Fresh = !s
					c.Topology.Audit, c.Topology.Scheduler.Record = &o, &o
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// Stats are the minimum, median and maximum of samples.
type Stats struct{ Min, Median, Max float64 }

func stats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Stats{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

func (s Stats) String() string { return fmt.Sprintf("%.2f / %.2f / %.2f", s.Min, s.Median, s.Max) }

// UpRow is the measurements of one case over its runs.
type UpRow struct {
	Case Case
	Runs int
	// Usable: seconds from Up to a cluster that takes pods.
	Usable Stats
	// Down: seconds from Down until every process or container is gone.
	Down Stats
	// PSS: MiB of every process of the cluster once up.
	PSS Stats
	// CPU: CPU seconds the whole machine spent from Up to usable (every
	// process and the kernel: on docker the engine's too), and Cores the
	// median of the cores that kept busy (CPU / usable): a boot that
	// keeps every core busy is bound by its CPU, not by a wait.
	CPU   Stats
	Cores float64
	// Phases: the median of each phase over the runs.
	Phases Phases
}

// Phases are the seconds from Up to each phase of a boot, read from its
// progress events: where the time to usable goes. A phase that did not
// happen (a backend that does not report it) is 0.
type Phases struct {
	// EtcdLeader: the last etcd member reports a leader.
	EtcdLeader float64
	// Serving: an apiserver serves; the controllers, nodes and DNS start.
	Serving float64
	// Healthz: /healthz passes, the bootstrap hooks are done; the
	// controller-manager starts its controllers.
	Healthz float64
	// APIServers: the last apiserver is ready.
	APIServers float64
	// NodesReady: every node Ready, with its not-ready taint lifted.
	NodesReady float64
	// ServiceAccount: the controller-manager made the default
	// ServiceAccount.
	ServiceAccount float64
	// DNS: cluster DNS answers.
	DNS float64
}

// observe records e's phase, if it ends one.
func (p *Phases) observe(e cluster.Event) {
	at := e.Elapsed.Seconds()
	switch {
	case e.Message == lifecycle.EventServing:
		p.Serving = at
	case e.Message == lifecycle.EventHealthz:
		p.Healthz = at
	case e.Message == lifecycle.EventServiceAccount:
		p.ServiceAccount = at
	case e.Message == lifecycle.EventDNS:
		p.DNS = at
	case e.Message == "ready" && strings.HasPrefix(e.Component, "etcd-"):
		p.EtcdLeader = max(p.EtcdLeader, at)
	case e.Message == "ready" && strings.HasPrefix(e.Component, "kube-apiserver-"):
		p.APIServers = max(p.APIServers, at)
	case e.Component == "nodes":
		var n, of int
		if _, err := fmt.Sscanf(e.Message, lifecycle.EventNodesReady, &n, &of); err == nil && n == of {
			p.NodesReady = at
		}
	}
}

// medianPhases is the median of each phase of ps.
func medianPhases(ps []Phases) Phases {
	med := func(f func(Phases) float64) float64 {
		xs := make([]float64, len(ps))
		for i, p := range ps {
			xs[i] = f(p)
		}
		return stats(xs).Median
	}
	return Phases{
		EtcdLeader:     med(func(p Phases) float64 { return p.EtcdLeader }),
		Serving:        med(func(p Phases) float64 { return p.Serving }),
		Healthz:        med(func(p Phases) float64 { return p.Healthz }),
		APIServers:     med(func(p Phases) float64 { return p.APIServers }),
		NodesReady:     med(func(p Phases) float64 { return p.NodesReady }),
		ServiceAccount: med(func(p Phases) float64 { return p.ServiceAccount }),
		DNS:            med(func(p Phases) float64 { return p.DNS }),
	}
}

// Up boots each case runs times and measures it. The cases take turns
// (run 1 of every case, then run 2, ...): back to back, a case's first
// boot paid for the previous case's teardown and the machine's drift
// fell on whole cases (a docker seeded run at 15.2 s among 8.0-8.4).
// Each backend first boots once unmeasured (warmUp). On an error, the
// rows hold the runs that ended.
func Up(ctx context.Context, newBackend NewBackend, cases []Case, runs int, say func(string)) ([]UpRow, error) {
	if err := warmUp(ctx, newBackend, cases, say); err != nil {
		return nil, err
	}
	type samples struct {
		usable, down, pss, cpu, cores []float64
		phases                        []Phases
	}
	got := make([]samples, len(cases))
	rows := func() []UpRow {
		out := make([]UpRow, 0, len(cases))
		for i, c := range cases {
			if s := got[i]; len(s.usable) > 0 {
				out = append(out, UpRow{Case: c, Runs: len(s.usable), Usable: stats(s.usable), Down: stats(s.down), PSS: stats(s.pss),
					CPU: stats(s.cpu), Cores: stats(s.cores).Median, Phases: medianPhases(s.phases)})
			}
		}
		return out
	}
	for run := 1; run <= runs; run++ {
		for i, c := range cases {
			r, err := upOnce(ctx, newBackend, c, run)
			if err != nil {
				return rows(), fmt.Errorf("bench %s on %s, run %d: %w", c.Name, c.Backend, run, err)
			}
			cores := 0.0
			if r.usable > 0 {
				cores = r.cpu / r.usable
			}
			say(fmt.Sprintf("%s/%s (seeded %t, observed %t) run %d: usable in %.2fs (%.1f CPU-s, %.1f cores busy), down in %.2fs, %.0f MiB PSS",
				c.Backend, c.Name, c.Seeded(), c.Observed(), run, r.usable, r.cpu, cores, r.down, r.pss))
			s := &got[i]
			s.usable, s.down, s.pss = append(s.usable, r.usable), append(s.down, r.down), append(s.pss, r.pss)
			s.cpu, s.cores = append(s.cpu, r.cpu), append(s.cores, cores)
			s.phases = append(s.phases, r.phases)
		}
	}
	return rows(), nil
}

// warmUp boots each backend of the cases once, unmeasured, from the seed
// when a case of it is seeded: the first boot after a new build takes the
// seed (embedded) or builds the node images (docker), and measured as run
// 1 it counted that once-per-build work as a boot (a docker minimal run
// at 17.8 s among 5.0-5.2).
func warmUp(ctx context.Context, newBackend NewBackend, cases []Case, say func(string)) error {
	pick := map[string]Case{}
	var order []string
	for _, c := range cases {
		w, seen := pick[c.Backend]
		if !seen {
			order = append(order, c.Backend)
		}
		if !seen || !w.Seeded() && c.Seeded() {
			pick[c.Backend] = c
		}
	}
	for _, b := range order {
		c := pick[b]
		say(fmt.Sprintf("%s/%s: a warm-up boot, not measured (a build's first boot takes the seed or builds the images)", b, c.Name))
		if _, err := upOnce(ctx, newBackend, c, 0); err != nil {
			return fmt.Errorf("bench warm-up of %s on %s: %w", c.Name, b, err)
		}
	}
	return nil
}

// upSample is what one boot measured.
type upSample struct {
	usable, down, pss, cpu float64
	phases                 Phases
}

// settle is how long a cluster runs before its memory is measured.
var settle = 2 * time.Second

func upOnce(ctx context.Context, newBackend NewBackend, c Case, run int) (r upSample, err error) {
	// A name per run: client-go caches TLS transports by the certificate
	// files' paths, so a cluster booted again under the same name (new
	// certificates, same paths) would be dialled with the old CA.
	t := c.Topology
	t.Name = fmt.Sprintf("%s-%d", t.Name, run)
	b, err := newBackend(c.Backend, t)
	if err != nil {
		return r, err
	}
	downed := false
	defer func() {
		if downed {
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := b.Down(dctx); derr != nil && err == nil {
			err = derr
		}
	}()
	// The boot's stages report from goroutines of their own.
	var mu sync.Mutex
	var phases Phases
	start, cpu := time.Now(), machineCPU()
	if err := b.Up(ctx, func(e cluster.Event) { mu.Lock(); phases.observe(e); mu.Unlock() }); err != nil {
		return r, err
	}
	r.usable = time.Since(start).Seconds()
	r.cpu = max(machineCPU()-cpu, 0)
	mu.Lock()
	r.phases = phases
	mu.Unlock()
	time.Sleep(settle) // let every component settle before measuring memory
	if r.pss, err = PSS(ctx, b); err != nil {
		return r, err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	start = time.Now()
	downed = true
	if err := b.Down(dctx); err != nil {
		return r, err
	}
	r.down = time.Since(start).Seconds()
	return r, nil
}

// machineCPU is the CPU seconds every core of the machine has been busy
// since it booted (user, nice, system, interrupts; not idle, I/O wait or
// steal), or 0 where /proc/stat cannot be read.
func machineCPU() float64 {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0
	}
	st, err := fs.Stat()
	if err != nil {
		return 0
	}
	t := st.CPUTotal
	return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ
}

// RoleSelf is the row of CPUByRole for the kubelab process that measures:
// it registers the embedded backend's nodes and watches them and the
// workload, so its CPU competes with the cluster's on the same cores.
const RoleSelf cluster.Role = "kubelab (this process)"

// selfCPU is the CPU seconds (user and system) this process has spent.
func selfCPU() float64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.CPUTime()
}

// CPUByRole is the CPU seconds (user and system) the cluster's processes
// have spent so far, summed by role (a process several components share,
// such as the kwok of every node, counts once, under its first role),
// and under RoleSelf this process's own. Components without a process of
// their own here (containers) are not counted.
func CPUByRole(ctx context.Context, b cluster.Backend) (map[cluster.Role]float64, error) {
	comps, err := b.Components(ctx)
	if err != nil {
		return nil, err
	}
	out := map[cluster.Role]float64{RoleSelf: selfCPU()}
	seen := map[int]bool{}
	for _, c := range comps {
		if c.PID <= 0 || seen[c.PID] {
			continue
		}
		seen[c.PID] = true
		p, err := procfs.NewProc(c.PID)
		if err != nil {
			continue // exited since
		}
		st, err := p.Stat()
		if err != nil {
			continue
		}
		out[c.Role] += st.CPUTime()
	}
	return out, nil
}

// PSS sums the proportional set size (shared pages counted once) of every
// process of a cluster: each component's process and its descendants (a
// container's processes descend from its init).
func PSS(ctx context.Context, b cluster.Backend) (float64, error) {
	comps, err := b.Components(ctx)
	if err != nil {
		return 0, err
	}
	roots := map[int]bool{}
	for _, c := range comps {
		if c.PID > 0 {
			roots[c.PID] = true
		}
	}
	procs, err := procfs.AllProcs()
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	parent := map[int]int{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			parent[p.PID] = st.PPID
		}
	}
	inCluster := func(pid int) bool {
		for depth := 0; pid > 1 && depth < 64; depth++ {
			if roots[pid] {
				return true
			}
			pid = parent[pid]
		}
		return false
	}
	var total uint64
	for _, p := range procs {
		if !inCluster(p.PID) {
			continue
		}
		if r, err := p.ProcSMapsRollup(); err == nil {
			total += r.Pss
		}
	}
	return float64(total) / (1 << 20), nil
}

// WriteUp prints rows as a table.
func WriteUp(w io.Writer, rows []UpRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "BACKEND\tTOPOLOGY\tSEEDED\tOBSERVED\tRUNS\tUSABLE s (min / median / max)\tMACHINE CPU-s TO USABLE (min / median / max)\tCORES BUSY (median, of %d)\tDOWN s (min / median / max)\tPSS MiB (min / median / max)\n", runtime.NumCPU())
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%t\t%d\t%s\t%s\t%.2f\t%s\t%s\n", r.Case.Backend, r.Case.Name, r.Case.Seeded(), r.Case.Observed(), r.Runs, r.Usable, r.CPU, r.Cores, r.Down, r.PSS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Where the time to usable goes: medians, in seconds from up.
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tTOPOLOGY\tSEEDED\tOBSERVED\tETCD LEADER s\tAPISERVER SERVES s\tHOOKS DONE (/healthz) s\tNODES READY s\tDEFAULT SA s\tDNS s\tALL APISERVERS s\tUSABLE s (medians)")
	phase := func(s float64) string {
		if s == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", s)
	}
	for _, r := range rows {
		p := r.Phases
		fmt.Fprintf(tw, "%s\t%s\t%t\t%t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\n", r.Case.Backend, r.Case.Name, r.Case.Seeded(), r.Case.Observed(),
			phase(p.EtcdLeader), phase(p.Serving), phase(p.Healthz), phase(p.NodesReady), phase(p.ServiceAccount), phase(p.DNS), phase(p.APIServers), r.Usable.Median)
	}
	return tw.Flush()
}
