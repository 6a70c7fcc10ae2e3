package ui

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"
	"time"

	"kubelab.dev/kubelab/internal/i18n"
)

// gate is what every page of the package puts in front of its handlers:
// the checks of the package comment, for one server on one loopback port.
type gate struct {
	token string
	addr  string // host:port it listens on, for Host and Origin checks
}

// newGate keeps tok as the secret, or makes a random one when it is "".
func newGate(tok string) (*gate, error) {
	if tok == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		tok = hex.EncodeToString(b)
	}
	return &gate{token: tok}, nil
}

// listen listens on 127.0.0.1:port (0: a free port).
func (g *gate) listen(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("ui: listen: %w", err)
	}
	g.addr = ln.Addr().String()
	return ln, nil
}

// url is the address to open, token included.
func (g *gate) url() string { return "http://" + g.addr + "/?token=" + g.token }

// serve serves h, behind the guard, on ln until ctx ends; requests
// carry ctx (they end with the server).
func (g *gate) serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	if g.addr == "" {
		g.addr = ln.Addr().String()
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// pageTemplate parses one of the package's pages: {{t "..."}} is a text
// in the page's language, {{lang}} its code (both set by renderPage).
func pageTemplate(name, src string) *template.Template {
	return template.Must(template.New(name).Funcs(template.FuncMap{
		"inc":  func(i int) int { return i + 1 },
		"t":    func(s string) string { return s },
		"lang": func() string { return string(i18n.EN) },
	}).Parse(src))
}

// renderPage executes page in p's language with data, adding as
// data["Words"] the JSON of words, the texts its script writes (w("...")),
// translated.
func renderPage(page *template.Template, p *i18n.Printer, words []string, data map[string]any) ([]byte, error) {
	tr := map[string]string{}
	for _, w := range words {
		tr[w] = p.S(w)
	}
	js, err := json.Marshal(tr)
	if err != nil {
		return nil, err
	}
	data["Words"] = string(js)
	tmpl, err := page.Clone()
	if err != nil {
		return nil, err
	}
	tmpl.Funcs(template.FuncMap{"t": p.S, "lang": func() string { return string(p.Lang()) }})
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("ui: page %s: %w", page.Name(), err)
	}
	return b.Bytes(), nil
}

// CookieName is the cookie that carries the token of the server on
// addr (host:port) after the first visit. Browsers share cookies between
// the ports of a host: each server has its own name, or the home page and
// the views it starts would overwrite each other's.
func CookieName(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return "kubelab_ui_" + port
}

// guard refuses what is not the user's own page asking.
func (g *gate) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		if g.addr != "" && !g.ownHost(r.Host) {
			http.Error(w, "unknown host: this server answers only to "+g.addr, http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			if host, ok := strings.CutPrefix(o, "http://"); !ok || !g.ownHost(host) {
				http.Error(w, "cross-origin request refused", http.StatusForbidden)
				return
			}
		}
		name := CookieName(g.addr)
		if q := r.URL.Query().Get("token"); q != "" {
			if !g.tokenOK(q) {
				http.Error(w, "wrong token", http.StatusForbidden)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: name, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, r.URL.Path, http.StatusSeeOther) // the token leaves the address bar
			return
		}
		c, err := r.Cookie(name)
		switch {
		case err != nil:
			http.Error(w, "a token is needed: open the URL kubelab printed", http.StatusUnauthorized)
			return
		case !g.tokenOK(c.Value):
			http.Error(w, "wrong token", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownHost reports whether host (host:port) is the address the server
// listens on, by IP or as localhost.
func (g *gate) ownHost(host string) bool {
	return host == g.addr || host == strings.Replace(g.addr, "127.0.0.1", "localhost", 1)
}

func (g *gate) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(g.token)) == 1
}
