package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/ui"
)

// homeUI serves the course's home page: every topic with its labs,
// drills and exercises, each started as a kubelab ui of its own (a child
// process, on a cluster of its own), and the home's clusters, each
// opened the same way. Ctrl-C stops the views it started, which remove
// the clusters they booted.
func homeUI(ctx context.Context, g *globals, f *uiFlags) error {
	cs, items, err := courseIndex(g)
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	logs, err := os.MkdirTemp("", "kubelab-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logs)
	v := &views{bin: bin, logs: logs, used: map[string]bool{}}
	defer v.stop()
	var topics []ui.HomeTopic
	for _, c := range cs {
		t := ui.HomeTopic{ID: c.ID, Title: c.Title}
		for _, k := range []struct {
			kind  string
			paths []string
		}{{"lab", c.Labs}, {"drill", c.Drills}, {"exercise", c.Exercises}} {
			for _, p := range k.paths {
				it := items[p]
				t.Items = append(t.Items, ui.HomeItem{Kind: k.kind, Path: p, Title: it.title, Docker: it.docker})
			}
		}
		topics = append(topics, t)
	}
	common := []string{"--no-browser"}
	if g.home != "" {
		common = append(common, "--home", g.home)
	}
	if g.langFlag != "" {
		common = append(common, "--lang", g.langFlag)
	}
	start := func(ctx context.Context, path string) (string, error) {
		args := append([]string{"ui", path}, common...)
		if items[path].docker || f.backend == backendDocker {
			args = append(args, "--backend", backendDocker)
		}
		if !strings.HasSuffix(path, ".feature") {
			args = append(args, "--name", v.name(g, path))
		}
		return v.start(ctx, args)
	}
	open := func(ctx context.Context, name string) (string, error) {
		return v.start(ctx, append([]string{"ui", "--name", name}, common...))
	}
	h, err := ui.NewHome(ui.HomeOptions{Words: g.words, Topics: topics, Start: start, Open: open,
		Clusters: func(ctx context.Context) ([]ui.HomeCluster, error) { return homeClusters(ctx, g) }})
	if err != nil {
		return err
	}
	return serveView(ctx, g, f, h, "the course",
		"Start a lab, a drill or an exercise from the page; each opens in a tab of its own. Ctrl-C stops ui and every view it started (and the clusters they booted).")
}

// homeClusters is every cluster of the home with how many of its
// components run and the exercise it runs, if any.
func homeClusters(ctx context.Context, g *globals) ([]ui.HomeCluster, error) {
	list, err := listClusters(g)
	if err != nil {
		return nil, err
	}
	out := make([]ui.HomeCluster, 0, len(list))
	for _, c := range list {
		hc := ui.HomeCluster{Name: c.Name, Backend: c.Backend, Status: "unknown"}
		b, err := backends.Open(ctx, c.Name, g.backendOpts("", false, nil))
		if err == nil {
			if comps, err := b.Components(ctx); err == nil {
				up := 0
				for _, comp := range comps {
					if comp.State == cluster.StateRunning {
						up++
					}
				}
				hc.Status = g.words.Sprintf("%d of %d components running", up, len(comps))
			}
			var le liveExercise
			if data, err := os.ReadFile(filepath.Join(stateDir(g, b), exerciseStateFile)); err == nil && json.Unmarshal(data, &le) == nil {
				hc.Exercise = le.Name
			}
		}
		out = append(out, hc)
	}
	return out, nil
}

// views are the kubelab ui processes the home page started.
type views struct {
	bin, logs string

	mu    sync.Mutex
	procs []*exec.Cmd
	used  map[string]bool // cluster names given out
}

var notLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// name is a cluster name for a view of path that no cluster of the home
// and no earlier view has.
func (v *views) name(g *globals, path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if base == "exercise" {
		base = filepath.Base(filepath.Dir(path))
	}
	base = strings.Trim(notLabel.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	taken := map[string]bool{}
	if list, err := listClusters(g); err == nil {
		for _, c := range list {
			taken[c.Name] = true
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	name := base
	for i := 2; taken[name] || v.used[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	v.used[name] = true
	return name
}

// start runs kubelab with args (a ui command) and returns the URL it
// prints once its view serves; a view that ends before says why (the
// end of its log).
func (v *views) start(ctx context.Context, args []string) (string, error) {
	log, err := os.CreateTemp(v.logs, "view-*.log")
	if err != nil {
		return "", err
	}
	defer log.Close()
	cmd := exec.Command(v.bin, args...)
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	v.mu.Lock()
	v.procs = append(v.procs, cmd)
	v.mu.Unlock()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "http://"); i >= 0 {
				select {
				case urls <- sc.Text()[i:]:
				default:
				}
			}
		}
		close(urls)
	}()
	select {
	case url, ok := <-urls:
		if ok {
			return url, nil
		}
		_ = cmd.Wait()
		tail, _ := os.ReadFile(log.Name())
		return "", fmt.Errorf("kubelab %s ended: %s", strings.Join(args, " "), lastLines(string(tail), 5))
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGINT)
		return "", ctx.Err()
	}
}

// stop ends every view as Ctrl-C would and waits for each (at most two
// minutes: a view removes the cluster it booted).
func (v *views) stop() {
	v.mu.Lock()
	procs := v.procs
	v.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range procs {
		wg.Go(func() {
			_ = c.Process.Signal(syscall.SIGINT)
			done := make(chan struct{})
			go func() { _ = c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				_ = c.Process.Kill()
				<-done
			}
		})
	}
	wg.Wait()
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
