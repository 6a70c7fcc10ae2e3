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
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sort"
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
	}
	return fmt.Errorf("usage: kubelab-http [break|fix readiness|liveness | get URL | work DURATION]")
}
