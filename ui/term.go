package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/creack/pty"
)

// dist holds the front end's files (xterm.js and its fit addon), copied
// there by hack/build.sh; without them the page has no terminal and says
// so.
//
//go:embed all:web/dist
var dist embed.FS

// assets are the front end's files as the page requests them.
func assets() fs.FS {
	sub, err := fs.Sub(dist, "web/dist")
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}

// hasTerminal reports whether the front end's terminal files are there.
func hasTerminal() bool {
	_, err := fs.Stat(assets(), "xterm.js")
	return err == nil
}

// Shell says how the page's terminals start: a shell with the cluster's
// KUBECONFIG and a kubectl on PATH that reaches it.
type Shell struct {
	// Command is the shell and its arguments ("" = $SHELL, else /bin/sh).
	Command []string
	// Env is added to the environment (KUBECONFIG=...).
	Env []string
	// Kubectl is the command a kubectl on the shell's PATH runs, e.g.
	// ["/usr/local/bin/kubelab", "kubectl", "--name", "lab"] (nil: none).
	Kubectl []string
	// Dir is where the shell starts ("" = the current directory).
	Dir string
}

// terminal is one shell on a PTY; it outlives the page's connections (a
// reload reconnects to it and gets its recent output again).
type terminal struct {
	cmd  *exec.Cmd
	ptmx *os.File

	mu      sync.Mutex
	backlog []byte                   // the last output, replayed on reconnect
	conns   map[*websocket.Conn]bool // the pages showing it
	done    chan struct{}
}

// backlogSize bounds the output a reconnecting page is sent again.
const backlogSize = 64 << 10

// terminals are the server's shells by the page's id for them.
type terminals struct {
	shell Shell
	bin   string // the directory of the kubectl shim

	mu   sync.Mutex
	byID map[string]*terminal
}

var termID = regexp.MustCompile(`^[A-Za-z0-9-]{1,40}$`)

// get returns the terminal of id, starting its shell if needed.
func (ts *terminals) get(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.byID[id]; ok {
		select {
		case <-t.done:
		default:
			return t, nil
		}
	}
	if ts.bin == "" && len(ts.shell.Kubectl) > 0 {
		dir, err := os.MkdirTemp("", "kubelab-ui-bin-")
		if err != nil {
			return nil, err
		}
		shim := "#!/bin/sh\nexec"
		for _, a := range ts.shell.Kubectl {
			shim += " " + shellQuote(a)
		}
		shim += " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(shim), 0o755); err != nil {
			return nil, err
		}
		ts.bin = dir
	}
	argv := ts.shell.Command
	if len(argv) == 0 {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = ts.shell.Dir
	cmd.Env = append(os.Environ(), ts.shell.Env...)
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	if ts.bin != "" {
		cmd.Env = append(cmd.Env, "PATH="+ts.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		return nil, fmt.Errorf("start the terminal's shell: %w", err)
	}
	t := &terminal{cmd: cmd, ptmx: ptmx, conns: map[*websocket.Conn]bool{}, done: make(chan struct{})}
	go t.pump()
	ts.byID[id] = t
	return t, nil
}

// pump copies the shell's output to the backlog and every page.
func (t *terminal) pump() {
	defer close(t.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := t.ptmx.Read(buf)
		if n > 0 {
			t.mu.Lock()
			t.backlog = append(t.backlog, buf[:n]...)
			if len(t.backlog) > backlogSize {
				t.backlog = t.backlog[len(t.backlog)-backlogSize:]
			}
			for c := range t.conns {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = c.Write(ctx, websocket.MessageBinary, buf[:n])
				cancel()
			}
			t.mu.Unlock()
		}
		if err != nil {
			_ = t.cmd.Wait()
			return
		}
	}
}

// close ends every shell and removes the kubectl shim.
func (ts *terminals) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.byID {
		if t.cmd.Process != nil {
			_ = t.cmd.Process.Kill()
		}
		_ = t.ptmx.Close()
		<-t.done
	}
	if ts.bin != "" {
		_ = os.RemoveAll(ts.bin)
	}
}

// termMessage is what the page sends: keystrokes or a new size.
type termMessage struct {
	Type string `json:"type"` // input, resize
	Data string `json:"data,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
	Rows uint16 `json:"rows,omitempty"`
}

// handleTerm connects the page to terminal {id} over a WebSocket: output
// as binary messages, input and resizes as JSON text messages.
func (s *Server) handleTerm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !termID.MatchString(id) {
		http.Error(w, "bad terminal id", http.StatusBadRequest)
		return
	}
	// The guard has checked the token and the Origin; websocket.Accept
	// checks again that the Origin is this host.
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	t, err := s.terms.get(id)
	if err != nil {
		_ = c.Close(websocket.StatusInternalError, err.Error())
		return
	}
	t.mu.Lock()
	if len(t.backlog) > 0 {
		_ = c.Write(r.Context(), websocket.MessageBinary, t.backlog)
	}
	t.conns[c] = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
	}()
	for {
		_, data, err := c.Read(r.Context())
		if err != nil {
			return
		}
		var m termMessage
		if err := json.Unmarshal(data, &m); err != nil {
			continue
		}
		switch m.Type {
		case "input":
			if _, err := io.WriteString(t.ptmx, m.Data); err != nil && !errors.Is(err, os.ErrClosed) {
				return
			}
		case "resize":
			if m.Cols > 0 && m.Rows > 0 {
				_ = pty.Setsize(t.ptmx, &pty.Winsize{Rows: m.Rows, Cols: m.Cols})
			}
		}
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
