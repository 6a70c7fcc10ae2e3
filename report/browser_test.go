package report

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chromium finds a headless-capable Chromium (Debian's package).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (apt-get install chromium): the browser test of the HTML report is skipped")
	return ""
}

// browse loads a file in headless Chromium and returns the DOM it built,
// or takes a screenshot.
func browse(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(t.Context(), bin, append(append(base, args...), "file://"+page)...)
	// Chromium keeps its profile's singleton socket in a directory of
	// TMPDIR that it does not always remove: one of the test's.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.Bytes()
}

// TestHTMLReportInChromium renders the report of real lab runs (the JSON
// report kubelab run wrote, in testdata/), loads it in Chromium, and
// checks that the page the browser built has every step, swimlane, fault
// marker and trace arrow the JSON report has, and that it draws.
func TestHTMLReportInChromium(t *testing.T) {
	bin := chromium(t)
	js, err := os.ReadFile("testdata/labs.json")
	if err != nil {
		t.Fatal(err)
	}
	labs, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := HTML(&page, js); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(browse(t, bin, path, "--dump-dom"))
	count := func(s, re string) int { return len(regexp.MustCompile(re).FindAllStringIndex(s, -1)) }

	sections := regexp.MustCompile(`(?s)<section class="lab".*?</section>`).FindAllString(dom, -1)
	if len(sections) != len(labs) {
		t.Fatalf("browser built %d lab sections, the JSON report has %d labs", len(sections), len(labs))
	}
	faults, hops, tables := 0, 0, 0
	for i, l := range labs {
		sec := sections[i]
		if got := count(sec, `<tr class="step"`); got != len(l.Steps) {
			t.Errorf("%s: %d step rows, JSON has %d steps", l.Lab, got, len(l.Steps))
		}
		pic := Timeline(l)
		tl := regexp.MustCompile(`(?s)<svg class="timeline".*?</svg>`).FindString(sec)
		if got := count(tl, `<rect class="lane `); got != len(pic.Lanes) || !strings.Contains(tl, `data-lanes="`+strconv.Itoa(len(pic.Lanes))+`"`) {
			t.Errorf("%s: %d lanes drawn, want %d", l.Lab, got, len(pic.Lanes))
		}
		want := 0
		for _, e := range l.Timeline {
			if e.Kind == "fault" {
				faults++
				want++
			}
		}
		if got := count(tl, `<line class="marker"`); got != len(pic.Markers) || (want > 0) != (got > 0) {
			t.Errorf("%s: %d fault markers drawn, want %d (for %d faults)", l.Lab, got, len(pic.Markers), want)
		}
		n := 0
		for _, tr := range l.Traces {
			n += len(tr.Hops)
		}
		hops += n
		if got := count(sec, `<line class="hop `); got != n {
			t.Errorf("%s: %d trace arrows drawn, JSON has %d hops", l.Lab, got, n)
		}
		ts := regexp.MustCompile(`(?s)<table class="scheduling".*?</table>`).FindAllString(sec, -1)
		if len(ts) != len(l.Scheduling) {
			t.Errorf("%s: %d score tables, JSON has %d scheduling decisions", l.Lab, len(ts), len(l.Scheduling))
		}
		for j := range min(len(ts), len(l.Scheduling)) {
			d := l.Scheduling[j]
			nodes := map[string]bool{}
			for n := range d.Filtered {
				nodes[n] = true
			}
			for _, n := range d.Feasible {
				nodes[n] = true
			}
			if got, want := count(ts[j], `<tr[ >]`)-1, len(nodes); got != want {
				t.Errorf("%s: %s: %d node rows, JSON has %d nodes", l.Lab, d.Pod, got, want)
			}
			if d.Selected != "" && count(ts[j], `<tr class="selected"><td>`+regexp.QuoteMeta(d.Selected)) != 1 {
				t.Errorf("%s: %s: the selected node %s is not marked", l.Lab, d.Pod, d.Selected)
			}
		}
		tables += len(ts)
	}
	if faults == 0 || hops == 0 || tables == 0 {
		t.Fatalf("testdata/labs.json should hold faults, a trace and a scheduling decision (faults %d, hops %d, tables %d): regenerate it with hack/report-testdata.sh", faults, hops, tables)
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	browse(t, bin, path, "--window-size=1200,1600", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1600 {
		t.Errorf("screenshot is %v, want 1200x1600", b)
	}
	colors := map[[3]uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 7 {
		for x := 0; x < img.Bounds().Dx(); x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if len(colors) < 20 {
		t.Errorf("the screenshot has %d colours: the page did not draw", len(colors))
	}
	if out := os.Getenv("KUBELAB_REPORT_SCREENSHOT"); out != "" {
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
