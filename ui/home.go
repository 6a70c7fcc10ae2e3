package ui

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"time"

	"kubelab.dev/kubelab/internal/i18n"
)

// HomeOptions configure a Home.
type HomeOptions struct {
	// Token is the secret of the URL; "" makes a random one.
	Token string
	// Words is the page's language (nil: English).
	Words *i18n.Printer
	// Topics are the course's topics in order, each with what practises
	// it (the index of kubelab list --topics).
	Topics []HomeTopic
	// Clusters lists the home's clusters now.
	Clusters func(ctx context.Context) ([]HomeCluster, error)
	// Start starts the view of one of the topics' items (its Path) and
	// returns the URL of that view; Open does so for a running cluster.
	Start func(ctx context.Context, path string) (string, error)
	Open  func(ctx context.Context, cluster string) (string, error)
}

// HomeTopic is one topic of the course and its labs, drills and
// exercises.
type HomeTopic struct {
	ID, Title string
	Items     []HomeItem
}

// HomeItem is a lab, a drill or an exercise.
type HomeItem struct {
	// Kind is "lab", "drill" or "exercise".
	Kind string `json:"kind"`
	// Path is what kubelab ui is given to start it.
	Path string `json:"path"`
	// Title is its title (in the learner's language).
	Title string `json:"title"`
	// Docker is set when it needs real nodes (the docker backend).
	Docker bool `json:"docker,omitempty"`
}

// HomeCluster is a cluster of the home.
type HomeCluster struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
	// Status says how many of its components run.
	Status string `json:"status"`
	// Exercise is the exercise it runs, if any.
	Exercise string `json:"exercise,omitempty"`
}

// Home is the course's home page: every topic with its labs, drills and
// exercises, each started from the page in a view of its own, and the
// clusters of the home, each opened the same way.
type Home struct {
	*gate
	o    HomeOptions
	page []byte
}

//go:embed home.html
var homeSource string

var homeTmpl = pageTemplate("home", homeSource)

// homeWords are the words home.html's script writes.
var homeWords = []string{"starting…", "opened in a new tab: ", "could not start: ", "no cluster in this home", "Open", "lab", "drill", "exercise", "needs --backend docker"}

// NewHome prepares the home page.
func NewHome(o HomeOptions) (*Home, error) {
	if o.Start == nil || o.Open == nil || o.Clusters == nil {
		return nil, errors.New("ui: the home page needs Start, Open and Clusters")
	}
	g, err := newGate(o.Token)
	if err != nil {
		return nil, err
	}
	page, err := renderPage(homeTmpl, o.Words, homeWords, map[string]any{"Topics": o.Topics})
	if err != nil {
		return nil, err
	}
	return &Home{gate: g, o: o, page: page}, nil
}

// Listen listens on 127.0.0.1:port (0: a free port).
func (h *Home) Listen(port int) (net.Listener, error) { return h.gate.listen(port) }

// URL is the address to open, token included.
func (h *Home) URL() string { return h.gate.url() }

// Handler serves the page, the clusters and the starts.
func (h *Home) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(h.page)
	})
	mux.HandleFunc("GET /clusters", func(w http.ResponseWriter, r *http.Request) {
		cs, err := h.o.Clusters(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, http.StatusOK, cs)
	})
	mux.HandleFunc("POST /start", h.handleStart)
	mux.HandleFunc("POST /open", h.handleOpen)
	return h.guard(mux)
}

// handleStart starts one of the page's items ({"path": ...}): nothing
// else, so a request cannot make kubelab read another file.
func (h *Home) handleStart(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&in); err != nil {
		http.Error(w, "want {\"path\": \"...\"}: "+err.Error(), http.StatusBadRequest)
		return
	}
	known := false
	for _, t := range h.o.Topics {
		known = known || slices.ContainsFunc(t.Items, func(i HomeItem) bool { return i.Path == in.Path })
	}
	if !known {
		http.Error(w, "not a lab, drill or exercise of this page: "+in.Path, http.StatusBadRequest)
		return
	}
	h.started(w, r, func(ctx context.Context) (string, error) { return h.o.Start(ctx, in.Path) })
}

// handleOpen opens the view of a cluster of the home ({"name": ...}).
func (h *Home) handleOpen(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&in); err != nil {
		http.Error(w, "want {\"name\": \"...\"}: "+err.Error(), http.StatusBadRequest)
		return
	}
	cs, err := h.o.Clusters(r.Context())
	if err != nil || !slices.ContainsFunc(cs, func(c HomeCluster) bool { return c.Name == in.Name }) {
		http.Error(w, "no cluster "+in.Name+" in this home", http.StatusBadRequest)
		return
	}
	h.started(w, r, func(ctx context.Context) (string, error) { return h.o.Open(ctx, in.Name) })
}

// started answers with the URL of a view start made, or why it failed.
func (h *Home) started(w http.ResponseWriter, r *http.Request, start func(context.Context) (string, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Minute)
	defer cancel()
	url, err := start(ctx)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": url})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Serve serves the home page on ln until ctx ends.
func (h *Home) Serve(ctx context.Context, ln net.Listener) error {
	return h.serve(ctx, ln, h.Handler())
}
