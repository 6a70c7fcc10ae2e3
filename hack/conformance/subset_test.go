package conformance

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestEmbeddedSubsetNamesEverySpecOnce checks the list that defines the
// embedded backend's subset: each of the 462 [Conformance] specs of
// v1.37.2 once, each with a known code. (hack/conformance.sh checks the
// names against the e2e binary itself before it runs them.) The specs
// CI runs on embedded must be among those the list marks run.
func TestEmbeddedSubsetNamesEverySpecOnce(t *testing.T) {
	f, err := os.Open("embedded-subset.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run := map[string]bool{}
	codes := map[string]int{"run": 0, "pod-server": 0, "exec": 0, "output": 0, "traffic": 0, "exit": 0, "kubelet": 0}
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, name, ok := strings.Cut(line, "\t")
		if _, known := codes[code]; !ok || !known {
			t.Errorf("embedded-subset.txt:%d: want a code (run, pod-server, exec, output, traffic, exit, kubelet), a tab and a spec name; found %q", n, line)
			continue
		}
		if !strings.HasPrefix(name, "[sig-") || strings.Contains(name, "[Conformance]") {
			t.Errorf("embedded-subset.txt:%d: want a spec name from its [sig-...] up to \" [Conformance]\"; found %q", n, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("embedded-subset.txt:%d: %q is already on line %d", n, name, prev)
		}
		seen[name] = n
		codes[code]++
		run[name] = code == "run"
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 462 {
		t.Errorf("embedded-subset.txt names %d specs; v1.37.2 has 462 [Conformance] specs", len(seen))
	}
	if codes["run"] == 0 {
		t.Error("embedded-subset.txt has no spec to run")
	}
	for _, spec := range embeddedSubset {
		name, _, _ := strings.Cut(spec, " [Conformance]")
		if !run[name] {
			t.Errorf("the CI's embedded subset runs %q, which embedded-subset.txt does not mark run", name)
		}
	}
	t.Logf("codes: %v", codes)
}
