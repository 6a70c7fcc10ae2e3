package report

import (
	"encoding/xml"
	"io"

	"kubelab.dev/kubelab/internal/safetext"
)

// JUnit is the one JUnit XML model of kubelab's reports: labs (a suite per
// lab, a testcase per step), grades (a suite per submission, a testcase
// per check with its points as properties) and drills (a suite per
// scenario, a testcase per step, the feature as classname). Build it with
// Add; Write encodes it.
type JUnit struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr,omitempty"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is a testsuite; its counts follow its cases (AddCase).
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       float64         `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Cases      []JUnitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
	SystemErr  string          `xml:"system-err,omitempty"`
}

// JUnitCase is a testcase: passed, failed (Failure), not run (Error) or
// skipped.
type JUnitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       float64         `xml:"time,attr"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Failure    *JUnitFailure   `xml:"failure,omitempty"`
	Error      *JUnitFailure   `xml:"error,omitempty"`
	Skipped    *struct{}       `xml:"skipped,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

// JUnitProperty is a name and a value, of a testsuite or a testcase.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitFailure is the failure or error of a testcase: a one-line message,
// a type and the full text.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// Skip marks a testcase skipped.
func (c *JUnitCase) Skip() { c.Skipped = &struct{}{} }

// AddCase appends c and counts it.
func (s *JUnitSuite) AddCase(c JUnitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
}

// AddSuite appends s and adds its counts and time to the totals.
func (j *JUnit) AddSuite(s JUnitSuite) {
	j.Suites = append(j.Suites, s)
	j.Tests += s.Tests
	j.Failures += s.Failures
	j.Errors += s.Errors
	j.Skipped += s.Skipped
	j.Time += s.Time
}

// Write writes the XML header and the document, indented, then a newline.
func (j *JUnit) Write(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(j.escaped()); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// escaped is a copy of j with every text's control characters shown as
// escapes (safetext.Escape): XML would turn most into U+FFFD, and a CI
// page or terminal that prints a message would act on the rest.
func (j *JUnit) escaped() *JUnit {
	e := safetext.Escape
	props := func(ps []JUnitProperty) []JUnitProperty {
		out := make([]JUnitProperty, len(ps))
		for i, p := range ps {
			out[i] = JUnitProperty{Name: e(p.Name), Value: e(p.Value)}
		}
		return out
	}
	failure := func(f *JUnitFailure) *JUnitFailure {
		if f == nil {
			return nil
		}
		return &JUnitFailure{Message: e(f.Message), Type: e(f.Type), Body: e(f.Body)}
	}
	c := *j
	c.Name = e(j.Name)
	c.Suites = make([]JUnitSuite, len(j.Suites))
	for i, s := range j.Suites {
		s.Name, s.SystemOut, s.SystemErr = e(s.Name), e(s.SystemOut), e(s.SystemErr)
		s.Properties = props(s.Properties)
		cases := make([]JUnitCase, len(s.Cases))
		for k, tc := range s.Cases {
			tc.Name, tc.Classname, tc.SystemOut = e(tc.Name), e(tc.Classname), e(tc.SystemOut)
			tc.Properties = props(tc.Properties)
			tc.Failure, tc.Error = failure(tc.Failure), failure(tc.Error)
			cases[k] = tc
		}
		s.Cases = cases
		c.Suites[i] = s
	}
	return &c
}
