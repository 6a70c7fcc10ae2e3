package curriculum_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"kubelab.dev/kubelab/curriculum"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/load"
)

// materials loads every shipped lab, drill and exercise.
func materials(t *testing.T) []curriculum.Material {
	t.Helper()
	var ms []curriculum.Material
	labs, _ := filepath.Glob("../labs/*.yaml")
	more, _ := filepath.Glob("../labs/docker/*.yaml")
	for _, f := range append(labs, more...) {
		l, err := load.ReadLab(f)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, curriculum.Material{Kind: "lab", Path: strings.TrimPrefix(f, "../"), Topics: l.Metadata.Topics})
	}
	drills, err := features.Load("../features", "../features/docker")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drills {
		ms = append(ms, curriculum.Material{Kind: "drill", Path: strings.TrimPrefix(d.Path, "../"), Topics: d.Topics})
	}
	exs, _ := filepath.Glob("../exercises/*/exercise.yaml")
	for _, f := range exs {
		e, err := grade.LoadExercise(f)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, curriculum.Material{Kind: "exercise", Path: strings.TrimPrefix(f, "../"), Topics: e.Metadata.Topics})
	}
	return ms
}

// completeNow is how many topics have both a lab and a drill. It may only
// rise: a change that leaves a topic without its lab or drill fails here.
// When it rises, raise it; at 22 every topic is covered.
const completeNow = 24

func TestEveryMaterialNamesKnownTopics(t *testing.T) {
	cs, err := curriculum.Index(materials(t))
	if err != nil {
		t.Fatal(err)
	}
	complete := 0
	var missing []string
	for _, c := range cs {
		if c.Complete() {
			complete++
		} else {
			missing = append(missing, c.ID)
		}
	}
	var out bytes.Buffer
	if err := curriculum.Write(&out, cs); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	if complete < completeNow {
		t.Errorf("%d topics have a lab and a drill, %d did before; without: %s", complete, completeNow, strings.Join(missing, ", "))
	}
	if complete > completeNow {
		t.Errorf("%d topics now have a lab and a drill: raise completeNow from %d (still without: %s)", complete, completeNow, strings.Join(missing, ", "))
	}
}

func TestUnknownTopicIsAnError(t *testing.T) {
	_, err := curriculum.Index([]curriculum.Material{{Kind: "lab", Path: "labs/x.yaml", Topics: []string{"etcd-raf"}}})
	if err == nil || !strings.Contains(err.Error(), `labs/x.yaml: unknown topic "etcd-raf"`) || !strings.Contains(err.Error(), "etcd-raft") {
		t.Fatalf("got %v", err)
	}
}
