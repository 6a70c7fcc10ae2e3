package engine

import (
	"fmt"
	"strings"
)

// progressLines renders one progress report for the console: elapsed
// time, mark, lab, step and message. A message of several lines (a
// multi-line script, a failure carrying a command's output) keeps the lab
// and step prefix on every line, so that it stays attributable when labs
// run side by side, and its continuation lines are indented under the
// operation's first line.
func progressLines(p Progress) string {
	mark := "  "
	msg := p.Message
	switch {
	case p.Done && p.Skipped:
		mark = "– "
		if p.Err != nil {
			msg += ": " + p.Err.Error()
		}
	case p.Done && p.Err != nil:
		mark = "✘ "
		msg = "FAILED: " + p.Err.Error()
	case p.Done:
		mark = "✔ "
	}
	step := p.Step
	if step == "" {
		step = "-"
	}
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%7.2fs %s%s | %s | %s\n", p.Elapsed.Seconds(), mark, p.Lab, step, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(&b, "%7s  %s%s | %s |   %s\n", "", "  ", p.Lab, step, l)
	}
	return b.String()
}
