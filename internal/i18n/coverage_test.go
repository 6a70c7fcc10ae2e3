package i18n

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestEveryMessageHasChinese: every literal text the code hands a
// Printer (p.S, p.Sprintf, p.Fprintf, the templates' t and tf, the
// browser view's script words) has its Chinese in zh.go: a heading added
// in English only would reach a Chinese learner in English.
func TestEveryMessageHasChinese(t *testing.T) {
	root := filepath.Join("..", "..")
	calls := regexp.MustCompile(`\b(?:p|g\.words|words|x\.r\.Words|s\.x\.r\.Words|s\.o\.Words)\.(?:S|Sprintf|Fprintf\([^,()]+,)\(?\s*("(?:[^"\\]|\\.)*")`)
	tmpl := regexp.MustCompile(`\{\{t[f]? ("(?:[^"\\]|\\.)*")`)
	script := regexp.MustCompile(`\bw\(("(?:[^"\\]|\\.)*")\)`)
	verbs := regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)
	missing := map[string]string{}
	check := func(file, lit string) {
		s, err := strconv.Unquote(lit)
		if err != nil {
			t.Errorf("%s: %s: %v", file, lit, err)
			return
		}
		if !strings.ContainsFunc(verbs.ReplaceAllString(s, ""), unicode.IsLetter) {
			return // a format with no words
		}
		if _, ok := zh[s]; !ok {
			missing[s] = file
		}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || strings.HasSuffix(path, "_test.go") || (ext != ".go" && ext != ".tmpl" && ext != ".html") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(data)
		for _, re := range []*regexp.Regexp{calls, tmpl, script} {
			if ext == ".go" && re != calls {
				continue
			}
			for _, m := range re.FindAllStringSubmatch(src, -1) {
				check(path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for s, file := range missing {
		b, _ := json.Marshal(s)
		t.Errorf("%s: %s has no Chinese in zh.go", file, b)
	}
}
