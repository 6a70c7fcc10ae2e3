// Package i18n gives kubelab's learner-facing text in the learner's
// language: English, the language the content is written in, or Chinese,
// the language of the course it teaches.
//
// Content (labs, drills, exercises) is translated by catalogs: the
// catalog of a file F in language L is F's directory/i18n/L/F's base name
// with .yaml, a list of the file's English texts each with its
// translation. Texts are matched with their whitespace collapsed, so
// re-wrapping a paragraph keeps its translation, while changing a word
// makes the translation missing (and the old entry stale) until the
// catalog is updated: `kubelab translate --write FILE` does the
// bookkeeping, a translator writes the text.
//
// The command line's own words (headings, progress, timeline details) are
// translated by message catalogs built into the binary (messages.go),
// through golang.org/x/text/message.
package i18n

import (
	"fmt"
	"strings"
)

// Lang is a language kubelab speaks.
type Lang string

// The languages kubelab speaks: English is the source of every text.
const (
	EN Lang = "en"
	ZH Lang = "zh"
)

// Langs lists every language, English first.
var Langs = []Lang{EN, ZH}

// Name is the language's name in itself, e.g. 中文.
func (l Lang) Name() string {
	if l == ZH {
		return "中文"
	}
	return "English"
}

// Parse reads a language as a flag or a locale gives it: en, zh, zh-CN,
// zh_CN.UTF-8, en_US...
func Parse(s string) (Lang, error) {
	tag := strings.ToLower(s)
	if i := strings.IndexAny(tag, "-_.@"); i >= 0 {
		tag = tag[:i]
	}
	for _, l := range Langs {
		if tag == string(l) {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown language %q: kubelab speaks en and zh", s)
}

// FromEnv is the language of the locale (LC_ALL, then LC_MESSAGES, then
// LANG, as setlocale reads them): Chinese for a zh locale, English
// otherwise.
func FromEnv(getenv func(string) string) Lang {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if s := getenv(v); s != "" {
			if l, err := Parse(s); err == nil {
				return l
			}
			return EN // C, POSIX and locales kubelab does not speak
		}
	}
	return EN
}

// Normalize is the form texts are matched in: whitespace runs collapsed
// to one space, none at the ends.
func Normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
