package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// labShape is what a report says of a lab, less the times: the content
// --parallel must not change.
type labShape struct {
	Lab    string
	Status string
	Steps  []string
}

func reportShape(t *testing.T, path string) []labShape {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Lab    string `json:"lab"`
			Status string `json:"status"`
			Steps  []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"steps"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []labShape
	for _, r := range rep.Results {
		s := labShape{Lab: r.Lab, Status: r.Status}
		for _, st := range r.Steps {
			s.Steps = append(s.Steps, st.Name+"="+st.Status)
		}
		out = append(out, s)
	}
	return out
}

var progressLine = regexp.MustCompile(`^\s*\d+\.\d+s (?:✔ |✘ |  )(\S+) \| `)

// TestRunParallelGroupsOutputAndKeepsReports runs a failing and a
// passing lab on fake clusters, in turn and side by side: the same
// report, and each lab's progress in one block.
func TestRunParallelGroupsOutputAndKeepsReports(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	h := newFakeHome(t, oneReadyWorker)
	dir := t.TempDir()
	labs := []string{
		writeTestFile(t, filepath.Join(dir, "failing.yaml"), `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: failing, title: A lab whose wait cannot pass}
spec:
  steps:
  - name: expect three
    try:
    - wait: {expr: 'len(nodes()) == 3'}
      timeout: 1s
  - name: never reached
    try:
    - sleep: {duration: 1s}
`),
		writeTestFile(t, filepath.Join(dir, "passing.yaml"), `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: passing, title: A lab that passes at once}
spec:
  steps:
  - name: the node is ready
    try:
    - wait: {expr: 'node("worker-1").ready'}
  - name: a short wait
    try:
    - sleep: {duration: 500ms}
`),
	}
	inTurn, sideBySide := filepath.Join(dir, "in-turn.json"), filepath.Join(dir, "side-by-side.json")
	if out, code := h.run(t.Context(), append([]string{"run", "--json", inTurn}, labs...)...); code != 1 {
		t.Fatalf("in turn: exit code %d, want 1:\n%s", code, out)
	}
	out, code := h.run(t.Context(), append([]string{"run", "--parallel", "2", "--json", sideBySide}, labs...)...)
	if code != 1 {
		t.Fatalf("side by side: exit code %d, want 1:\n%s", code, out)
	}
	if !strings.Contains(out, "running 2 labs, 2 at a time") {
		t.Errorf("no announcement of the parallel run:\n%s", out)
	}
	if a, b := reportShape(t, inTurn), reportShape(t, sideBySide); len(a) != 2 || !slices.EqualFunc(a, b, func(x, y labShape) bool {
		return x.Lab == y.Lab && x.Status == y.Status && slices.Equal(x.Steps, y.Steps)
	}) {
		t.Errorf("--parallel changed the report:\nin turn      %+v\nside by side %+v", a, b)
	}
	// Each lab's progress lines come in one block.
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if m := progressLine.FindStringSubmatch(l); m != nil && (len(order) == 0 || order[len(order)-1] != m[1]) {
			order = append(order, m[1])
		}
	}
	if len(order) != 2 || order[0] == order[1] {
		t.Errorf("progress is not grouped per lab: blocks %v\n%s", order, out)
	}
}

func TestBadRunValuesAreRefused(t *testing.T) {
	h := newFakeHome(t, oneReadyWorker)
	kc := writeTestFile(t, filepath.Join(t.TempDir(), "config"), `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dev, context: {cluster: c, user: u}}]
current-context: dev
`)
	for _, args := range [][]string{
		{"run", "--parallel", "0", "testdata/passing.yaml"},
		{"run", "--parallel", "2", "--backend", "kubeconfig", "--kubeconfig", kc, "testdata/passing.yaml"},
	} {
		out, code := h.run(t.Context(), args...)
		if code != 2 || !strings.Contains(out, "--parallel") {
			t.Errorf("kubelab %s: exit %d, want 2 with a word on --parallel:\n%s", strings.Join(args, " "), code, out)
		}
	}
	// A kubeconfig that is not there, or lacks the context, is bad input
	// for every command that takes one, found before anything runs.
	drill := writeTestFile(t, filepath.Join(t.TempDir(), "d.feature"), "Feature: f\n  Question: q?\n\n  Model answer:\n    a.\n\n  Scenario: s\n    Given a lab cluster with 1 worker\n")
	for _, args := range [][]string{
		{"run", "testdata/passing.yaml", "--backend", "kubeconfig", "--kubeconfig", kc + ".missing"},
		{"drill", drill, "--no-prompt", "--backend", "kubeconfig", "--kubeconfig", kc + ".missing"},
		{"run", "testdata/passing.yaml", "--backend", "kubeconfig", "--kubeconfig", kc, "--context", "prod"},
	} {
		out, code := h.run(t.Context(), args...)
		if code != 2 || !strings.Contains(out, "kubeconfig "+kc) || strings.Contains(out, "backend: up") {
			t.Errorf("kubelab %s: exit %d, want 2 naming the kubeconfig, nothing run:\n%s", strings.Join(args, " "), code, out)
		}
	}
}
