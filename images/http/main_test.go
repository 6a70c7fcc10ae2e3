package main

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"256Mi": 256 << 20, "1Gi": 1 << 30, "512Ki": 512 << 10, "4096": 4096} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "Mi", "-1Mi", "0", "12MB", "x"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = nil error, want one", in)
		}
	}
}
