package engine

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestConsoleProgressIndentsContinuationLines(t *testing.T) {
	var b bytes.Buffer
	progress := ConsoleProgress(&b)
	progress(Progress{Lab: "ha", Step: "probe", Elapsed: 3210 * time.Millisecond,
		Message: "script for i in 1 2; do\n  echo $i\ndone\n"})
	progress(Progress{Lab: "ha", Step: "probe", Elapsed: 4 * time.Second, Done: true,
		Err: errors.New("script (lab.yaml:9): exit status 1; output:\nline one\nline two")})
	want := "" +
		"   3.21s   ha | probe | script for i in 1 2; do\n" +
		"           ha | probe |     echo $i\n" +
		"           ha | probe |   done\n" +
		"   4.00s ✘ ha | probe | FAILED: script (lab.yaml:9): exit status 1; output:\n" +
		"           ha | probe |   line one\n" +
		"           ha | probe |   line two\n"
	if got := b.String(); got != want {
		t.Errorf("progress:\n%s\nwant:\n%s", got, want)
	}
}

// TestOutputLines: a command's output in the progress is marked line by
// line and cut after n lines with a count of the rest; blank output
// shows nothing.
func TestOutputLines(t *testing.T) {
	for _, tc := range []struct {
		out  string
		n    int
		want string
	}{
		{"", 20, ""},
		{" \n\n", 20, ""},
		{"configmap/x created\n", 20, "> configmap/x created"},
		{"a\nb\nc\nd\n", 2, "> a\n> b\n> ... 2 more lines (in the reports)"},
		{"a\nb", 2, "> a\n> b"},
	} {
		if got := outputLines(tc.out, tc.n); got != tc.want {
			t.Errorf("outputLines(%q, %d) = %q, want %q", tc.out, tc.n, got, tc.want)
		}
	}
}

// TestShown: a learner reads the output of a command that passed and
// keeps it for no later expression; not that of one that failed (its
// error has it), of one that binds it, or of other operations.
func TestShown(t *testing.T) {
	for _, tc := range []struct {
		r    OpResult
		want string
	}{
		{OpResult{Kind: "script", Status: Passed, Output: "3 of 10\n"}, "3 of 10"},
		{OpResult{Kind: "nodeExec", Status: Passed, Output: "chain\n"}, "chain"},
		{OpResult{Kind: "kubectl", Status: Passed, Output: `{"kind": "Service"}`, Bind: "svc"}, ""},
		{OpResult{Kind: "kubectl", Status: Failed, Output: "error"}, ""},
		{OpResult{Kind: "record", Status: Passed, Output: "3"}, ""},
	} {
		if got := Shown(tc.r); got != tc.want {
			t.Errorf("Shown(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
