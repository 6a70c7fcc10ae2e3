package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
	"kubelab.dev/kubelab/load"
)

// TestRunnerTranscripts runs the labs of testdata/runner/*.txt with the
// real runner on a fake backend and a fake view, and compares what
// happened with the transcript written under each run: the backend's
// calls, the steps and operations as they ran, the hooks, then the result
// (statuses, the failure message with what was expected and observed) and
// the timeline. Times are left out. After a change of behaviour, rewrite
// the transcripts and review the diff:
//
//	go test ./engine -run TestRunnerTranscripts -rewrite
//
// Each file is one scenario; its directives run in order and what they
// set holds for the rest of the file:
//
//	view              the cluster's objects, in YAML: nodes, pods, deployments
//	fail up           the backend's Up fails, with the input as its error
//	fail watch        observing the booted cluster fails
//	fail kill etcd-2  the backend's Act(etcd-2, kill) fails (any action)
//	run               loads the input as a lab file (lab.yaml) and runs it;
//	                  run keep-on-failure sets Runner.KeepOnFailure
func TestRunnerTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/runner", func(t *testing.T, path string) {
		t.Parallel()
		s := &transcriptScript{faults: clustertest.Faults{Act: map[string]error{}}}
		datadriven.RunTest(t, path, s.do)
	})
}

// transcriptScript is the state of one transcript file.
type transcriptScript struct {
	view   assertionstest.State
	faults clustertest.Faults
	watch  error // observing the booted cluster fails
}

func (s *transcriptScript) do(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "view":
		var v assertionstest.State
		dec := yaml.NewDecoder(strings.NewReader(d.Input))
		dec.KnownFields(true)
		if err := dec.Decode(&v); err != nil {
			d.Fatalf(t, "view: %v", err)
		}
		s.view = v
		return "ok"
	case "fail":
		return s.fail(t, d)
	case "run":
		return s.run(t, d)
	}
	d.Fatalf(t, "unknown directive %q", d.Cmd)
	return ""
}

// fail records what the fakes are to fail: "up", "watch" or an action
// and a component.
func (s *transcriptScript) fail(t *testing.T, d *datadriven.TestData) string {
	err := errors.New(strings.TrimSpace(d.Input))
	var what []string
	for _, a := range d.CmdArgs {
		what = append(what, a.Key)
	}
	switch {
	case len(what) == 1 && what[0] == "up":
		s.faults.Up = err
	case len(what) == 1 && what[0] == "watch":
		s.watch = err
	case len(what) == 2:
		s.faults.Act[what[0]+" "+what[1]] = err
	default:
		d.Fatalf(t, "fail: want up, watch or ACTION COMPONENT, got %q", what)
	}
	return "ok"
}

// run loads and runs the lab of the directive's input and returns its
// transcript.
func (s *transcriptScript) run(t *testing.T, d *datadriven.TestData) string {
	lab, err := load.ParseLab("lab.yaml", []byte(d.Input))
	if err != nil {
		// The loader has tests of its own: a transcript is of a lab that runs.
		d.Fatalf(t, "load: %v", err)
	}
	log := &clustertest.Log{}
	var be *clustertest.Fake
	r := &Runner{
		Backend:       clustertest.Factory(log, s.faults, func(f *clustertest.Fake) { be = f }),
		Progress:      func(p Progress) { log.Addf("%s", progressLine(p)) },
		KeepOnFailure: d.HasArg("keep-on-failure"),
		Log:           slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		Observe: func(_ context.Context, c *cluster.Cluster, _ time.Time) (Observer, error) {
			if err := s.watch; err != nil {
				log.Addf("view: failed: %v", err)
				return nil, err
			}
			log.Addf("view: watching")
			v := assertionstest.NewView(s.view, c.Backend)
			v.OnClose(func() { log.Addf("view: closed") })
			return v, nil
		},
	}
	res, err := r.Run(t.Context(), lab)
	if err != nil {
		log.Addf("run: %v", err)
	} else {
		log.Addf("%s", resultTranscript(res))
	}
	out := sortConcurrentActs(log.String())
	if be != nil {
		out = strings.ReplaceAll(out, be.Topology().Name, "<cluster>")
	}
	return waitedRE.ReplaceAllString(out, "(waited <d>)") + "\n"
}

// sortConcurrentActs sorts each run of consecutive "backend: act" lines:
// an operation's progress line comes before each of its acts, so acts with
// none between them ran at once (a stacked control-plane node's
// components), in no fixed order.
func sortConcurrentActs(out string) string {
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "backend: act ") {
			j++
		}
		if j > i {
			slices.Sort(lines[i:j])
			i = j
		} else {
			i++
		}
	}
	return strings.Join(lines, "\n")
}

var (
	waitedRE   = regexp.MustCompile(`\(waited [^)]*\)`)
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s|m|h)\b`)
)

// progressLine is one progress report: the step (or hook) it is about and
// its message; the lab's own lines have their durations left out.
func progressLine(p Progress) string {
	if p.Step == "" {
		return "lab: " + durationRE.ReplaceAllString(p.Message, "<d>")
	}
	return p.Step + ": " + p.Message
}

// resultTranscript renders what Run returned, without times.
func resultTranscript(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s\n", res.Status)
	if res.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", indent(res.Error, "  "))
	}
	if res.Kubeconfig != "" {
		fmt.Fprintf(&b, "kubeconfig: %s\n", res.Kubeconfig)
	}
	for _, st := range res.Steps {
		fmt.Fprintf(&b, "step %s: %s\n", st.Name, st.Status)
		for _, o := range st.Ops {
			writeOp(&b, "  ", o)
		}
	}
	for _, h := range res.Hooks {
		writeOp(&b, "hook ", h)
	}
	for _, e := range res.Timeline {
		fmt.Fprintf(&b, "timeline: %s %s: %s\n", e.Kind, e.Subject, e.Detail)
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeOp renders one operation's result: its summary, line and status,
// the first line of its error, the values observed and its output.
func writeOp(b *strings.Builder, prefix string, o OpResult) {
	fmt.Fprintf(b, "%s%s (line %d): %s\n", prefix, o.Summary, o.Line, o.Status)
	if o.Error != "" {
		msg, _, _ := strings.Cut(o.Error, "\n")
		fmt.Fprintf(b, "    error: %s\n", msg)
	}
	for _, ob := range o.Observed {
		fmt.Fprintf(b, "    observed: %s = %s\n", ob.Expr, ob.Value)
	}
	if o.Output != "" {
		fmt.Fprintf(b, "    output: %s\n", indent(strings.TrimRight(o.Output, "\n"), "      "))
	}
}

// testWriter sends the runner's debug logs to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}
