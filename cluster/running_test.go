package cluster

import (
	"slices"
	"testing"
)

func TestTallyCountsEachClusterOnce(t *testing.T) {
	a := Running{Backend: "embedded", Name: "lab", Where: "home /b"}
	b := Running{Backend: "embedded", Name: "kubelab", Where: "home /a"}
	d := Running{Backend: "docker", Name: "kubelab", Where: "/a/docker/kubelab"}
	got := Tally([]Running{a, b, a, d, a, b})
	want := []Running{
		{Backend: "docker", Name: "kubelab", Where: "/a/docker/kubelab", Count: 1},
		{Backend: "embedded", Name: "kubelab", Where: "home /a", Count: 2},
		{Backend: "embedded", Name: "lab", Where: "home /b", Count: 3},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Tally = %+v\nwant %+v", got, want)
	}
	if s := want[0].String(); s != "docker cluster kubelab of /a/docker/kubelab (1 container)" {
		t.Errorf("String = %q", s)
	}
	if s := want[2].String(); s != "embedded cluster lab of home /b (3 processes)" {
		t.Errorf("String = %q", s)
	}
	if len(Tally(nil)) != 0 {
		t.Error("Tally(nil) is not empty")
	}
}
