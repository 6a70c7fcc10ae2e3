package features

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gherkin "github.com/cucumber/gherkin/go/v42"
	messages "github.com/cucumber/messages/go/v34"
)

// Section headings of a feature's description (see README.md): the
// interview question, then the model answer.
const (
	QuestionHeading    = "Question:"
	ModelAnswerHeading = "Model answer:"
)

// Drill is a feature file read as an interview drill.
type Drill struct {
	// Path is the feature file.
	Path string
	// Title is the Feature's name.
	Title string
	// Question is the interview question, from the description's
	// "Question:" section.
	Question string
	// ModelAnswer is the description's "Model answer:" section.
	ModelAnswer string
	// KeyPoints are the points of the "Key points:" section, after the
	// model answer: what a good answer makes, how to tell, and what the
	// cluster shows of each (none for a drill without the section).
	KeyPoints []KeyPoint
	// Scenarios are the feature's scenarios, in file order.
	Scenarios []ScenarioDoc
	// Topics are the course topics the drill practises: its Feature's
	// tags, without the @ (see package curriculum).
	Topics []string
	// Docker is set by the tag @docker: the drill needs real nodes (the
	// docker backend).
	Docker bool
	// Steps are the texts of the feature's steps (without their
	// keywords), in file order: what the drill shows while it runs.
	Steps []string
}

// ScenarioDoc is a scenario's name and description.
type ScenarioDoc struct {
	Name, Description string
}

// Load reads feature files as drills (directories: every *.feature in
// them) and checks them without running anything: each must follow the
// Question / Model answer convention, and each step must match exactly one
// phrase of the library. It reports every problem of every file at once;
// undefined steps come with the closest phrases.
func Load(paths ...string) ([]*Drill, error) {
	files, err := featureFiles(paths)
	if err != nil {
		return nil, err
	}
	var drills []*Drill
	var errs []error
	for _, f := range files {
		d, err := loadDrill(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		drills = append(drills, d)
	}
	return drills, errors.Join(errs...)
}

// featureFiles expands directories into their *.feature files.
func featureFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("feature: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(p, "*.feature"))
		sort.Strings(m)
		if len(m) == 0 {
			return nil, fmt.Errorf("feature: no *.feature files in %s", p)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		return nil, errors.New("feature: no feature files given")
	}
	return out, nil
}

func loadDrill(path string) (*Drill, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read feature: %w", err)
	}
	ids := &messages.Incrementing{}
	doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(src), ids.NewId)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Feature == nil {
		return nil, fmt.Errorf("%s: no Feature", path)
	}
	var errs []error
	d := &Drill{Path: path, Title: doc.Feature.Name}
	for _, t := range doc.Feature.Tags {
		if tag := strings.TrimPrefix(t.Name, "@"); tag == "docker" {
			d.Docker = true
		} else {
			d.Topics = append(d.Topics, tag)
		}
	}
	var points string
	d.Question, d.ModelAnswer, points, err = splitDescription(doc.Feature.Description)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s:%d: %w", path, doc.Feature.Location.Line, err))
	}
	if points != "" {
		line := headingLine(src, KeyPointsHeading)
		if d.KeyPoints, err = parseKeyPoints(points, line); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", path, KeyPointsHeading, err))
		}
	}
	lines := map[string]int64{}
	for _, c := range doc.Feature.Children {
		if c.Background != nil {
			for _, st := range c.Background.Steps {
				lines[st.Id] = st.Location.Line
				d.Steps = append(d.Steps, st.Text)
			}
		}
		if c.Scenario != nil {
			d.Scenarios = append(d.Scenarios, ScenarioDoc{Name: c.Scenario.Name, Description: dedent(c.Scenario.Description)})
			for _, st := range c.Scenario.Steps {
				lines[st.Id] = st.Location.Line
				d.Steps = append(d.Steps, st.Text)
			}
		}
		if c.Rule != nil {
			errs = append(errs, fmt.Errorf("%s:%d: Rule is not supported in drills", path, c.Rule.Location.Line))
		}
	}
	if len(d.Scenarios) == 0 {
		errs = append(errs, fmt.Errorf("%s: no Scenario", path))
	}
	seen := map[int64]bool{}
	for _, p := range gherkin.Pickles(*doc, path, ids.NewId) {
		for _, st := range p.Steps {
			line := lines[st.AstNodeIds[0]]
			if seen[line] {
				continue // a Background or Outline step checked once
			}
			seen[line] = true
			switch m := matches(st.Text); len(m) {
			case 1:
			case 0:
				errs = append(errs, fmt.Errorf("%s:%d: %w", path, line, undefinedError(st.Text)))
			default:
				var ps []string
				for _, s := range m {
					ps = append(ps, s.Phrase)
				}
				errs = append(errs, fmt.Errorf("%s:%d: %q is ambiguous: it matches %s", path, line, st.Text, strings.Join(ps, "; ")))
			}
		}
	}
	return d, errors.Join(errs...)
}

// splitDescription cuts a feature description into its question, model
// answer and key points (the text of the section, "" when none).
func splitDescription(desc string) (question, answer, points string, err error) {
	text := dedent(desc)
	qi := strings.Index(text, QuestionHeading)
	ai := strings.Index(text, "\n"+ModelAnswerHeading)
	if qi != 0 || ai < 0 {
		return "", "", "", fmt.Errorf("the Feature description must start with %q and have a line starting with %q (see features/README.md)", QuestionHeading, ModelAnswerHeading)
	}
	question = strings.TrimSpace(text[len(QuestionHeading):ai])
	rest := text[ai+1:]
	if ki := strings.Index(rest, "\n"+KeyPointsHeading); ki >= 0 {
		rest, points = rest[:ki], rest[ki+1+len(KeyPointsHeading):]
	}
	answer = dedent(strings.TrimPrefix(rest, ModelAnswerHeading))
	if question == "" || answer == "" {
		return "", "", "", errors.New("empty question or model answer")
	}
	return question, answer, points, nil
}

// headingLine is the 1-based line of the first line of src that is
// heading once trimmed (0 when none).
func headingLine(src []byte, heading string) int {
	for i, l := range strings.Split(string(src), "\n") {
		if strings.TrimSpace(l) == heading {
			return i + 1
		}
	}
	return 0
}

// dedent removes the indentation common to the non-blank lines of s and
// the blank lines around it.
func dedent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			lines[i] = l[common:]
		} else {
			lines[i] = strings.TrimLeft(l, " \t")
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
