package embedded

import (
	"os"
	"testing"

	"kubelab.dev/kubelab/internal/testbin"
)

// TestMain runs the tests in the machine's cluster turn: see testbin.Main.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
