package seed

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The controller-manager makes one ServiceAccount in kube-system per
// controller that runs under its own identity
// (--use-service-account-credentials), one after the other, before any of
// its controllers starts: ~40 reads and writes, ~0.5 s of every boot
// before the node lifecycle controller can untaint a node. A seed is taken
// before the controller-manager runs, so it holds none of them; instead
// the boot that takes a seed records their names next to it, as the
// controller-manager made them, and later boots of that seed create them
// while the controller-manager starts (see cluster/lifecycle). The names
// are learned, not listed: they are the ones this build's
// controller-manager makes with its default controllers.

func (c Cache) accountsPath(key string) string {
	return filepath.Join(c.dir(key), "controller-accounts")
}

// ControllerAccounts are the names of the ServiceAccounts of kube-system
// the controller-manager made in the cluster that took the seed of key;
// nil when none were recorded. A name that is not valid is left out.
func (c Cache) ControllerAccounts(key string) []string {
	b, err := os.ReadFile(c.accountsPath(key))
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range strings.Fields(string(b)) {
		if len(validation.IsDNS1123Subdomain(n)) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// PutControllerAccounts records names as the controller-manager's
// ServiceAccounts of the seed of key, atomically; the seed must exist.
func (c Cache) PutControllerAccounts(key string, names []string) error {
	if _, ok, err := c.Get(key); !ok {
		return err
	}
	names = append([]string(nil), names...)
	sort.Strings(names)
	return writeAtomic(c.accountsPath(key), []byte(strings.Join(names, "\n")+"\n"))
}
