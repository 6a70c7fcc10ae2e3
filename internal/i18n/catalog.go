package i18n

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Catalog is the translation of one content file's texts into one
// language. Its zero value and a nil *Catalog translate nothing.
type Catalog struct {
	// Lang is the language it translates into.
	Lang Lang
	// Path is the catalog file ("" for English, which needs none).
	Path string
	// Exists is whether the catalog file exists.
	Exists bool

	entries map[string]*entry // by the English text, normalized
	order   []string          // the entries' keys in file order
	missing []string          // texts asked for with no translation, in order
	asked   map[string]bool
}

type entry struct {
	en, text string
	line     int
}

// CatalogPath is where the catalog of the content file source in lang
// lives: source's directory/i18n/lang/source's base name, with .yaml.
func CatalogPath(source string, lang Lang) string {
	base := strings.TrimSuffix(filepath.Base(source), filepath.Ext(source)) + ".yaml"
	return filepath.Join(filepath.Dir(source), "i18n", string(lang), base)
}

// LoadCatalog reads the catalog of the content file source in lang. A
// catalog that does not exist is empty (every text is missing); English
// needs none. Its errors carry file:line.
func LoadCatalog(source string, lang Lang) (*Catalog, error) {
	c := &Catalog{Lang: lang, entries: map[string]*entry{}, asked: map[string]bool{}}
	if lang == EN || lang == "" {
		c.Lang = EN
		return c, nil
	}
	c.Path = CatalogPath(source, lang)
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read translations: %w", err)
	}
	c.Exists = true
	return c, c.parse(data)
}

// file is a catalog file's shape.
type file struct {
	Texts []yaml.Node `yaml:"texts"`
}

func (c *Catalog) parse(data []byte) error {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%s: %w", c.Path, err)
	}
	var errs []error
	for i := range f.Texts {
		n := &f.Texts[i]
		var e map[string]string
		if err := n.Decode(&e); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d:%d: expected a text as {en: ..., %s: ...}: %w", c.Path, n.Line, n.Column, c.Lang, err))
			continue
		}
		en, ok := e["en"]
		if !ok || len(e) != 2 {
			errs = append(errs, fmt.Errorf("%s:%d:%d: expected the keys en and %s, found %s", c.Path, n.Line, n.Column, c.Lang, keys(e)))
			continue
		}
		text, ok := e[string(c.Lang)]
		if !ok {
			errs = append(errs, fmt.Errorf("%s:%d:%d: expected the keys en and %s, found %s", c.Path, n.Line, n.Column, c.Lang, keys(e)))
			continue
		}
		k := Normalize(en)
		if prev, dup := c.entries[k]; dup {
			errs = append(errs, fmt.Errorf("%s:%d:%d: %q is translated twice (first at line %d)", c.Path, n.Line, n.Column, short(en), prev.line))
			continue
		}
		c.entries[k] = &entry{en: en, text: text, line: n.Line}
		c.order = append(c.order, k)
	}
	return errors.Join(errs...)
}

func keys(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return "none"
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

func short(s string) string {
	s = Normalize(s)
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}

// T is the translation of the English text en: en itself in English, for
// a blank text, or when the catalog has none (the text is then missing).
func (c *Catalog) T(en string) string {
	if c == nil || c.Lang == EN || strings.TrimSpace(en) == "" {
		return en
	}
	k := Normalize(en)
	if !c.asked[k] {
		c.asked[k] = true
		if e, ok := c.entries[k]; !ok || strings.TrimSpace(e.text) == "" {
			c.missing = append(c.missing, en)
		}
	}
	if e, ok := c.entries[k]; ok && strings.TrimSpace(e.text) != "" {
		return e.text
	}
	return en
}

// Missing lists the texts asked for that have no translation (none, or
// an empty one), in the order they were asked for.
func (c *Catalog) Missing() []string {
	if c == nil {
		return nil
	}
	return c.missing
}

// Stale lists the catalog's English texts that were never asked for:
// texts the content file no longer has (it changed, or they moved).
func (c *Catalog) Stale() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, k := range c.order {
		if !c.asked[k] {
			out = append(out, c.entries[k].en)
		}
	}
	return out
}

// Problems describes what the catalog lacks for the texts asked of it:
// its missing and stale texts, one line each ("" when complete).
func (c *Catalog) Problems() string {
	var b strings.Builder
	for _, s := range c.Missing() {
		fmt.Fprintf(&b, "%s: missing %s text for %q\n", c.Path, c.Lang, short(s))
	}
	for _, s := range c.Stale() {
		fmt.Fprintf(&b, "%s:%d: stale: %q is not a text of the file any more\n", c.Path, c.entries[Normalize(s)].line, short(s))
	}
	return b.String()
}

// Write writes the catalog for texts, the English texts of its content
// file in file order: existing translations are kept, a missing one is
// an empty entry for a translator to fill, stale entries are dropped.
func (c *Catalog) Write(source string, texts []string) error {
	if c.Lang == EN {
		return errors.New("write translations: English is the source language and needs no catalog")
	}
	doc := &yaml.Node{Kind: yaml.MappingNode}
	list := &yaml.Node{Kind: yaml.SequenceNode}
	doc.Content = append(doc.Content, str("texts"), list)
	doc.HeadComment = fmt.Sprintf("%s text of %s: every English text of the file, with its translation\n(kubelab translate --lang %s --write %s updates the list)",
		c.Lang.Name(), filepath.Base(source), c.Lang, filepath.ToSlash(source))
	seen := map[string]bool{}
	for _, en := range texts {
		k := Normalize(en)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		text := ""
		if e, ok := c.entries[k]; ok {
			text = e.text
		}
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("en"), str(en), str(string(c.Lang)), str(text),
		}})
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return fmt.Errorf("write translations %s: %w", c.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
		return fmt.Errorf("write translations: %w", err)
	}
	if err := os.WriteFile(c.Path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write translations: %w", err)
	}
	return nil
}

// str is a string node, a literal block when it has several lines.
func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(strings.TrimRight(s, "\n"), "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

// Texts lists the texts a Translate method visits, in its order: it is
// called with a function that records its argument and returns it.
func Texts(translate func(t func(string) string)) []string {
	var out []string
	translate(func(s string) string {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
		return s
	})
	return out
}
