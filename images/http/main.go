// Command http is the workload image of kubelab's labs: a small HTTP
// server whose health can be broken on request, so labs can watch probes,
// endpoints and restarts react.
//
//	/          hostname and pod IP
//	/healthz   liveness: 200, or 500 after POST /break/liveness
//	/readyz    readiness: 200, or 503 after POST /break/readiness (POST /fix/readiness heals)
//	/crash     exits with status 1
//	/env       the environment
//
// START_DELAY (a Go duration) delays listening, to model a slow start.
// PORT sets the port (default 8080, 8443 with APISERVICE).
//
// APISERVICE=group/version makes it an aggregated API server instead, over
// TLS, serving one read-only resource, greetings (see apiservice.go).
//
// The image has no shell, so the binary is also its own client, for
// `kubectl exec`:
//
//	kubelab-http break readiness|liveness   (POST to the local server)
//	kubelab-http fix readiness
//	kubelab-http get URL                     (print the body)
//
// and runs batch workloads as a Pod's args:
//
//	kubelab-http work DURATION               (sleep, then succeed)
//	kubelab-http eat SIZE [STEP]             (hold SIZE of memory, e.g. 256Mi,
//	                                          taken STEP at a time, then sleep)
//	kubelab-http burn                        (keep one CPU busy, for ever)
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		if err := client(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if d, err := time.ParseDuration(os.Getenv("START_DELAY")); err == nil {
		time.Sleep(d)
	}
	if gv := os.Getenv("APISERVICE"); gv != "" {
		port := os.Getenv("PORT")
		if port == "" {
			port = "8443"
		}
		serveAPIService(gv, port)
		return
	}
	var liveBroken, notReady atomic.Bool
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s\n", host)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if liveBroken.Load() {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if notReady.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/break/liveness", func(w http.ResponseWriter, r *http.Request) { liveBroken.Store(true) })
	mux.HandleFunc("/break/readiness", func(w http.ResponseWriter, r *http.Request) { notReady.Store(true) })
	mux.HandleFunc("/fix/readiness", func(w http.ResponseWriter, r *http.Request) { notReady.Store(false) })
	mux.HandleFunc("/crash", func(w http.ResponseWriter, r *http.Request) {
		log.Print("crash requested")
		os.Exit(1)
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		env := os.Environ()
		sort.Strings(env)
		for _, e := range env {
			fmt.Fprintln(w, e)
		}
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	log.Printf("listening on :%s", port)
	log.Fatal(http.ListenAndServe(":"+port, mux))
}

func client(args []string) error {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	c := &http.Client{Timeout: 3 * time.Second}
	switch {
	case len(args) == 2 && (args[0] == "break" || args[0] == "fix"):
		resp, err := c.Post("http://127.0.0.1:"+port+"/"+args[0]+"/"+args[1], "text/plain", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Println(args[0], args[1])
		return nil
	case len(args) == 2 && args[0] == "work":
		// A batch workload (a Job's Pod): work for a while, then succeed.
		d, err := time.ParseDuration(args[1])
		if err != nil {
			return err
		}
		time.Sleep(d)
		fmt.Println("done after", d)
		return nil
	case len(args) == 2 && args[0] == "get":
		resp, err := c.Get(args[1])
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(os.Stdout, resp.Body)
		return err
	case (len(args) == 2 || len(args) == 3) && args[0] == "eat":
		return eat(args[1:])
	case len(args) == 1 && args[0] == "burn":
		fmt.Println("burning one CPU")
		for {
		}
	}
	return fmt.Errorf("usage: kubelab-http [break|fix readiness|liveness | get URL | work DURATION | eat SIZE [STEP] | burn]")
}

// eat holds size bytes of memory, every page written so that the kernel
// charges it to the container's cgroup, taken a step at a time (16Mi by
// default, 200 ms apart) and printed as it goes; then it sleeps. Over a
// memory limit the kernel's OOM killer ends it (OOMKilled).
func eat(args []string) error {
	size, err := parseSize(args[0])
	if err != nil {
		return err
	}
	step := int64(16 << 20)
	if len(args) == 2 {
		if step, err = parseSize(args[1]); err != nil {
			return err
		}
	}
	var held [][]byte
	for total := int64(0); total < size; {
		n := min(step, size-total)
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
		total += n
		fmt.Printf("holding %dMi\n", total>>20)
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("holding all %s\n", args[0])
	for {
		time.Sleep(time.Hour)
		runtime.KeepAlive(held)
	}
}

// parseSize reads a size as Kubernetes writes memory: 64Mi, 1Gi, 512Ki,
// or bytes.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = n, m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, Ki, Mi or Gi", s)
	}
	return n * mult, nil
}
