// Package safetext makes text that kubelab did not write (names and
// messages from submissions, lab files and clusters, command output) safe
// to show: control characters reach no terminal, report or page raw.
//
// A name such as "x\x1b[2K\r\x1b[32mscore 10/10 PASSED" would otherwise
// erase the line it is printed on and forge another. Escape shows every
// such character as a Go escape (\x1b, \r, \u202e) instead; line breaks
// and tabs stay, as text is made of lines.
package safetext

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal raw: C0 and C1
// controls and DEL (Cc) other than line feed and tab, and the invisible
// format characters (Cf: bidi overrides and isolates, zero-width marks)
// that reorder or hide what follows.
func unsafe(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// escape writes r as a Go escape.
func escape(b *strings.Builder, r rune) {
	switch {
	case r == '\r':
		b.WriteString(`\r`)
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// Escape returns s with every unsafe character, and every byte that is
// not UTF-8, shown as an escape; line breaks and tabs stay.
func Escape(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			escape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line is Escape that also shows line breaks and tabs as escapes, for a
// value that must stay on one line (a name in a table or a title).
func Line(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(Escape(s))
}

func needs(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r) {
			return true
		}
	}
	return false
}

// Writer escapes what is written through it (Escape), for a stream whose
// text may carry what kubelab did not write; WriteControl lets kubelab's
// own terminal sequences through.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence at the end of the last Write
}

// NewWriter escapes what it writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap returns the stream the Writer writes to.
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write escapes p and writes it. A UTF-8 sequence split across two
// writes is held until the next one completes it.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := append(w.pending, p...)
	w.pending = nil
	// Hold back a trailing sequence that may still be completed.
	cut := len(buf)
	for back := 1; back < utf8.UTFMax && back <= len(buf); back++ {
		c := buf[len(buf)-back]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(buf[len(buf)-back:]) {
				cut = len(buf) - back
			}
			break
		}
	}
	w.pending = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(w.w, Escape(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteControl writes seq (kubelab's own terminal control sequence, such
// as clearing the screen) unescaped.
func (w *Writer) WriteControl(seq string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := io.WriteString(w.w, seq)
	return err
}

// Control writes seq to w unescaped when w is a Writer (or any stream
// that offers WriteControl), and as written otherwise.
func Control(w io.Writer, seq string) error {
	if c, ok := w.(interface{ WriteControl(string) error }); ok {
		return c.WriteControl(seq)
	}
	_, err := io.WriteString(w, seq)
	return err
}
