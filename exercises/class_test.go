package exercises

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

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/kubeconfig"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/grade/class"
	"kubelab.dev/kubelab/internal/testbin"
)

// TestClassGradingOnADockerCluster grades 4 submissions of
// fix-service-selector (2 right, 2 wrong) in pods of a docker-backend
// "class cluster" with real kubelets: each scores, passes and fails the
// checks the exercise file declares for its sample (what
// TestExerciseSamples holds local grading to), and the grading namespace
// is gone afterwards.
func TestClassGradingOnADockerCluster(t *testing.T) {
	enginetest.NeedDocker(t, "class grading")
	pool.Run(t, 2*time.Minute) // a docker cluster, its image and four gradings: 60-107 s
	ctx := t.Context()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := grade.LoadExercise("fix-service-selector")
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]string{
		"ada": "solution", "brian": "solution", "carla": "wrong/selector-only", "dan": "wrong/selector-only",
	}
	learners := classOf(t, ex.Dir(), samples)

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

	declared := map[string]v1alpha1.Sample{}
	for _, sm := range ex.Spec.Samples {
		declared[sm.Path] = sm
	}
	for i, l := range learners {
		c, want := onCluster[i], declared[samples[l.Name]]
		t.Logf("%s: %s %d/%d, failed %q", l.Name, c.Status, c.Score, c.Max, c.Failed())
		if c.Status != grade.StatusGraded {
			t.Errorf("%s: %s (%s); want graded", l.Name, c.Status, c.Error)
			continue
		}
		fails := want.Fails
		if fails == nil {
			fails = []string{}
		}
		got := c.Failed()
		if got == nil {
			got = []string{}
		}
		if c.Score != want.Score || c.Passed != (want.Score >= ex.PassingScore()) || !slices.Equal(got, fails) || c.Learner != l.Name || c.Submission != l.Dir {
			t.Errorf("%s (%s): class cluster %d/%d passed %t failed %q; the exercise declares %d, failed %q", l.Name, want.Path, c.Score, c.Max, c.Passed, got, want.Score, fails)
		}
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
