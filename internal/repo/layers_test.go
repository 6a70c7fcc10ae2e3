package repo

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// layers are kubelab's packages from the top down (see the README's
// table): a package may import its own layer and those below it, never
// one above. A prefix matches a package and those under it.
var layers = [][]string{
	{"cmd", "hack"},
	{"ui", "grade", "features", "bench"},
	{"engine"},
	{"load", "internal/loadertest"},
	{"api"},
	{"ops"},
	{"assertions"},
	{"cluster", "report", "observe", "internal", "curriculum", "schema", "labs", "exercises", "images", ""},
}

const module = "kubelab.dev/kubelab"

// layerOf is the index in layers of a package of this module.
func layerOf(pkg string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	for i, l := range layers {
		for _, p := range l {
			if p == "" && rel == "" || p != "" && (rel == p || strings.HasPrefix(rel, p+"/")) {
				return i
			}
		}
	}
	return -1
}

// TestLayers: no package imports one of a layer drawn above its own
// (go list's imports, tests excluded), and the wire format imports no
// package of kubelab: neither the engine nor the operation kinds.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		from := layerOf(p.ImportPath)
		if from < 0 {
			t.Errorf("%s is in no layer: add it to layers", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if to := layerOf(imp); to < from {
				t.Errorf("%s (layer %v) imports %s, of a layer above it (%v)", p.ImportPath, layers[from], imp, layers[to])
			}
			if strings.HasPrefix(p.ImportPath, module+"/api/") {
				t.Errorf("the wire format %s imports %s: it says what a file may carry and imports none of kubelab (package load converts it)", p.ImportPath, imp)
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list listed %d packages", seen)
	}
}

// TestCommandLineLinksNoComponent: kubelab's command line starts in a
// fraction of the time because it links none of the upstream components
// (they run from kubelab-components, see internal/binaries). One import of
// a component package would bring back ~700 package initialisers to every
// kubelab command, silently: this test says so.
func TestCommandLineLinksNoComponent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/kubelab").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list listed %d packages", len(deps))
	}
	for _, d := range deps {
		for _, banned := range []string{module + "/internal/components", "k8s.io/kubernetes/", "go.etcd.io/etcd/server/", "k8s.io/kubectl/pkg/cmd", "sigs.k8s.io/kwok/pkg/kwok"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("cmd/kubelab links %s: components belong in cmd/kubelab-components", d)
			}
		}
	}
}
