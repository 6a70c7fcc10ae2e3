package load

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad checks that ParseLab never panics, and that it returns either a
// lab or a non-empty *Problems whose problems all have positions.
func FuzzLoad(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	manifests, _ := filepath.Glob("testdata/manifests/*.yaml")
	for _, s := range append(seeds, manifests...) {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lab, err := ParseLab("testdata/fuzz.yaml", data)
		if err == nil {
			if lab == nil {
				t.Fatal("no lab and no error")
			}
			return
		}
		var ps *Problems
		if lab != nil || !errors.As(err, &ps) || len(ps.List) == 0 {
			t.Fatalf("ParseLab = %v, %v; want nil and a non-empty *Problems", lab, err)
		}
		for _, p := range ps.List {
			if p.Line < 1 || p.Column < 1 || p.File == "" || p.Message == "" {
				t.Fatalf("problem without a position or message: %#v", p)
			}
		}
	})
}
