package class

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"kubelab.dev/kubelab/grade"
)

// A grading pod prints its grade in its log as lines
//
//	kubelab-grade K/N <base64 chunk>
//
// (a gob of the grade.Grade, gzipped): the log is the one channel every
// cluster gives back without RBAC for the pod, and chunks keep each line
// under the container runtime's 16 KiB log line. gob, not the JSON
// report, because the report writes durations for people (seconds) and
// the grade must come back exactly as it was.
const (
	resultPrefix = "kubelab-grade "
	chunkSize    = 3000
)

// errNoResult is a log without a complete grade.
var errNoResult = errors.New("no grade in the pod's log")

// WriteResult prints g as result lines.
func WriteResult(w io.Writer, g *grade.Grade) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := gob.NewEncoder(zw).Encode(g); err != nil {
		return fmt.Errorf("encode grade: %w", err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	s := base64.StdEncoding.EncodeToString(buf.Bytes())
	n := (len(s) + chunkSize - 1) / chunkSize
	var out strings.Builder
	for i := range n {
		fmt.Fprintf(&out, "%s%d/%d %s\n", resultPrefix, i+1, n, s[i*chunkSize:min(len(s), (i+1)*chunkSize)])
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// ReadResult finds the grade in a pod's log. Other lines are ignored.
func ReadResult(log io.Reader) (*grade.Grade, error) {
	var chunks []string
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), resultPrefix)
		if !ok {
			continue
		}
		pos, data, _ := strings.Cut(rest, " ")
		k, n, _ := strings.Cut(pos, "/")
		ki, err1 := strconv.Atoi(k)
		ni, err2 := strconv.Atoi(n)
		if err1 != nil || err2 != nil || ki < 1 || ki > ni {
			return nil, fmt.Errorf("malformed grade line %q", pos)
		}
		if ki == 1 {
			chunks = make([]string, ni)
		}
		if len(chunks) != ni {
			return nil, fmt.Errorf("grade line %s out of order", pos)
		}
		chunks[ki-1] = data
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(chunks) == 0 || chunks[len(chunks)-1] == "" {
		return nil, errNoResult
	}
	b, err := base64.StdEncoding.DecodeString(strings.Join(chunks, ""))
	if err != nil {
		return nil, fmt.Errorf("decode grade: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decode grade: %w", err)
	}
	var g grade.Grade
	if err := gob.NewDecoder(zr).Decode(&g); err != nil {
		return nil, fmt.Errorf("decode grade: %w", err)
	}
	return &g, nil
}
