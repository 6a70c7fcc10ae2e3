// Package ui is kubelab's view in the browser: an HTTP server on
// 127.0.0.1 that shows a live exercise (its statement, its checks turning
// green or red as the cluster changes, hints on demand, the final check
// and the reference solution), pushed to the page as Server-Sent Events
// from the same evaluation as `kubelab check --watch`.
//
// It trusts nobody but the user who started it: every request needs the
// random token printed in the URL (compared in constant time, then kept
// in an HttpOnly, SameSite=Strict cookie), the Host header must name the
// loopback address it listens on (no DNS rebinding), a request that
// carries an Origin must come from the page itself, nothing is shared
// with other origins (no CORS), and unknown paths are 404. The page
// fetches nothing from anywhere else.
package ui

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yuin/goldmark"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/report"
)

// Options configure a Server.
type Options struct {
	// Exercise is the exercise the cluster runs (nil: a cluster without
	// one; the page shows its machinery and terminals).
	Exercise *grade.Exercise
	// Session is the exercise's live cluster (set up already).
	Session *engine.Session
	// Token is the secret of the URL; "" makes a random one.
	Token string
	// Patience caps each non-destructive check of a live evaluation, as
	// check --watch's --patience does (0: 5s).
	Patience time.Duration
	// Every re-evaluates at least this often even when nothing changes
	// (0: 5s): etcd's Raft state is read, not watched.
	Every time.Duration
	// Shell, when set, gives the page terminals: shells on PTYs with the
	// cluster's KUBECONFIG and kubectl.
	Shell *Shell
	// Words is the page's language (nil: English); the exercise is given
	// already in it.
	Words *i18n.Printer
	// Reset, when set, gives the page a Reset button: it reboots the
	// exercise's cluster, sets the exercise up again and returns the new
	// session, which the page then shows (the old one is the caller's to
	// have closed).
	Reset func(ctx context.Context) (*engine.Session, error)
	// Lab, when set, makes the page a lab's: its steps, run on the
	// session one at a time (Next step) or to the end, each operation
	// with its expression and, when it failed, what it observed.
	Lab *LabRun
}

// Server is the browser view of one live exercise.
type Server struct {
	*gate
	o    Options
	page []byte

	mu      sync.Mutex
	sess    *engine.Session // the live session (Reset replaces it)
	last    []byte          // the last evaluation, as the event's JSON
	changed chan struct{}   // closed and replaced after each evaluation
	final   bool            // the next evaluation is a final check
	kick    chan struct{}   // asks for an evaluation now
	pages   int             // pages listening to the events
	joined  chan struct{}   // closed and replaced when a page starts listening

	terms     *terminals // nil: no terminal
	resetting atomic.Bool

	metrics metricsCache // the last read of the components' /metrics

	labBusy   atomic.Bool         // a lab step runs
	labSteps  []engine.StepResult // the lab's steps that ran
	labResult *engine.Result      // the lab's result once it ended
}

// New prepares the server of o's exercise.
func New(o Options) (*Server, error) {
	if o.Session == nil {
		return nil, errors.New("ui: a live session is needed")
	}
	if o.Patience <= 0 {
		o.Patience = 5 * time.Second
	}
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	g, err := newGate(o.Token)
	if err != nil {
		return nil, err
	}
	s := &Server{gate: g, o: o, sess: o.Session, changed: make(chan struct{}), kick: make(chan struct{}, 1), joined: make(chan struct{})}
	if o.Shell != nil {
		s.terms = &terminals{shell: *o.Shell, byID: map[string]*terminal{}}
	}
	page, err := s.render()
	if err != nil {
		return nil, err
	}
	s.page = page
	return s, nil
}

// Listen listens on 127.0.0.1:port (0: a free port).
func (s *Server) Listen(port int) (net.Listener, error) { return s.gate.listen(port) }

// URL is the address to open, token included.
func (s *Server) URL() string { return s.gate.url() }

// Serve evaluates the exercise whenever the cluster changes and serves
// the page on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go s.evaluate(ctx)
	if s.terms != nil {
		defer s.terms.close()
	}
	return s.serve(ctx, ln, s.Handler())
}

// Handler serves the page, the event stream and the actions, each behind
// the checks of the package comment.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("POST /final", s.handleFinal)
	mux.HandleFunc("POST /fault", s.handleFault)
	if s.o.Exercise != nil {
		mux.HandleFunc("POST /solve", s.handleSolve)
	}
	if s.o.Exercise != nil && s.o.Reset != nil {
		mux.HandleFunc("POST /reset", s.handleReset)
	}
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets())))
	if s.terms != nil {
		mux.HandleFunc("GET /term/{id}", s.handleTerm)
	}
	if s.o.Lab != nil {
		mux.HandleFunc("POST /lab/next", s.handleLab(false))
		mux.HandleFunc("POST /lab/end", s.handleLab(true))
	}
	return s.guard(mux)
}

func (s *Server) handlePage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(s.page)
}

// handleEvents streams every evaluation, the latest first.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	s.mu.Lock()
	s.pages++
	close(s.joined)
	s.joined = make(chan struct{})
	s.mu.Unlock()
	s.kickNow() // what it shows first may be old: evaluate now
	defer func() {
		s.mu.Lock()
		s.pages--
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		last, changed := s.last, s.changed
		s.mu.Unlock()
		if last != nil {
			if _, err := fmt.Fprintf(w, "event: checks\ndata: %s\n\n", last); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}

// handleFinal asks for a final check (destructive checks included, no
// patience), pushed to the page as the next evaluation.
func (s *Server) handleFinal(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.final = true
	s.mu.Unlock()
	s.kickNow()
	w.WriteHeader(http.StatusAccepted)
}

// handleSolve applies the exercise's reference solution to the cluster
// (giving up, or a teacher showing it), as kubelab solve does.
func (s *Server) handleSolve(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	_, err := grade.Solve(ctx, s.session(), s.o.Exercise)
	s.kickNow()
	w.Header().Set("Content-Type", "application/json")
	res := map[string]string{"status": "applied"}
	if err != nil {
		w.WriteHeader(http.StatusUnprocessableEntity)
		res = map[string]string{"status": "failed", "error": err.Error()}
	}
	_ = json.NewEncoder(w).Encode(res)
}

// session is the live session the page shows.
func (s *Server) session() *engine.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// handleReset reboots the exercise's cluster and sets the exercise up
// again (Options.Reset), then shows the new session; one at a time.
func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	if !s.resetting.CompareAndSwap(false, true) {
		http.Error(w, "a reset is already running", http.StatusConflict)
		return
	}
	defer s.resetting.Store(false)
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
	defer cancel()
	sess, err := s.o.Reset(ctx)
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "failed", "error": err.Error()})
		return
	}
	s.mu.Lock()
	s.sess = sess
	s.mu.Unlock()
	s.kickNow()
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "reset"})
}

// kickNow asks for an evaluation now.
func (s *Server) kickNow() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// evaluate checks the exercise once a page listens, then after each
// change of the cluster (settled for 300ms), after each request and at
// least every o.Every, publishing each result; while no page listens it
// evaluates nothing (the checks and the machinery cost the cluster and
// the machine).
func (s *Server) evaluate(ctx context.Context) {
	for {
		if !s.waitForPage(ctx) {
			return
		}
		select { // this evaluation answers any request made until now
		case <-s.kick:
		default:
		}
		s.mu.Lock()
		final := s.final
		s.final = false
		s.mu.Unlock()
		sess := s.session()
		o := grade.CheckOptions{Patience: s.o.Patience}
		if final {
			o = grade.CheckOptions{Final: true}
		}
		g := &grade.Grade{}
		if s.o.Exercise != nil {
			g = grade.CheckExercise(ctx, sess, s.o.Exercise, o)
		}
		if ctx.Err() != nil {
			return
		}
		s.publish(g, final)
		select {
		case <-ctx.Done():
			return
		case <-sess.Changed():
			settle(ctx, sess.Changed(), 300*time.Millisecond)
		case <-s.kick:
		case <-time.After(s.o.Every):
		}
	}
}

// waitForPage waits until a page listens to the events; false when ctx
// ended first.
func (s *Server) waitForPage(ctx context.Context) bool {
	for {
		s.mu.Lock()
		n, joined := s.pages, s.joined
		s.mu.Unlock()
		if n > 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-joined:
		}
	}
}

// settle waits until changes stop for quiet (or ctx ends).
func settle(ctx context.Context, changes <-chan struct{}, quiet time.Duration) {
	t := time.NewTimer(quiet)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			t.Reset(quiet)
		case <-t.C:
			return
		}
	}
}

// Evaluation is one evaluation of the checks, as the page receives it.
type Evaluation struct {
	At           time.Time    `json:"at"`
	Final        bool         `json:"final"`
	Score        int          `json:"score"`
	Max          int          `json:"max"`
	PassingScore int          `json:"passingScore"`
	Checks       []CheckState `json:"checks"`
	// Machinery is the cluster's machinery at the evaluation.
	Machinery Machinery `json:"machinery"`
	// Lab is the lab's progress (a lab's page only).
	Lab *LabState `json:"lab,omitempty"`
}

// CheckState is one check in an evaluation.
type CheckState struct {
	Name     string `json:"name"`
	Points   int    `json:"points"`
	Earned   int    `json:"earned"`
	Status   string `json:"status"`
	Expected string `json:"expected,omitempty"`
	Observed string `json:"observed,omitempty"`
	Note     string `json:"note,omitempty"`
}

func (s *Server) publish(g *grade.Grade, final bool) {
	ev := Evaluation{At: time.Now(), Final: final, Score: g.Score, Max: g.Max, PassingScore: g.PassingScore, Machinery: s.machinery(), Lab: s.labState()}
	for _, c := range g.Checks {
		ev.Checks = append(ev.Checks, CheckState{Name: c.Name, Points: c.Points, Earned: c.Earned, Status: string(c.Status),
			Expected: c.Expected, Observed: c.Observed, Note: c.Error})
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.last = data
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

//go:embed page.html
var pageSource string

var pageTmpl = pageTemplate("page", pageSource)

// scriptWords are the words the page's script writes (w("...") in
// page.html), given to it translated.
var scriptWords = []string{"observed: ", "the lab ended: ", "running…", "step ", "passed", "failed", "errored", "final check at ", "live, evaluated at ", " as ", ": refused", " by ", "no refused request yet", "terminal",
	"Apply the reference solution to the cluster? (your own work stays, the solution is applied over it)",
	"applying the reference solution…", "solution applied", "the solution failed: ", "final check running…", "no pod scheduled yet", "no Deployment created yet",
	"pod", "sandbox", "pause pid", "IP", "containers", "no endpoint: REJECT",
	"Reboot the cluster and set the exercise up again? (your work on it is lost)", "rebooting the cluster and setting the exercise up…",
	"the exercise starts again", "the reset failed: "}

// render makes the page: the statement (Markdown, raw HTML escaped) and
// the checks with their hints, filled in live by the event stream.
func (s *Server) render() ([]byte, error) {
	cname := s.session().Topology().Name
	data := map[string]any{"Title": s.o.Words.S("cluster") + " " + cname, "Cluster": cname,
		"Terminal": s.terms != nil, "TerminalFiles": hasTerminal(), "TimelineCSS": report.TimelineCSS(), "SchedulingCSS": report.SchedulingCSS(), "TraceCSS": report.TraceCSS(), "Stages": engine.PipelineStages}
	if ex := s.o.Exercise; ex != nil {
		if err := s.exerciseData(ex, data); err != nil {
			return nil, err
		}
	}
	if l := s.o.Lab; l != nil {
		if err := s.labData(l.Lab, data); err != nil {
			return nil, err
		}
	}
	return renderPage(pageTmpl, s.o.Words, scriptWords, data)
}

// exerciseData adds the exercise's statement (Markdown, raw HTML
// dropped) and checks to the page's data.
func (s *Server) exerciseData(ex *grade.Exercise, data map[string]any) error {
	var md bytes.Buffer
	if err := goldmark.Convert([]byte(ex.Spec.Statement), &md); err != nil {
		return fmt.Errorf("ui: statement: %w", err)
	}
	type check struct {
		Name, Hint string
		Points     int
	}
	var checks []check
	for _, c := range ex.Spec.Checks {
		checks = append(checks, check{Name: c.Name, Hint: c.Hint, Points: c.Points})
	}
	data["Title"], data["Name"], data["Exercise"], data["Checks"], data["Max"] = ex.Metadata.Title, ex.Metadata.Name, true, checks, ex.MaxScore()
	data["Reset"] = s.o.Reset != nil
	data["Statement"] = template.HTML(md.String()) //nolint:gosec // goldmark escapes raw HTML unless told otherwise
	return nil
}
