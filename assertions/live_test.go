package assertions

import (
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestToPodQOSAndLastTermination(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: "default"},
		Status: corev1.PodStatus{
			QOSClass: corev1.PodQOSBurstable,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "side", RestartCount: 1, LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", FinishedAt: at(10)}}},
				{Name: "hog", RestartCount: 2, LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: at(20)}}},
			},
		},
	}
	got := toPod(p)
	if got.QOS != "Burstable" || got.LastTermination != "OOMKilled" || got.Restarts != 3 {
		t.Errorf("qos %q, lastTermination %q, restarts %d; want Burstable, OOMKilled (the latest), 3", got.QOS, got.LastTermination, got.Restarts)
	}
	// The container's current state counts as well: it ended after the
	// termination before its restart.
	p.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: at(30)}
	if got := toPod(p); got.LastTermination != "Completed" {
		t.Errorf("lastTermination %q, want Completed", got.LastTermination)
	}
	if got := toPod(&corev1.Pod{}); got.LastTermination != "" || got.QOS != "" {
		t.Errorf("a pod nothing ran in: %+v", got)
	}
}

func TestQuantity(t *testing.T) {
	for src, want := range map[string]bool{
		`quantity("250m") == 0.25`:                 true,
		`quantity("128Mi") == 134217728`:           true,
		`quantity("1") > quantity("999m")`:         true,
		`quantity("2Gi") / quantity("1Gi") == 2`:   true,
		`quantity(3) == 3 && quantity(0.5) == 0.5`: true,
	} {
		c, err := Compile(src, nil, true)
		if err != nil {
			t.Fatalf("compile %s: %v", src, err)
		}
		got, err := Eval(t.Context(), c, nil, nil)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
	c, err := Compile(`quantity("12MB") > 0`, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Eval(t.Context(), c, nil, nil); err == nil {
		t.Error(`quantity("12MB") evaluated; want an error`)
	}
}

func TestFailedChecks(t *testing.T) {
	// What a restarting kube-apiserver answers on /readyz?verbose (500).
	body := "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n" +
		"[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n"
	got := failedChecks([]byte(body))
	if want := []string{"etcd", "poststarthook/rbac/bootstrap-roles"}; !slices.Equal(got, want) {
		t.Errorf("failedChecks = %q, want %q", got, want)
	}
	if got := failedChecks([]byte("[+]ping ok\n[+]etcd ok\nreadyz check passed\n")); got != nil {
		t.Errorf("a ready apiserver: failedChecks = %q, want none", got)
	}
	err := &url.Error{Op: "Get", URL: "https://127.0.0.1:1/readyz?verbose", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	if got := noAnswer(err); got != "connection refused" {
		t.Errorf("noAnswer = %q, want %q", got, "connection refused")
	}
}
