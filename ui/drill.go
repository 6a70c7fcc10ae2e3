package ui

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
)

// DrillOptions configure a DrillServer.
type DrillOptions struct {
	// Title, Path and Question are the drill's (in the learner's
	// language). The scenarios' names are not shown before the run: they
	// would give half the answer away.
	Title, Path, Question string
	// Token is the secret of the URL; "" makes a random one.
	Token string
	// Words is the page's language (nil: English).
	Words *i18n.Printer
	// Run runs the drill's scenarios on real clusters with the learner's
	// answer (answered: the learner submitted one, maybe empty), calling
	// progress with each line of progress, and returns what happened.
	Run func(ctx context.Context, answer string, answered bool, progress func(string)) (*DrillOutcome, error)
}

// DrillOutcome is a drill run, as the page shows it: what the cluster
// did in each scenario, the learner's answer beside the model answer, and
// the key points the answer made or missed with the cluster's evidence.
type DrillOutcome struct {
	Passed      bool                   `json:"passed"`
	Scenarios   []DrillScenario        `json:"scenarios"`
	Answered    bool                   `json:"answered"`
	Answer      string                 `json:"answer"`
	ModelAnswer string                 `json:"modelAnswer"`
	KeyPoints   []engine.KeyPointScore `json:"keyPoints"`
	Made        int                    `json:"made"`
	// Error is why the drill could not run at all.
	Error string `json:"error,omitempty"`
}

// DrillScenario is what the cluster did in one scenario.
type DrillScenario struct {
	Title   string  `json:"title"`
	Passed  bool    `json:"passed"`
	Seconds float64 `json:"seconds"`
	// Did is the scenario's timeline and recovery times, as lines.
	Did   string `json:"did"`
	Error string `json:"error,omitempty"`
}

// DrillServer is the browser view of one interview drill: the question,
// a box for the learner's answer, the run of its scenarios on real
// clusters as it happens, then the model answer beside the learner's.
type DrillServer struct {
	*gate
	o    DrillOptions
	page []byte

	mu      sync.Mutex
	base    context.Context // Serve's: a run ends with the server
	running bool
	gen     int           // counts the runs started, so a stream tells a new run from the last
	lines   []string      // progress of the current or last run
	outcome []byte        // the last run's DrillOutcome, as JSON
	changed chan struct{} // closed and replaced on every change
}

// NewDrill prepares the view of a drill.
func NewDrill(o DrillOptions) (*DrillServer, error) {
	if o.Run == nil {
		return nil, errors.New("ui: a drill needs a Run")
	}
	g, err := newGate(o.Token)
	if err != nil {
		return nil, err
	}
	s := &DrillServer{gate: g, o: o, changed: make(chan struct{}), base: context.Background()}
	if s.page, err = renderPage(drillTmpl, o.Words, drillWords, map[string]any{"Title": o.Title, "Path": o.Path, "Question": o.Question}); err != nil {
		return nil, err
	}
	return s, nil
}

//go:embed drill.html
var drillSource string

var drillTmpl = pageTemplate("drill", drillSource)

// drillWords are the words drill.html's script writes.
var drillWords = []string{"running the drill on a real cluster…", "passed", "failed", "your answer made %d of %d key points",
	"you said: ", "missed; it takes: ", "the cluster: ", "(skipped)", "the drill could not run: "}

// Listen listens on 127.0.0.1:port (0: a free port).
func (s *DrillServer) Listen(port int) (net.Listener, error) { return s.gate.listen(port) }

// URL is the address to open, token included.
func (s *DrillServer) URL() string { return s.gate.url() }

// Handler serves the page, its event stream and the run.
func (s *DrillServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(s.page)
	})
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("POST /run", s.handleRun)
	return s.guard(mux)
}

// Serve serves the page on ln until ctx ends; a run still going is
// interrupted (its clusters are removed).
func (s *DrillServer) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	return s.serve(ctx, ln, s.Handler())
}

// handleRun starts the drill with the posted answer ({"answer": ...});
// the page follows it on the event stream. One run at a time.
func (s *DrillServer) handleRun(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Answer string `json:"answer"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in); err != nil {
		http.Error(w, "want {\"answer\": \"...\"}: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		http.Error(w, "the drill is already running", http.StatusConflict)
		return
	}
	s.running, s.lines, s.outcome = true, nil, nil
	s.gen++
	s.mu.Unlock()
	s.notify()
	// The run outlives the request, not the server.
	s.mu.Lock()
	ctx := s.base
	s.mu.Unlock()
	go s.run(ctx, strings.TrimSpace(in.Answer))
	w.WriteHeader(http.StatusAccepted)
}

func (s *DrillServer) run(ctx context.Context, answer string) {
	out, err := s.o.Run(ctx, answer, true, func(line string) {
		s.mu.Lock()
		s.lines = append(s.lines, line)
		s.mu.Unlock()
		s.notify()
	})
	if out == nil {
		out = &DrillOutcome{}
	}
	if err != nil {
		out.Error = err.Error()
	}
	data, _ := json.Marshal(out)
	s.mu.Lock()
	s.running, s.outcome = false, data
	s.mu.Unlock()
	s.notify()
}

func (s *DrillServer) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// handleEvents streams the run: "progress" events (the lines so far,
// then each new one) and an "outcome" event at its end.
func (s *DrillServer) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	sent, sentOutcome, gen := 0, false, -1
	for {
		s.mu.Lock()
		lines, outcome, g, changed := s.lines, s.outcome, s.gen, s.changed
		s.mu.Unlock()
		if g != gen { // a new run began (or the stream did)
			if gen >= 0 {
				fmt.Fprint(w, "event: reset\ndata: {}\n\n")
			}
			sent, sentOutcome, gen = 0, false, g
		}
		for _, l := range lines[sent:] {
			js, _ := json.Marshal(l)
			fmt.Fprintf(w, "event: progress\ndata: %s\n\n", js)
		}
		sent = len(lines)
		if outcome != nil && !sentOutcome {
			fmt.Fprintf(w, "event: outcome\ndata: %s\n\n", outcome)
			sentOutcome = true
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}
