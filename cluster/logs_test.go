package cluster

import (
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc\n"}, // no newline at the end
		{"a\nb\n", 5, "a\nb\n"},
		{"", 3, ""},
		{"a\n", 0, ""},
	} {
		got, err := LastLines(strings.NewReader(c.in), c.n)
		if err != nil || got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, %v; want %q", c.in, c.n, got, err, c.want)
		}
	}
}
