package app

import (
	"strings"
	"testing"
)

func TestSayBesidesNamesTheOtherClusters(t *testing.T) {
	var b strings.Builder
	sayBesides(&b, nil)
	if b.Len() != 0 {
		t.Errorf("nothing beside: wrote %q", b.String())
	}
	sayBesides(&b, map[string]string{
		"embedded home /h lab": "embedded cluster lab of home /h (5 processes)",
		"docker /d/x x":        "docker cluster x of /d/x (4 containers)",
	})
	got := b.String()
	want := "bench: measured beside other kubelab clusters, whose load is in these figures: " +
		"docker cluster x of /d/x (4 containers); embedded cluster lab of home /h (5 processes) " +
		"(kubelab down them for figures of this machine alone)\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
