package safetext

import (
	"bytes"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain name":                      "plain name",
		"two\nlines\tand a tab":           "two\nlines\tand a tab",
		"x\x1b[2K\r\x1b[32mPASSED\x1b[0m": `x\x1b[2K\r\x1b[32mPASSED\x1b[0m`,
		"bell\a del\x7f":                  `bell\x07 del\x7f`,
		"c1 csi \u009b31m":                `c1 csi \u009b31m`,
		"bidi \u202eevil\u202c":           `bidi \u202eevil\u202c`,
		"zero\u200bwidth":                 `zero\u200bwidth`,
		"not utf-8 \xff\xfe":              `not utf-8 \xff\xfe`,
		"中文 ✔ ⚠️ \ufffd":                  "中文 ✔ ⚠️ \ufffd",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := Line("a\nb\tc\x1b"), `a\nb\tc\x1b`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestWriterHoldsSplitRunesAndLetsControlThrough(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	r := []byte("中\x1b[2J")
	for _, chunk := range [][]byte{r[:1], r[1:2], r[2:]} { // 中 split over three writes
		if n, err := w.Write(chunk); err != nil || n != len(chunk) {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	if err := Control(w, "\x1b[H"); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `中\x1b[2J`+"\x1b[H"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if w.Unwrap() != &b {
		t.Error("Unwrap is not the stream written to")
	}
}
