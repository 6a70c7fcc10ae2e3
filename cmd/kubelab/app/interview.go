package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"kubelab.dev/kubelab/curriculum"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/internal/syncbuf"
)

// interviewFlags are drill --interview's own flags.
type interviewFlags struct {
	on      bool
	history bool
	topics  []string
	count   int
	per     time.Duration
	seed    uint64
}

// interviewRecord is one interview session as saved under the home
// (interviews/*.json) for --history.
type interviewRecord struct {
	Started   time.Time         `json:"started"`
	Questions []interviewAnswer `json:"questions"`
}

// interviewAnswer is one question of a session.
type interviewAnswer struct {
	Drill   string   `json:"drill"`
	Title   string   `json:"title"`
	Topics  []string `json:"topics"`
	Answer  string   `json:"answer"`
	Seconds float64  `json:"seconds"`
	// TimeUp is set when the answer was cut off by --time.
	TimeUp bool `json:"timeUp,omitempty"`
	Made   int  `json:"made"`
	Points int  `json:"points"`
	// Missed are the key points the answer did not make.
	Missed []string `json:"missed,omitempty"`
	// Passed says whether the drill's scenarios passed on the cluster.
	Passed bool `json:"passed"`
}

func (g *globals) interviewDir() string { return filepath.Join(g.home, "interviews") }

// pickQuestions draws up to count drills at random from those of the
// topics (all when none), leaving out the drills the backend cannot run.
func pickQuestions(drills []*features.Drill, iv *interviewFlags, docker bool) ([]*features.Drill, error) {
	for _, t := range iv.topics {
		if !curriculum.Known(t) {
			var ids []string
			for _, k := range curriculum.Topics {
				ids = append(ids, k.ID)
			}
			return nil, fmt.Errorf("--topic %q is not a topic of the course; topics: %s", t, strings.Join(ids, ", "))
		}
	}
	var pool []*features.Drill
	for _, d := range drills {
		if d.Docker && !docker || len(d.KeyPoints) == 0 {
			continue
		}
		if len(iv.topics) == 0 || slices.ContainsFunc(d.Topics, func(t string) bool { return slices.Contains(iv.topics, t) }) {
			pool = append(pool, d)
		}
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("no drill of topics %v runs on this backend", iv.topics)
	}
	seed := iv.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := rand.New(rand.NewPCG(seed, seed>>1|1))
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool[:min(iv.count, len(pool))], nil
}

// interview asks the questions one after another, each against the
// clock, then runs every drill, scores each answer against its key
// points, prints a summary with the weakest topics and saves the session
// for --history.
func interview(ctx context.Context, g *globals, f *drillFlags, iv *interviewFlags, r engine.Runner) error {
	if !isTerminal(g.streams.In) {
		return invalidf("drill --interview asks questions against the clock: it needs a terminal")
	}
	all, err := g.loadDrills(drillDirs(g)...)
	if err != nil {
		return invalid(err)
	}
	drills, err := pickQuestions(all, iv, f.backend == backendDocker)
	if err != nil {
		return invalid(err)
	}
	out, p := g.streams.Out, g.words
	answers := newLineReader(g.streams.In)
	rec := interviewRecord{Started: time.Now().UTC()}
	// Each question's drill starts on its cluster as soon as the question
	// is answered, while the learner answers the next ones: the results
	// are there (nearly) when the last answer is. Their progress is kept
	// and shown after the questions, so nothing writes over the prompt.
	bg := startDrills(ctx, g, f, r, len(drills))
	defer bg.stop()
	p.Fprintf(out, "Interview: %d questions, %s each. An empty line ends an answer; when the time is up, the lines entered so far count.\n", len(drills), iv.per)
	for i, d := range drills {
		p.Fprintf(out, "\n━━ Question %d/%d (%s, %s)\n%s\n", i+1, len(drills), strings.Join(d.Topics, ", "), iv.per, indentText(reflow(d.Question, 74), "  "))
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, iv.per)
		answer, err := answers.readAnswer(actx, out)
		timeUp := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if timeUp {
			err = nil
			p.Fprintf(out, "\n(time is up)\n")
		}
		if err != nil {
			return err
		}
		rec.Questions = append(rec.Questions, interviewAnswer{Drill: d.Path, Title: d.Title, Topics: d.Topics, Answer: answer,
			Seconds: time.Since(start).Seconds(), TimeUp: timeUp, Points: len(d.KeyPoints)})
		bg.start(i, d)
	}
	p.Fprintf(out, "\nRunning the %d drills on real clusters...\n", len(drills))
	var reps []features.Report
	for i, d := range drills {
		res := bg.wait(i, g.streams.Err)
		if res.err != nil && !errors.Is(res.err, features.ErrFailed) {
			return cannotRun(res.err)
		}
		q := &rec.Questions[i]
		q.Passed = res.err == nil
		scores := features.ScoreRun(p, d, q.Answer, true, res.reps)
		q.Made = features.Made(scores)
		for _, s := range scores {
			if !s.Made {
				q.Missed = append(q.Missed, s.Point)
			}
		}
		reps = append(reps, res.reps...)
		showInterviewAnswer(out, p, i+1, d, q, scores)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	writeInterviewSummary(out, p, rec)
	if err := saveInterview(g, rec); err != nil {
		return err
	}
	return g.writeReports(f.junit, f.json, f.html, features.Results(reps))
}

// drillRun is one interview drill run in the background: its progress,
// kept until it is shown, and its outcome.
type drillRun struct {
	log  syncbuf.Buffer
	done chan struct{}
	reps []features.Report
	err  error
}

// backgroundDrills runs an interview's drills while the questions go on,
// at most as many at once as the machine has cores (at least two): each
// boots a cluster of its own.
type backgroundDrills struct {
	ctx    context.Context
	cancel context.CancelFunc
	g      *globals
	f      *drillFlags
	r      engine.Runner
	slots  chan struct{}
	runs   []*drillRun
	wg     sync.WaitGroup
	// interrupted says once that the clusters are being removed.
	interrupted sync.Once
}

func startDrills(ctx context.Context, g *globals, f *drillFlags, r engine.Runner, n int) *backgroundDrills {
	ctx, cancel := context.WithCancel(ctx)
	b := &backgroundDrills{ctx: ctx, cancel: cancel, g: g, f: f, r: r, slots: make(chan struct{}, max(2, runtime.NumCPU())), runs: make([]*drillRun, n)}
	for i := range b.runs {
		b.runs[i] = &drillRun{done: make(chan struct{})}
	}
	return b
}

// start runs drill i (the answered question's) in the background.
func (b *backgroundDrills) start(i int, d *features.Drill) {
	run := b.runs[i]
	r := b.r
	console := engine.ConsoleProgress(&run.log)
	r.Progress = func(e engine.Progress) {
		if b.ctx.Err() != nil {
			b.interrupted.Do(func() { fmt.Fprintln(b.g.streams.Err, "interrupted: removing the clusters started") })
			return
		}
		console(e)
	}
	b.wg.Go(func() {
		defer close(run.done)
		select {
		case b.slots <- struct{}{}:
		case <-b.ctx.Done():
			run.err = b.ctx.Err()
			return
		}
		defer func() { <-b.slots }()
		run.reps, run.err = runDrillTo(b.ctx, b.g, b.f, r, d, &run.log)
	})
}

// wait waits for drill i, copies its progress to w, and returns it.
func (b *backgroundDrills) wait(i int, w io.Writer) *drillRun {
	run := b.runs[i]
	<-run.done
	_, _ = io.WriteString(w, run.log.String())
	return run
}

// stop cancels what still runs (the learner left before the end) and
// waits until every drill's cluster is down.
func (b *backgroundDrills) stop() {
	b.cancel()
	b.wg.Wait()
}

// showInterviewAnswer prints how one answer fared.
func showInterviewAnswer(w io.Writer, p *i18n.Printer, n int, d *features.Drill, q *interviewAnswer, scores []features.PointScore) {
	status := p.S("the cluster did as the model answer says")
	if !q.Passed {
		status = p.S("a scenario FAILED on the cluster")
	}
	p.Fprintf(w, "\n━━ %d. %s: %d of %d key points (%s)\n", n, d.Title, q.Made, q.Points, status)
	for _, s := range scores {
		mark := map[bool]string{true: "✔", false: "✘"}[s.Made]
		p.Fprintf(w, "  %s %s\n", mark, reflowHanging(s.Point, 72, "    "))
		if len(s.Evidence) > 0 {
			p.Fprintf(w, "      the cluster: %s\n", s.Evidence[0])
		}
	}
}

// topicScore is the points made and offered in one topic.
type topicScore struct {
	topic        string
	made, points int
}

func (t topicScore) ratio() float64 {
	if t.points == 0 {
		return 1
	}
	return float64(t.made) / float64(t.points)
}

// byTopic sums the key points of answers per topic, weakest first.
func byTopic(qs []interviewAnswer) []topicScore {
	m := map[string]*topicScore{}
	for _, q := range qs {
		for _, t := range q.Topics {
			if m[t] == nil {
				m[t] = &topicScore{topic: t}
			}
			m[t].made += q.Made
			m[t].points += q.Points
		}
	}
	var out []topicScore
	for _, t := range m {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ratio() != out[j].ratio() {
			return out[i].ratio() < out[j].ratio()
		}
		return out[i].topic < out[j].topic
	})
	return out
}

// writeInterviewSummary prints the session's table and weakest topics.
func writeInterviewSummary(w io.Writer, p *i18n.Printer, rec interviewRecord) {
	p.Fprintf(w, "\n━━ Summary\n")
	tw := i18n.NewTabWriter(w)
	p.Fprintf(tw, "QUESTION\tTOPICS\tKEY POINTS\tTIME\n")
	made, points := 0, 0
	for _, q := range rec.Questions {
		t := fmt.Sprintf("%.0fs", q.Seconds)
		if q.TimeUp {
			t = p.Sprintf("%.0fs (time up)", q.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\n", q.Title, strings.Join(q.Topics, ","), q.Made, q.Points, t)
		made, points = made+q.Made, points+q.Points
	}
	_ = tw.Flush()
	p.Fprintf(w, "Total: %d of %d key points (%.0f%%)\n", made, points, 100*float64(made)/float64(max(points, 1)))
	var weak []string
	for _, t := range byTopic(rec.Questions) {
		if t.ratio() < 1 && len(weak) < 3 {
			weak = append(weak, fmt.Sprintf("%s (%d/%d)", t.topic, t.made, t.points))
		}
	}
	if len(weak) > 0 {
		p.Fprintf(w, "Weakest topics: %s. Practise them with kubelab drill --interview --topic TOPIC, or the labs of kubelab list --topics.\n", strings.Join(weak, ", "))
	}
}

// saveInterview writes the session under the home for --history.
func saveInterview(g *globals, rec interviewRecord) error {
	if err := os.MkdirAll(g.interviewDir(), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	file := filepath.Join(g.interviewDir(), rec.Started.Format("20060102T150405.000Z")+".json")
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		return err
	}
	g.words.Fprintf(g.streams.Err, "session saved: %s (kubelab drill --history shows your progress)\n", file)
	return nil
}

// interviewHistory prints every saved session, then each topic's points
// over them: first and last session, and all together.
func interviewHistory(g *globals) error {
	files, err := filepath.Glob(filepath.Join(g.interviewDir(), "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		g.words.Fprintf(g.streams.Out, "No interview yet: kubelab drill --interview starts one.\n")
		return nil
	}
	sort.Strings(files)
	var recs []interviewRecord
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var rec interviewRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		recs = append(recs, rec)
	}
	w := tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
	g.words.Fprintf(w, "SESSION\tQUESTIONS\tKEY POINTS\tWEAKEST TOPIC\n")
	for _, rec := range recs {
		made, points := 0, 0
		for _, q := range rec.Questions {
			made, points = made+q.Made, points+q.Points
		}
		weakest := "-"
		if t := byTopic(rec.Questions); len(t) > 0 && t[0].ratio() < 1 {
			weakest = t[0].topic
		}
		fmt.Fprintf(w, "%s\t%d\t%d/%d (%.0f%%)\t%s\n", rec.Started.Local().Format("2006-01-02 15:04"), len(rec.Questions), made, points, 100*float64(made)/float64(max(points, 1)), weakest)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	first, last, total := map[string]topicScore{}, map[string]topicScore{}, map[string]*topicScore{}
	for _, rec := range recs {
		for _, t := range byTopic(rec.Questions) {
			if _, ok := first[t.topic]; !ok {
				first[t.topic] = t
			}
			last[t.topic] = t
			if total[t.topic] == nil {
				total[t.topic] = &topicScore{topic: t.topic}
			}
			total[t.topic].made += t.made
			total[t.topic].points += t.points
		}
	}
	var topics []string
	for t := range total {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	fmt.Fprintln(g.streams.Out)
	w = tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
	g.words.Fprintf(w, "TOPIC\tFIRST\tLAST\tALL\n")
	for _, t := range topics {
		f, l, a := first[t], last[t], total[t]
		fmt.Fprintf(w, "%s\t%d/%d\t%d/%d\t%d/%d\n", t, f.made, f.points, l.made, l.points, a.made, a.points)
	}
	return w.Flush()
}
