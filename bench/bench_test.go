package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
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
	var want []string
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
