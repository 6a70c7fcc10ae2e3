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
