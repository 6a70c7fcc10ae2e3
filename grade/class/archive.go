package class

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxArchive is what one ConfigMap may carry: the apiserver refuses
// objects over 1 MiB, and the object's metadata needs some of it.
const maxArchive = 1000 << 10

// Pack is dir as a gzipped tar of its regular files (hidden files and
// directories skipped), paths relative to dir.
func Pack(dir string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = errors.Join(tw.Close(), zw.Close())
	}
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if buf.Len() > maxArchive {
		return nil, fmt.Errorf("pack %s: %d KiB packed, more than the %d KiB a ConfigMap can carry", dir, buf.Len()>>10, maxArchive>>10)
	}
	return buf.Bytes(), nil
}

// Unpack writes the files of a Pack archive under dir, refusing any path
// that would leave it.
func Unpack(data []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dir, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack into %s: %w", dir, err)
		}
		name := filepath.FromSlash(h.Name)
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(name) {
			return fmt.Errorf("unpack into %s: %q is not a regular file inside it", dir, h.Name)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(tr, maxArchive*8))
		if err := errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("unpack %s: %w", path, err)
		}
	}
}
