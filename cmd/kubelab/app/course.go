package app

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"kubelab.dev/kubelab"
	"kubelab.dev/kubelab/internal/fileid"
)

// courseDir is where the embedded course is extracted, once per build:
// HOME/course/BUILD. It returns "" when it cannot be made (the command
// then works from the disk alone).
func (g *globals) courseDir() string {
	g.courseOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			return
		}
		id, err := fileid.BuildHex(self)
		if err != nil {
			return
		}
		dir := filepath.Join(g.home, "course", id[:16])
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
			g.course = dir
			return
		}
		if err := extractCourse(dir); err != nil {
			fmt.Fprintf(g.streams.Err, "warning: the course in the binary: %v\n", err)
			return
		}
		g.course = dir
	})
	return g.course
}

// extractCourse writes the embedded course to dir: into a temporary
// directory next to it, renamed into place when complete, so that two
// kubelab commands at once never see half of it.
func extractCourse(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".extract-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(kubelab.Course, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(tmp, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := kubelab.Course.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr == nil {
			return nil // another kubelab extracted it first
		}
		return err
	}
	return nil
}

// coursePath is path as given when it exists on disk; otherwise, for a
// relative path that names a file or directory of the shipped course
// (labs/..., features/..., exercises/...), that file in the extracted
// course; otherwise path as given, for the error to name.
func (g *globals) coursePath(path string) string {
	if _, err := os.Stat(path); err == nil || filepath.IsAbs(path) {
		return path
	}
	if _, err := fs.Stat(kubelab.Course, filepath.ToSlash(filepath.Clean(path))); err != nil {
		return path
	}
	if dir := g.courseDir(); dir != "" {
		return filepath.Join(dir, path)
	}
	return path
}

// coursePaths is coursePath of each path.
func (g *globals) coursePaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = g.coursePath(p)
	}
	return out
}
