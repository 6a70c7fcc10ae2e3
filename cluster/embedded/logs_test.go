package embedded

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTailOffset(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than a block read backwards
	for _, c := range []struct {
		content string
		n       int
		want    string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\n", 5, "a\nb\n"},
		{"", 1, ""},
		{"first\n" + long + "\nlast\n", 2, long + "\nlast\n"},
		{"first\n" + long + "\nlast\n", 3, "first\n" + long + "\nlast\n"},
	} {
		f, err := os.Create(filepath.Join(t.TempDir(), "log"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(c.content); err != nil {
			t.Fatal(err)
		}
		off, err := tailOffset(f, c.n)
		f.Close()
		if err != nil || c.content[off:] != c.want {
			t.Errorf("last %d lines of %.20q: from %d (%.20q), %v; want %.20q", c.n, c.content, off, c.content[off:], err, c.want)
		}
	}
}

// TestFollowerReadsWhatIsWrittenNext: a followed log gives what the
// component writes after it was opened, and ends when its context does.
func TestFollowerReadsWhatIsWrittenNext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := &follower{ctx: ctx, f: f}
	defer r.Close()
	go func() {
		w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		for i := range 3 {
			time.Sleep(50 * time.Millisecond)
			fmt.Fprintf(w, "line %d\n", i)
		}
		w.Close()
		time.Sleep(2 * followEvery)
		cancel()
	}()
	got, err := io.ReadAll(r)
	if want := "before\nline 0\nline 1\nline 2\n"; err != nil || string(got) != want {
		t.Errorf("followed %q, %v; want %q", got, err, want)
	}
}
