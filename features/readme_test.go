package features

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestREADMEListsEveryDrill: the drill table of README.md names every
// feature file, and no other.
func TestREADMEListsEveryDrill(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+\\.feature)` \\|").FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, m[1])
	}
	files, _ := filepath.Glob("*.feature")
	more, _ := filepath.Glob("docker/*.feature")
	files = append(files, more...)
	slices.Sort(files)
	slices.Sort(listed)
	if !slices.Equal(files, listed) {
		t.Errorf("README.md lists %d drills %q; the feature files are %d: %q", len(listed), listed, len(files), files)
	}
}
