package i18n

import (
	"strings"
	"unicode"

	"github.com/mattn/go-runewidth"
)

// Reflow rewraps each paragraph of s (paragraphs are separated by a blank
// line) to width terminal columns. It knows Chinese: a Chinese character
// takes two columns, a line may break between any two of them, and the
// line breaks of the source between Chinese text and anything join
// without a space (English words join with one).
func Reflow(s string, width int) string {
	var paras []string
	for _, p := range strings.Split(s, "\n\n") {
		var b strings.Builder
		n := 0
		for i, t := range tokens(p) {
			w := runewidth.StringWidth(t.text)
			sep := 0
			if t.space {
				sep = 1
			}
			switch {
			case i == 0:
			case n+sep+w > width && !closing(t.text):
				b.WriteString("\n")
				n = 0
			case t.space:
				b.WriteString(" ")
				n++
			}
			b.WriteString(t.text)
			n += w
		}
		paras = append(paras, b.String())
	}
	return strings.Join(paras, "\n\n")
}

// token is a unit a line may break before: a word, or one wide
// character; space is whether a space separates it from the one before.
type token struct {
	text  string
	space bool
}

func tokens(p string) []token {
	var (
		out         []token
		word        []rune
		space, brk  bool // whitespace, and a line break in it, since the last token
		lastWide    bool
		wordStarted bool
	)
	sep := func(wide bool) bool {
		if len(out) == 0 || !space {
			return false
		}
		return !(brk && (wide || lastWide))
	}
	flush := func() {
		if len(word) > 0 {
			out = append(out, token{string(word), wordStarted})
			word, lastWide = nil, false
		}
	}
	for _, r := range p {
		switch {
		case r == '\n':
			flush()
			space, brk = true, true
		case unicode.IsSpace(r):
			flush()
			space = true
		case wideRune(r):
			flush()
			out = append(out, token{string(r), sep(true)})
			space, brk, lastWide = false, false, true
		default:
			if len(word) == 0 {
				wordStarted = sep(false)
				space, brk = false, false
			}
			word = append(word, r)
		}
	}
	flush()
	return out
}

func wideRune(r rune) bool { return runewidth.RuneWidth(r) == 2 }

// closing is punctuation that must not start a line (，。：；？！）」).
func closing(s string) bool {
	return strings.ContainsAny(s, "，。、：；？！）」』》")
}

// Truncate cuts s to width terminal columns, ending it with "..." when it
// was longer (never inside a character).
func Truncate(s string, width int) string { return runewidth.Truncate(s, width, "...") }
