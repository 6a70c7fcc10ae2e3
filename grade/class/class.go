// Package class grades a class's submissions on a Kubernetes cluster
// instead of one machine: one Indexed Job whose pod i runs `kubelab
// grade-pod`, which grades submission i on an embedded cluster inside the
// pod (unprivileged, no Docker). The exercise and the submissions travel
// as ConfigMaps, the grades come back in the pods' logs, and the Job's
// namespace is removed afterwards. The grades are the same values local
// batch grading makes, so the scoreboard and reports are written by the
// same code.
package class

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubelab.dev/kubelab/cluster/kubeconfig"
	"kubelab.dev/kubelab/grade"
)

// Options say where and how a class is graded.
type Options struct {
	// Config reaches the class cluster.
	Config *rest.Config
	// Image is the grader image the pods run (`kubelab images build`
	// makes it; push it to a registry the cluster pulls from, or load it
	// into a docker-backend cluster with `kubelab images load`).
	Image string
	// Parallel is how many submissions are graded at a time (at least 1).
	Parallel int
	// Progress is told what happens (nil: nothing).
	Progress func(string)
}

// Run grades every learner's submission of ex on the class cluster and
// returns their grades in the learners' order. A submission that could
// not be graded (unreadable, or its pod failed twice) is a grade with
// Status grade.StatusError, never a score. The error is for a run that
// could not happen at all (the cluster refused the Job, an interrupt).
func Run(ctx context.Context, o Options, ex *grade.Exercise, learners []grade.Learner) ([]*grade.Grade, error) {
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	o.Parallel = max(1, min(o.Parallel, len(learners)))
	cfg := rest.CopyConfig(o.Config)
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("class cluster: %w", err)
	}
	exArchive, err := Pack(ex.Dir())
	if err != nil {
		return nil, fmt.Errorf("exercise %s: %w", ex.Metadata.Name, err)
	}
	out := make([]*grade.Grade, len(learners))
	var sent []submission // Job index i grades sent[i]
	for i, l := range learners {
		b, err := Pack(l.Dir)
		if err != nil {
			out[i] = grade.NotGraded(ex, l.Name, l.Dir, "%v", err)
			continue
		}
		sent = append(sent, submission{i, l, b})
	}
	if len(sent) == 0 {
		return out, nil
	}
	r := &classRun{cs: cs, o: o, ex: ex}
	if err := r.makeNamespace(ctx); err != nil {
		return nil, err
	}
	defer r.removeNamespace(ctx)
	if err := r.submit(ctx, exArchive, sent); err != nil {
		return nil, err
	}
	if err := r.wait(ctx, len(sent)); err != nil {
		return nil, err
	}
	for idx, sub := range sent {
		out[sub.at] = r.collect(ctx, idx, sub.learner)
	}
	return out, nil
}

// submission is a learner's submission sent to the class cluster: its
// place among the learners and its packed directory.
type submission struct {
	at      int
	learner grade.Learner
	archive []byte
}

// classRun is one Run: its namespace and labels on the class cluster.
type classRun struct {
	cs     kubernetes.Interface
	o      Options
	ex     *grade.Exercise
	ns     string
	labels map[string]string
}

func (r *classRun) makeNamespace(ctx context.Context) error {
	id := strings.ToLower(rand.Text()[:8])
	r.labels = map[string]string{kubeconfig.LabelManaged: "true", kubeconfig.LabelRun: "grade-" + id}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubelab-grade-" + id, Labels: r.labels}}
	if _, err := r.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("class cluster: create namespace %s: %w", ns.Name, err)
	}
	r.ns = ns.Name
	return nil
}

// removeNamespace deletes the run's namespace, and with it the Job, its
// pods and the ConfigMaps, even when ctx was cancelled (Ctrl-C).
func (r *classRun) removeNamespace(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	err := r.cs.CoreV1().Namespaces().Delete(ctx, r.ns, metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationBackground)})
	if err != nil {
		r.o.Progress(fmt.Sprintf("could not remove namespace %s: %v", r.ns, err))
		return
	}
	r.o.Progress("removed namespace " + r.ns)
}

func (r *classRun) submit(ctx context.Context, exArchive []byte, sent []submission) error {
	cms := []*corev1.ConfigMap{configMap("exercise", map[string][]byte{"exercise.tgz": exArchive}, map[string]string{"file": filepath.Base(r.ex.File())}, r.labels)}
	for idx, sub := range sent {
		cms = append(cms, configMap(submissionConfigMap(idx), map[string][]byte{"submission.tgz": sub.archive}, map[string]string{"learner": sub.learner.Name}, r.labels))
	}
	for _, cm := range cms {
		if _, err := r.cs.CoreV1().ConfigMaps(r.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("class cluster: create ConfigMap %s/%s: %w", r.ns, cm.Name, err)
		}
	}
	j := job(r.o.Image, len(sent), r.o.Parallel, r.ex.Timeout(), r.labels)
	if _, err := r.cs.BatchV1().Jobs(r.ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("class cluster: create Job %s/%s: %w", r.ns, jobName, err)
	}
	r.o.Progress(fmt.Sprintf("grading %d submissions of %s in Job %s/%s, %d at a time, image %s", len(sent), r.ex.Metadata.Name, r.ns, jobName, r.o.Parallel, r.o.Image))
	return nil
}

// wait returns when the Job has finished: every index succeeded or
// failed its retry, or the Job's deadline passed.
func (r *classRun) wait(ctx context.Context, n int) error {
	last := ""
	return wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		j, err := r.cs.BatchV1().Jobs(r.ns).Get(ctx, jobName, metav1.GetOptions{})
		if err != nil {
			return false, nil // the apiserver may blink; the deadline is the Job's
		}
		failed := 0
		if j.Status.FailedIndexes != nil && *j.Status.FailedIndexes != "" {
			failed = len(indexes(*j.Status.FailedIndexes))
		}
		if s := fmt.Sprintf("graded %d/%d, could not grade %d, grading %d", j.Status.Succeeded, n, failed, j.Status.Active); s != last {
			r.o.Progress(s)
			last = s
		}
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// collect is the grade of Job index idx: from the log of its pod that
// succeeded, or "could not grade" with why its last pod failed.
func (r *classRun) collect(ctx context.Context, idx int, l grade.Learner) *grade.Grade {
	pl, err := r.cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: indexLabel + "=" + strconv.Itoa(idx)})
	if err != nil {
		return grade.NotGraded(r.ex, l.Name, l.Dir, "could not list its grading pods: %v", err)
	}
	pods := pl.Items
	sort.Slice(pods, func(i, j int) bool { return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp) })
	var why []string
	for _, p := range pods {
		g, err := r.result(ctx, &p)
		if p.Status.Phase == corev1.PodSucceeded && err == nil {
			g.Learner, g.Submission, g.File = l.Name, l.Dir, r.ex.File()
			return g
		}
		switch {
		case g != nil && g.Error != "":
			why = append(why, fmt.Sprintf("pod %s: %s", p.Name, g.Error))
		default:
			why = append(why, fmt.Sprintf("pod %s: %s", p.Name, podFailure(&p, err)))
		}
	}
	if len(pods) == 0 {
		why = append(why, "no pod ran (the Job's deadline passed first)")
	}
	return grade.NotGraded(r.ex, l.Name, l.Dir, "could not grade on the class cluster after %d pods: %s", len(pods), strings.Join(why, "; "))
}

func (r *classRun) result(ctx context.Context, p *corev1.Pod) (*grade.Grade, error) {
	rc, err := r.cs.CoreV1().Pods(r.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("read its log: %w", err)
	}
	defer rc.Close()
	return ReadResult(rc)
}

// podFailure says why a grading pod ended without a grade.
func podFailure(p *corev1.Pod, logErr error) string {
	parts := []string{string(p.Status.Phase)}
	if p.Status.Reason != "" {
		parts = append(parts, p.Status.Reason)
	}
	if p.Status.Message != "" {
		parts = append(parts, p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			parts = append(parts, fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason))
		} else if w := cs.State.Waiting; w != nil {
			parts = append(parts, w.Reason+": "+w.Message)
		}
	}
	if logErr != nil && !errors.Is(logErr, errNoResult) {
		parts = append(parts, logErr.Error())
	}
	return strings.Join(parts, ", ")
}

// indexes parses a Job's index list, e.g. "1,3-5".
func indexes(s string) []int {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out
}
