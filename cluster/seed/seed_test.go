package seed

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestPutGet(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	if _, ok, err := c.Get("k"); ok || err != nil {
		t.Fatalf("Get of an empty cache: ok %t, err %v", ok, err)
	}
	if err := c.Put("k", strings.NewReader("snapshot bytes")); err != nil {
		t.Fatal(err)
	}
	path, ok, err := c.Get("k")
	if !ok || err != nil {
		t.Fatalf("Get after Put: ok %t, err %v", ok, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "snapshot bytes" {
		t.Errorf("seed holds %q", b)
	}
	// A second Put of the same key keeps the first seed.
	if err := c.Put("k", strings.NewReader("other")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "snapshot bytes" {
		t.Errorf("seed rewritten: %q", b)
	}
}

func TestCorruptSeedIsDiscarded(t *testing.T) {
	for name, damage := range map[string]func(c Cache){
		"changed bytes":    func(c Cache) { os.WriteFile(c.Path("k"), []byte("snapshot bytez"), 0o600) },
		"truncated":        func(c Cache) { os.Truncate(c.Path("k"), 3) },
		"missing checksum": func(c Cache) { os.Remove(c.sumPath("k")) },
	} {
		t.Run(name, func(t *testing.T) {
			c := Cache{Dir: t.TempDir()}
			if err := c.Put("k", strings.NewReader("snapshot bytes")); err != nil {
				t.Fatal(err)
			}
			damage(c)
			if _, ok, err := c.Get("k"); ok || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Get of a damaged seed: ok %t, err %v; want ErrCorrupt", ok, err)
			}
			if _, err := os.Stat(c.dir("k")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("damaged seed left in place: %v", err)
			}
			// It can be written again.
			if err := c.Put("k", strings.NewReader("snapshot bytes")); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := c.Get("k"); !ok || err != nil {
				t.Errorf("Get after rewriting: ok %t, err %v", ok, err)
			}
		})
	}
}

// TestConcurrentPuts: boots that take the same seed at once leave one
// whole seed and no temporary file.
func TestConcurrentPuts(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	data := bytes.Repeat([]byte("x"), 1<<20)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Put("k", bytes.NewReader(data)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	path, ok, err := c.Get("k")
	if !ok || err != nil {
		t.Fatalf("Get: ok %t, err %v", ok, err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
		t.Errorf("seed of %d bytes, want %d", len(b), len(data))
	}
	left, _ := filepath.Glob(filepath.Join(c.dir("k"), "*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestPruneKeepsTheNewest(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if err := c.Put(k, strings.NewReader(k)); err != nil {
			t.Fatal(err)
		}
	}
	des, _ := os.ReadDir(c.Dir)
	var dirs []string
	for _, de := range des {
		if de.IsDir() {
			dirs = append(dirs, de.Name())
		}
	}
	if len(dirs) != keep {
		t.Errorf("cache keeps %v, want the %d newest", dirs, keep)
	}
	if _, ok, _ := c.Get("e"); !ok {
		t.Error("the newest seed was pruned")
	}
}

func TestKeyFollowsTheBuild(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("build one"), 0o700)
	os.WriteFile(b, []byte("build two"), 0o700)
	ka, err := Key(a, "backend=embedded")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := Key(b, "backend=embedded")
	kd, _ := Key(a, "backend=docker")
	if ka == kb || ka == kd {
		t.Errorf("keys do not tell builds or inputs apart: %s %s %s", ka, kb, kd)
	}
	if again, _ := Key(a, "backend=embedded"); again != ka {
		t.Errorf("key not stable: %s then %s", ka, again)
	}
}
