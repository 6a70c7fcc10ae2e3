package observe

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDecisionLogFollowsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kube-scheduler-1.jsonl")
	l := NewDecisionLog(path)
	if err := l.Update(); err != nil {
		t.Fatalf("a log not written yet: %v", err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"pod":"default/a","result":"Unschedulable","time":"2026-01-01T00:00:00Z"}` + "\n")
	write(`{"pod":"default/b","result":"Scheduled","selected":"w-1","total":{"w-1":300,"w-2":300},"time":"2026-01-01T00:00:01Z"}` + "\n")
	write(`{"pod":"default/a","result":"Sched`) // being written
	if err := l.Update(); err != nil {
		t.Fatal(err)
	}
	if d, ok := l.Latest("default/a"); !ok || d.Result != "Unschedulable" {
		t.Errorf("a before its second line is complete: %+v, %v", d, ok)
	}
	write(`uled","selected":"w-2","time":"2026-01-01T00:00:02Z"}` + "\n")
	if err := l.Update(); err != nil {
		t.Fatal(err)
	}
	if d, _ := l.Latest("default/a"); d.Result != "Scheduled" || d.Selected != "w-2" {
		t.Errorf("a after its second cycle: %+v", d)
	}
	if d, _ := l.Latest("default/b"); len(d.Best()) != 2 || d.Best()[0] != "w-1" {
		t.Errorf("b's best on a tie: %v", d.Best())
	}
	if _, ok := l.Latest("default/c"); ok {
		t.Error("a pod never scheduled has a decision")
	}
}
