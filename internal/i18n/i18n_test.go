package i18n

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseAndFromEnv(t *testing.T) {
	for in, want := range map[string]Lang{"en": EN, "zh": ZH, "zh-CN": ZH, "zh_CN.UTF-8": ZH, "en_US.UTF-8": EN, "ZH": ZH} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("fr"); err == nil || !strings.Contains(err.Error(), "en and zh") {
		t.Errorf("Parse(fr) = %v, want an error naming the languages", err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want Lang
	}{
		{map[string]string{}, EN},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, ZH},
		{map[string]string{"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, EN},
		{map[string]string{"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW"}, ZH},
	} {
		if got := FromEnv(env(tc.env)); got != tc.want {
			t.Errorf("FromEnv(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestCatalogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "lab.yaml")
	texts := []string{"a title", "a description\nover two lines", "a step"}
	c, err := LoadCatalog(src, ZH)
	if err != nil || c.Exists {
		t.Fatalf("a catalog that does not exist: %v, exists %v", err, c.Exists)
	}
	if want := filepath.Join(dir, "i18n", "zh", "lab.yaml"); c.Path != want {
		t.Errorf("path %s, want %s", c.Path, want)
	}
	if err := c.Write(src, texts); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(c.Path)
	// A translator fills two of the three; the paragraph is re-wrapped.
	filled := strings.Replace(string(data), "zh: \"\"", "zh: 标题", 1)
	i := strings.LastIndex(filled, "zh: \"\"")
	filled = filled[:i] + "zh: 步骤" + filled[i+len("zh: \"\""):]
	if err := os.WriteFile(c.Path, []byte(filled), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = LoadCatalog(src, ZH)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.T("a  title"); got != "标题" {
		t.Errorf("T(a title) = %q (whitespace must not matter)", got)
	}
	if got := c.T("a description over two lines"); got != "a description over two lines" {
		t.Errorf("an empty translation must give the English, got %q", got)
	}
	c.T("a new step")
	if m := c.Missing(); !slices.Equal(m, []string{"a description over two lines", "a new step"}) {
		t.Errorf("missing %q", m)
	}
	if s := c.Stale(); !slices.Equal(s, []string{"a step"}) {
		t.Errorf("stale %q", s)
	}
	if p := c.Problems(); !regexp.MustCompile(`lab.yaml:\d+: stale: "a step"`).MatchString(p) || !strings.Contains(p, `missing zh text for "a new step"`) {
		t.Errorf("problems:\n%s", p)
	}
	// English needs no catalog and translates nothing.
	en, _ := LoadCatalog(src, EN)
	if en.T("a title") != "a title" || len(en.Missing()) != 0 {
		t.Error("English must be the identity")
	}
}

func TestCatalogErrors(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "x.feature")
	path := CatalogPath(src, ZH)
	if filepath.Base(path) != "x.yaml" {
		t.Fatalf("a feature's catalog is YAML: %s", path)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("texts:\n- en: a\n  zh: 一\n- en: a\n  zh: 二\n- en: b\n  fr: deux\n"), 0o644)
	_, err := LoadCatalog(src, ZH)
	for _, want := range []string{"x.yaml:4:3: \"a\" is translated twice (first at line 2)", "x.yaml:6:3: expected the keys en and zh, found en, fr"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant it to contain %q", err, want)
		}
	}
}

func TestReflow(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"one two three four", 9, "one two\nthree\nfour"},
		// Chinese lines of the source join without a space; English words
		// keep theirs, also next to Chinese on one line.
		{"领导者收到\n写请求 etcd 会\nreplicate it", 80, "领导者收到写请求 etcd 会replicate it"},
		// Chinese wraps between any two characters, two columns each, and
		// a line never starts with a comma.
		{"一二三四，五六", 8, "一二三四，\n五六"},
		{"para one\n\n第二段", 80, "para one\n\n第二段"},
	} {
		if got := Reflow(tc.in, tc.width); got != tc.want {
			t.Errorf("Reflow(%q, %d) =\n%q\nwant\n%q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestMessages checks that every translated format has the verbs of its
// English format, in order: a translation that drops or swaps one would
// print %!v(MISSING) or the wrong value.
func TestMessages(t *testing.T) {
	verbs := regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)
	for lang, m := range messages {
		for en, text := range m {
			if a, b := verbs.FindAllString(en, -1), verbs.FindAllString(text, -1); !slices.Equal(a, b) {
				t.Errorf("%s: %q has verbs %q, its translation %q has %q", lang, en, a, text, b)
			}
		}
	}
	p := NewPrinter(ZH)
	if got := p.Sprintf("Question:"); got != "问题：" {
		t.Errorf("zh Question: = %q", got)
	}
	if got := NewPrinter(EN).Sprintf("%d passed", 3); got != "3 passed" {
		t.Errorf("en = %q", got)
	}
	if got := p.Sprintf("no translation %d", 1); got != "no translation 1" {
		t.Errorf("a format with no translation = %q, want the English", got)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("领导者挂掉后会怎样", 10); got != "领导者..." {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("Truncate = %q", got)
	}
}

func TestTableAlignsChinese(t *testing.T) {
	var b strings.Builder
	tw := NewTabWriter(&b)
	tw.Write([]byte("问题\t要点\nRBAC：谁可以做什么\t1/5\n"))
	tw.Write([]byte("watch\t1/4\n"))
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "问题                要点\nRBAC：谁可以做什么  1/5\nwatch               1/4\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
