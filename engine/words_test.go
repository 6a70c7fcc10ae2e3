package engine

import (
	"testing"
	"time"

	"kubelab.dev/kubelab/internal/i18n"
)

// TestWordsIn: the timeline's details and the recoveries read in the
// learner's language; what is not a known shape (Kubernetes' own words,
// a phase change) stays as written; English is unchanged.
func TestWordsIn(t *testing.T) {
	zh, en := i18n.NewPrinter(i18n.ZH), i18n.NewPrinter(i18n.EN)
	for detail, want := range map[string]string{
		"etcd-2 is leader":          "etcd-2 是领导者",
		"no leader":                 "没有领导者",
		"term 2 -> 3":               "任期 2 -> 3",
		"held by kube-scheduler-1":  "由 kube-scheduler-1 持有",
		"scheduled to worker-1":     "已调度到 worker-1",
		"Pending -> Running":        "Pending -> Running",
		"Ready=False":               "Ready=False",
		"web endpoints whole again": "web 的端点再次完整",
	} {
		e := TimelineEvent{Detail: detail}
		if got := DetailIn(zh, e); got != want {
			t.Errorf("zh %q = %q, want %q", detail, got, want)
		}
		if got := DetailIn(en, e); got != detail {
			t.Errorf("en %q = %q", detail, got)
		}
	}
	rc := Recovery{Fault: "kill etcd-leader=etcd-2", Event: "new etcd leader (etcd-1)", After: 1323 * time.Millisecond,
		Describe: "kill etcd-leader=etcd-2 -> new etcd leader (etcd-1) after 1.323s"}
	if got, want := DescribeIn(zh, rc), "kill etcd-leader=etcd-2 -> 新的 etcd 领导者（etcd-1），用时 1.323s"; got != want {
		t.Errorf("zh recovery %q, want %q", got, want)
	}
	if got := DescribeIn(en, rc); got != rc.Describe {
		t.Errorf("en recovery %q", got)
	}
}
