package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc\n"}, // no newline at the end
		{"a\nb\n", 5, "a\nb\n"},
		{"", 3, ""},
		{"a\n", 0, ""},
	} {
		got, err := LastLines(strings.NewReader(c.in), c.n)
		if err != nil || got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, %v; want %q", c.in, c.n, got, err, c.want)
		}
	}
}

// logFake is a backend with fixed components and logs.
type logFake struct {
	Backend // nil: only what ExitedTails calls is implemented
	comps   []Component
	logs    map[string]string
}

func (f logFake) Components(context.Context) ([]Component, error) { return f.comps, nil }

func (f logFake) ComponentLog(_ context.Context, name string, _ LogOptions) (io.ReadCloser, error) {
	l, ok := f.logs[name]
	if !ok {
		return nil, fmt.Errorf("logs of %s: %w", name, ErrNoLog)
	}
	return io.NopCloser(strings.NewReader(l)), nil
}

// TestExitedTails: the components that exited on their own, and only
// they, are shown with their last lines; one without a log is named.
func TestExitedTails(t *testing.T) {
	c := New(logFake{
		comps: []Component{
			{Name: "etcd-1", State: StateRunning},
			{Name: "kube-apiserver-1", State: StateExited, Exit: "exit status 1"},
			{Name: "kube-scheduler-1", State: StateStopped},
			{Name: "worker-1", State: StateExited},
		},
		logs: map[string]string{
			"etcd-1":           "fine\n",
			"kube-apiserver-1": "starting\nlistening\nE bind: address already in use\n",
			"kube-scheduler-1": "killed by the lab\n",
		},
	}, nil)
	got := c.ExitedTails(t.Context(), 2)
	want := "kube-apiserver-1 exited on its own (exit status 1); the last lines it wrote:\n  listening\n  E bind: address already in use\nworker-1 exited on its own."
	if got != want {
		t.Errorf("ExitedTails:\n%s\nwant:\n%s", got, want)
	}
	c = New(logFake{comps: []Component{{Name: "etcd-1", State: StateRunning}}}, nil)
	if got := c.ExitedTails(t.Context(), 2); got != "" {
		t.Errorf("ExitedTails with none exited: %q", got)
	}
}
