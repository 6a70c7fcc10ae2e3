package i18n

import (
	"bytes"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// TabWriter aligns tab-separated columns by their width on a terminal,
// where a Chinese character takes two columns: text/tabwriter counts
// runes, so a column after Chinese text would not line up. Write cells
// separated by tabs and rows ending in a newline, then Flush; every
// column is padded to its widest cell plus two spaces, the last is not.
type TabWriter struct {
	out io.Writer
	buf bytes.Buffer
}

// NewTabWriter writes aligned columns to out.
func NewTabWriter(out io.Writer) *TabWriter { return &TabWriter{out: out} }

// Write buffers rows until Flush.
func (t *TabWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the buffered rows, aligned.
func (t *TabWriter) Flush() error {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	var rows [][]string
	var widths []int
	for _, l := range strings.Split(text, "\n") {
		cells := strings.Split(l, "\t")
		for i, c := range cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			if i < len(cells)-1 {
				widths[i] = max(widths[i], runewidth.StringWidth(c))
			}
		}
		rows = append(rows, cells)
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(runewidth.FillRight(c, widths[i]+2))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(t.out, b.String())
	return err
}
