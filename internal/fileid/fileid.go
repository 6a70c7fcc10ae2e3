// Package fileid names the content of files: the SHA-256 of any file, and
// the build of a Go executable read from its build ID note (a few hundred
// bytes, where hashing kubelab's 170 MB binary took ~0.5 s on every boot).
package fileid

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// SHA256 is the hex SHA-256 of the file at path.
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Build identifies the build of the executable at path: the Go build ID
// the linker notes in every executable (its last part is a hash of the
// output, so another build has another ID), read from its ELF note
// without reading the file; "sha256:" and the file's hash where there is
// none (not ELF, or linked with an empty -buildid).
func Build(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			if b, err := s.Data(); err == nil && len(b) > 16 {
				// namesz, descsz, type (4 bytes each), "Go\x00\x00", desc.
				if desc := bytes.TrimRight(b[16:], "\x00"); len(desc) > 0 {
					return string(desc), nil
				}
			}
		}
	}
	sum, err := SHA256(path)
	if err != nil {
		return "", err
	}
	return "sha256:" + sum, nil
}

// BuildHex is Build as 64 hex digits (the SHA-256 of the build ID), fit
// for an image tag or a label.
func BuildHex(path string) (string, error) {
	id, err := Build(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:]), nil
}
