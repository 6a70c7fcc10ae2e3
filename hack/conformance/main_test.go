package conformance

import (
	"os"
	"testing"

	"kubelab.dev/kubelab/internal/testbin"
)

// TestMain runs the tests in one half of the machine's cluster turn: its
// clusters mostly wait (see testbin.MainHalf).
func TestMain(m *testing.M) { os.Exit(testbin.MainHalf(m)) }
