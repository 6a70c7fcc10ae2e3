package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

func TestUpTakesTheCasesInTurn(t *testing.T) {
	settle = 0
	var booted []string
	newBackend := func(backend string, topo cluster.Topology) (cluster.Backend, error) {
		booted = append(booted, backend+"/"+topo.Name)
		return clustertest.New(topo, &clustertest.Log{}, clustertest.Faults{}), nil
	}
	cases := Cases([]string{"embedded"}, []bool{false, true}, []bool{false})
	rows, err := Up(context.Background(), newBackend, cases, 2, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	// First a warm-up boot of the backend, from the seed.
	want := []string{"embedded/" + cases[1].Topology.Name + "-0"}
	if !cases[1].Seeded() {
		t.Fatalf("case 1 is not the seeded one: %+v", cases[1])
	}
	for run := range 2 {
		for _, c := range cases {
			want = append(want, "embedded/"+c.Topology.Name+"-"+string(rune('1'+run)))
		}
	}
	if !slices.Equal(booted, want) {
		t.Errorf("booted %q, want each run of every case before the next run: %q", booted, want)
	}
	if len(rows) != len(cases) {
		t.Fatalf("%d rows, want one per case (%d)", len(rows), len(cases))
	}
	for i, r := range rows {
		if r.Case.Name != cases[i].Name || r.Case.Seeded() != cases[i].Seeded() || r.Runs != 2 {
			t.Errorf("row %d: %s seeded %t, %d runs; want %s seeded %t, 2 runs", i, r.Case.Name, r.Case.Seeded(), r.Runs, cases[i].Name, cases[i].Seeded())
		}
	}
}

func TestCPUByRoleCountsThisProcess(t *testing.T) {
	ctx := context.Background()
	b := clustertest.New(cluster.Topology{}, nil, clustertest.Faults{})
	if err := b.Up(ctx, func(cluster.Event) {}); err != nil {
		t.Fatal(err)
	}
	// Spend some CPU, so that this process's row cannot read 0.
	for x, start := 0, time.Now(); time.Since(start) < 50*time.Millisecond; x++ {
		_ = x * x
	}
	cpu, err := CPUByRole(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if cpu[RoleSelf] <= 0 {
		t.Errorf("%s: %.2f CPU-s, want this process's", RoleSelf, cpu[RoleSelf])
	}
	// The fake's components have no process: only this one is counted.
	if len(cpu) != 1 {
		t.Errorf("roles %v, want %s alone", cpu, RoleSelf)
	}
}

func TestPhasesReadTheBootsProgress(t *testing.T) {
	ev := func(s float64, comp, msg string) cluster.Event {
		return cluster.Event{Component: comp, Message: msg, Elapsed: time.Duration(s * float64(time.Second))}
	}
	boot := func(k float64) Phases {
		var p Phases
		for _, e := range []cluster.Event{
			ev(0.1*k, "etcd", "waiting for Raft quorum and a leader"),
			ev(0.5*k, "etcd-2", "ready"),
			ev(0.6*k, "etcd-1", "ready"),
			ev(1.5*k, "kube-apiserver-1", "ready"),
			ev(1.5*k, "cluster", lifecycle.EventServing),
			ev(2.5*k, "kube-apiserver", lifecycle.EventHealthz),
			ev(1.6*k, "nodes", "nodes Ready 0/3"),
			ev(2.9*k, "nodes", "nodes Ready 2/3"),
			ev(3.0*k, "nodes", "nodes Ready 3/3"),
			ev(3.1*k, "cluster", lifecycle.EventServiceAccount),
			ev(3.2*k, "coredns", lifecycle.EventDNS),
			ev(3.4*k, "kube-apiserver-2", "ready"),
			ev(3.4*k, "cluster", lifecycle.EventControlPlaneReady),
		} {
			p.observe(e)
		}
		return p
	}
	want := Phases{EtcdLeader: 0.6, Serving: 1.5, Healthz: 2.5, APIServers: 3.4, NodesReady: 3.0, ServiceAccount: 3.1, DNS: 3.2}
	got := medianPhases([]Phases{boot(2), boot(1), boot(0.5)})
	if got != want {
		t.Errorf("median phases %+v, want %+v", got, want)
	}

	var out strings.Builder
	rows := []UpRow{{Case: Case{Name: "ha", Backend: "embedded"}, Runs: 3, Usable: Stats{3.3, 3.4, 3.5}, CPU: Stats{6, 6.5, 7}, Cores: 1.91, Phases: want},
		{Case: Case{Name: "minimal", Backend: "kubeconfig"}, Runs: 1, Usable: Stats{1, 1, 1}}}
	if err := WriteUp(&out, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if n := len(lines); n != 7 || !strings.Contains(lines[4], "ETCD LEADER s") {
		t.Fatalf("want the usable table, a blank line and the phases table:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); !slices.Equal(f[10:15], []string{"6.00", "/", "6.50", "/", "7.00"}) || f[15] != "1.91" {
		t.Errorf("usable row %q: want the machine's CPU-seconds to usable and the cores busy", lines[1])
	}
	if f := strings.Fields(lines[5]); !slices.Equal(f[4:], []string{"0.60", "1.50", "2.50", "3.00", "3.10", "3.20", "3.40", "3.40"}) {
		t.Errorf("phases row %q", lines[5])
	}
	if f := strings.Fields(lines[6]); !slices.Equal(f[4:], []string{"-", "-", "-", "-", "-", "-", "-", "1.00"}) {
		t.Errorf("a backend without phases: row %q, want dashes", lines[6])
	}
}

func TestMachineCPU(t *testing.T) {
	before := machineCPU()
	if before <= 0 {
		t.Skip("no /proc/stat here")
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	if after := machineCPU(); after <= before {
		t.Errorf("machine CPU %.2f s after a busy loop, %.2f s before: want it to grow", after, before)
	}
}
