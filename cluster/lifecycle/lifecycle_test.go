package lifecycle

import (
	"slices"
	"testing"
)

func TestJoinLater(t *testing.T) {
	two := []string{"kube-apiserver-1", "kube-apiserver-2"}
	cases := []struct {
		name          string
		seeded        bool
		plan          Plan
		first, joined []string
	}{
		{"seeded processes: the first starts, the rest join", true, Plan{APIServers: two}, two[:1], two[1:]},
		{"fresh: every apiserver bootstraps together", false, Plan{APIServers: two}, two, nil},
		{"containers: together, as starting one takes long", true, Plan{APIServers: two, ControllersWait: true}, two, nil},
		{"one apiserver", true, Plan{APIServers: two[:1]}, two[:1], nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &boot{seeded: c.seeded, plan: c.plan}
			first, joined := b.joinLater()
			if !slices.Equal(first, c.first) || !slices.Equal(joined, c.joined) {
				t.Errorf("joinLater() = %v, %v; want %v, %v", first, joined, c.first, c.joined)
			}
		})
	}
}
