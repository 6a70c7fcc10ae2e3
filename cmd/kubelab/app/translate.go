package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/load"
)

// ErrUntranslated is returned by translate when a text has no translation
// or a catalog has a stale entry.
var ErrUntranslated = errors.New("translations incomplete")

// translatable is content whose learner-facing texts translate: a lab, an
// exercise, a drill.
type translatable interface {
	Translate(t func(string) string)
}

// localize translates content read from file into the command's
// language. Texts with no translation stay in English, with a note on
// stderr saying how many and how to list them.
func (g *globals) localize(file string, c translatable) {
	if g.lang == i18n.EN || g.lang == "" {
		return
	}
	cat, err := i18n.LoadCatalog(file, g.lang)
	if err != nil {
		fmt.Fprintf(g.streams.Err, "note: %v (shown in English)\n", err)
		return
	}
	c.Translate(cat.T)
	if n := len(cat.Missing()); n > 0 {
		fmt.Fprintf(g.streams.Err, "note: %d texts of %s have no %s translation and are shown in English (kubelab translate --lang %s %s lists them)\n",
			n, file, g.lang.Name(), g.lang, file)
	}
}

func newTranslateCommand(g *globals) *cobra.Command {
	var write bool
	cmd := &cobra.Command{
		Use:   "translate [--lang zh] [--write] PATH...",
		Short: "List the texts of labs, drills and exercises that have no translation; --write updates their catalogs for a translator",
		Long: `translate checks the translation catalogs of labs, drills and exercises
(files or directories, walked) in --lang (default zh): each content file F has one per language in
F's directory/i18n/LANG/, listing F's English texts with their
translations. It prints every text with no translation and every stale
entry (a text the file no longer has), and fails when there is one.

--write brings each catalog up to date instead: it keeps the translations,
adds an empty entry for each new text and drops the stale ones; a
translator then fills the empty entries.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l := g.lang
			if g.langFlag == "" || l == i18n.EN {
				l = i18n.ZH // English is the source: the catalogs are the other languages'
			}
			files, err := contentFiles(args)
			if err != nil {
				return invalid(err)
			}
			var missing, stale int
			for _, f := range files {
				c, err := readContent(f)
				if err != nil {
					return invalid(err)
				}
				cat, err := i18n.LoadCatalog(f, l)
				if err != nil {
					return invalid(err)
				}
				if write {
					if err := cat.Write(f, i18n.Texts(c.Translate)); err != nil {
						return err
					}
					continue
				}
				c.Translate(cat.T)
				missing, stale = missing+len(cat.Missing()), stale+len(cat.Stale())
				fmt.Fprint(g.streams.Out, cat.Problems())
			}
			if write {
				fmt.Fprintf(g.streams.Out, "%d catalogs written\n", len(files))
				return nil
			}
			fmt.Fprintf(g.streams.Out, "%d files: %d texts without a %s translation, %d stale entries\n", len(files), missing, l.Name(), stale)
			if missing+stale > 0 {
				return withCode(ExitFailed, ErrUntranslated)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&write, "write", false, "update the catalogs: keep translations, add empty entries for new texts, drop stale ones")
	return cmd
}

// contentFiles expands paths into the content files below them: feature
// files, and YAML files of kind Lab or Exercise (catalogs, manifests and
// testdata are not content).
func contentFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); path != p && (n == "i18n" || n == "manifests" || n == "testdata" || n == "solution" || n == "wrong") {
					return filepath.SkipDir
				}
				return nil
			}
			if k := contentKind(path); k != "" {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no labs, drills or exercises in %s", strings.Join(paths, ", "))
	}
	return out, nil
}

// contentKind is "Feature" for a feature file, the kind of a lab or
// exercise file, and "" for anything else.
func contentKind(path string) string {
	switch filepath.Ext(path) {
	case ".feature":
		return "Feature"
	case ".yaml", ".yml":
	default:
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var h struct {
		Kind string `yaml:"kind"`
	}
	if yaml.Unmarshal(data, &h) != nil || (h.Kind != "Lab" && h.Kind != "Exercise") {
		return ""
	}
	return h.Kind
}

// readContent loads a lab, exercise or drill file.
func readContent(path string) (translatable, error) {
	switch contentKind(path) {
	case "Feature":
		ds, err := features.Load(path)
		if err != nil {
			return nil, err
		}
		return ds[0], nil
	case "Lab":
		return load.ReadLab(path)
	case "Exercise":
		return grade.LoadExercise(path)
	}
	return nil, fmt.Errorf("%s: not a lab, drill or exercise", path)
}

// loadExercise reads an exercise in the command's language.
func (g *globals) loadExercise(path string) (*grade.Exercise, error) {
	ex, err := grade.LoadExercise(path)
	if err != nil {
		return nil, err
	}
	g.localize(ex.File(), ex)
	return ex, nil
}

// loadDrills reads drills in the command's language.
func (g *globals) loadDrills(paths ...string) ([]*features.Drill, error) {
	ds, err := features.Load(paths...)
	for _, d := range ds {
		g.localize(d.Path, d)
	}
	return ds, err
}
