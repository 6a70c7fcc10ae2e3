package seed

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestControllerAccounts(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	if err := c.PutControllerAccounts("k", []string{"node-controller"}); err != nil {
		t.Fatal(err)
	}
	if got := c.ControllerAccounts("k"); got != nil {
		t.Errorf("accounts recorded without a seed: %q", got)
	}
	if err := c.Put("k", strings.NewReader("snapshot bytes")); err != nil {
		t.Fatal(err)
	}
	if got := c.ControllerAccounts("k"); got != nil {
		t.Errorf("a seed without recorded accounts has %q", got)
	}
	if err := c.PutControllerAccounts("k", []string{"node-controller", "deployment-controller"}); err != nil {
		t.Fatal(err)
	}
	if got, want := c.ControllerAccounts("k"), []string{"deployment-controller", "node-controller"}; !slices.Equal(got, want) {
		t.Errorf("accounts %q, want %q", got, want)
	}
	// A damaged record gives only the names that are valid.
	if err := os.WriteFile(c.accountsPath("k"), []byte("node-controller\nNot_A_Name\n../x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := c.ControllerAccounts("k"), []string{"node-controller"}; !slices.Equal(got, want) {
		t.Errorf("accounts from a damaged record %q, want %q", got, want)
	}
	// Discarding the seed discards them with it.
	c.Discard("k")
	if got := c.ControllerAccounts("k"); got != nil {
		t.Errorf("accounts of a discarded seed: %q", got)
	}
}
