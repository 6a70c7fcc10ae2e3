// Package junit holds what the JUnit XML reports of labs (package engine)
// and of grades (package grade) have in common: properties, failures and
// the encoding of a document. Each report defines its own suites and
// testcases; this package does not know what they contain.
package junit

import (
	"encoding/xml"
	"io"
)

// Property is a name and a value, of a testsuite or a testcase.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Failure is the failure or error of a testcase: a one-line message, a
// type and the full text.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// Encode writes the XML header and doc, indented, then a newline.
func Encode(w io.Writer, doc any) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
