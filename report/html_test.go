package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestHTMLFromJSONReport(t *testing.T) {
	b, err := os.ReadFile("testdata/labs.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := HTML(&out, b); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{`class="timeline"`, `class="seg leader"`, `class="marker"`, `class="step"`, "etcd-1", "kube-scheduler"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	for _, banned := range []string{"<script src", "<link", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
			t.Errorf("report refers to something outside itself: %s", banned)
		}
	}
}
