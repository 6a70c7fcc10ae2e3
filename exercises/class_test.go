package exercises_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/kubeconfig"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/grade/class"
	"kubelab.dev/kubelab/internal/testbin"
)

// TestClassGradingOnADockerCluster grades 4 submissions of pdb-drain (2
// right, 2 wrong) in pods of a docker-backend "class cluster" with real
// kubelets, and locally: the scores, statuses and failed checks are the
// same, and the grading namespace is gone afterwards.
func TestClassGradingOnADockerCluster(t *testing.T) {
	enginetest.NeedDocker(t, "class grading")
	ctx := t.Context()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := grade.LoadExercise("pdb-drain")
	if err != nil {
		t.Fatal(err)
	}
	learners := classOf(t, ex.Dir(), map[string]string{
		"ada": "solution", "brian": "solution", "carla": "wrong/min-available-1", "dan": "wrong/wrong-selector",
	})

	b := enginetest.Backend(t, "docker", cluster.Topology{Name: "class", Workers: 2}).(*docker.Backend)
	t.Cleanup(func() {
		if err := b.Down(context.WithoutCancel(ctx)); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	if err := b.Up(ctx, func(e cluster.Event) { t.Logf("%6.2fs %s: %s", e.Elapsed.Seconds(), e.Component, e.Message) }); err != nil {
		t.Fatalf("up: %v", err)
	}
	say := func(s string) { t.Log(s) }
	image, err := docker.BuildGrader(ctx, bin, say)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.LoadImage(ctx, image, say); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", b.Access().Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	onCluster, err := class.Run(ctx, class.Options{Config: cfg, Image: image, Parallel: 2, Progress: say}, ex, learners)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graded %d submissions on the class cluster in %s", len(learners), time.Since(start).Round(time.Second))
	start = time.Now()
	local, err := grade.RunAll(ctx, enginetest.Runner(t), ex, learners, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graded %d submissions locally in %s", len(learners), time.Since(start).Round(time.Second))

	for i, l := range learners {
		c, g := onCluster[i], local[i]
		t.Logf("%s: class cluster %s %d/%d, local %s %d/%d", l.Name, c.Status, c.Score, c.Max, g.Status, g.Score, g.Max)
		if c.Status != grade.StatusGraded || g.Status != grade.StatusGraded {
			t.Errorf("%s: class cluster %s (%s), local %s (%s); want both graded", l.Name, c.Status, c.Error, g.Status, g.Error)
			continue
		}
		if c.Score != g.Score || c.Passed != g.Passed || !slices.Equal(c.Failed(), g.Failed()) || c.Learner != l.Name || c.Submission != l.Dir {
			t.Errorf("%s: class cluster %d/%d failed %q, local %d/%d failed %q", l.Name, c.Score, c.Max, c.Failed(), g.Score, g.Max, g.Failed())
		}
	}
	if onCluster[0].Score != onCluster[0].Max || onCluster[2].Score == onCluster[2].Max {
		t.Errorf("the right answer scored %d, a wrong one %d (of %d)", onCluster[0].Score, onCluster[2].Score, onCluster[0].Max)
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kubeconfig.LabelManaged + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		if strings.HasPrefix(ns.Name, "kubelab-grade-") && ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s is left on the class cluster", ns.Name)
		}
	}
}

// classOf makes a submissions directory: learner -> copy of a sample of
// the exercise in dir.
func classOf(t *testing.T, dir string, samples map[string]string) []grade.Learner {
	t.Helper()
	root := t.TempDir()
	for name, sample := range samples {
		if err := os.CopyFS(filepath.Join(root, name), os.DirFS(filepath.Join(dir, sample))); err != nil {
			t.Fatal(err)
		}
	}
	learners, err := grade.Learners(root)
	if err != nil {
		t.Fatal(err)
	}
	return learners
}
