package docker

import (
	"slices"
	"testing"
)

func TestImageAliases(t *testing.T) {
	for in, want := range map[string][]string{
		"docker.io/library/nginx:latest": {"docker.io/library/nginx", "docker.io/library/nginx:latest", "nginx", "nginx:latest"},
		"nginx:1.14.2":                   {"docker.io/library/nginx:1.14.2", "nginx:1.14.2"},
		"example.com/team/app:v1":        {"example.com/team/app:v1"},
		"not a reference":                {"not a reference"},
	} {
		if got := imageAliases(in); !slices.Equal(got, want) {
			t.Errorf("imageAliases(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImportedImages(t *testing.T) {
	out := "unpacking docker.io/library/nginx:latest (sha256:2f72ce25aec7)...done\nunpacking example.com/a:1 (sha256:0123)...done\n"
	if got := importedImages(out); !slices.Equal(got, []string{"docker.io/library/nginx:latest", "example.com/a:1"}) {
		t.Errorf("importedImages = %q", got)
	}
}
