package i18n

import (
	"fmt"
	"io"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// Printer writes the command line's own words in a language: its format
// strings are the English text, looked up in the messages of the
// language (zh below); a format with no translation is written in
// English.
type Printer struct {
	lang Lang
	p    *message.Printer
}

// messages is every language's translations of the command line's own
// words, by their English format.
var messages = map[Lang]map[string]string{ZH: zh}

var builtin = func() *catalog.Builder {
	b := catalog.NewBuilder(catalog.Fallback(language.English))
	for l, m := range messages {
		tag := language.Make(string(l))
		for en, text := range m {
			if err := b.SetString(tag, en, text); err != nil {
				panic(fmt.Sprintf("i18n: message %q: %v", en, err)) // a defect of this file, caught by its tests
			}
		}
	}
	return b
}()

// NewPrinter writes in lang ("" is English).
func NewPrinter(lang Lang) *Printer {
	if lang == "" {
		lang = EN
	}
	return &Printer{lang: lang, p: message.NewPrinter(language.Make(string(lang)), message.Catalog(builtin))}
}

// Lang is the printer's language.
func (p *Printer) Lang() Lang {
	if p == nil {
		return EN
	}
	return p.lang
}

// Sprintf formats in the printer's language.
func (p *Printer) Sprintf(format string, args ...any) string {
	if p == nil || p.lang == EN {
		return fmt.Sprintf(format, args...)
	}
	return p.p.Sprintf(format, args...)
}

// Fprintf writes formatted in the printer's language.
func (p *Printer) Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return io.WriteString(w, p.Sprintf(format, args...))
}

// S translates a text with no arguments.
func (p *Printer) S(text string) string {
	if p == nil || p.lang == EN {
		return text
	}
	return p.p.Sprintf(text)
}
