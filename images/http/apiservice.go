package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"log"
	"math/big"
	"net/http"
	"os"
	"strings"
	"time"
)

// serveAPIService runs the image as the smallest aggregated API server
// there is, for labs on the aggregation layer: group/version gv (e.g.
// "lab.kubelab.dev/v1") with one namespaced, read-only resource,
// "greetings". The kube-apiserver proxies /apis/<gv>/... to it after
// authenticating the caller, and says who the caller is in the front
// proxy's headers (X-Remote-User, X-Remote-Group); every greeting echoes
// them, so a lab can see that the extension server never saw the
// caller's credentials. It serves TLS with a self-signed certificate (an
// APIService with insecureSkipTLSVerify, or a caBundle, trusts it).
func serveAPIService(gv, port string) {
	group, version, ok := strings.Cut(gv, "/")
	if !ok || group == "" || version == "" {
		log.Fatalf("APISERVICE=%q: want group/version", gv)
	}
	host, _ := os.Hostname()
	base := "/apis/" + gv
	mux := http.NewServeMux()
	for _, p := range []string{"/healthz", "/readyz", "/livez"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	}
	mux.HandleFunc("/apis", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{apiGroup(group, gv, version)}})
	})
	mux.HandleFunc("/apis/"+group, func(w http.ResponseWriter, r *http.Request) {
		g := apiGroup(group, gv, version)
		g["kind"], g["apiVersion"] = "APIGroup", "v1"
		writeJSON(w, g)
	})
	mux.HandleFunc(base, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": []any{
			map[string]any{"name": "greetings", "singularName": "greeting", "namespaced": true, "kind": "Greeting", "verbs": []string{"get", "list"}},
		}})
	})
	greetings := func(w http.ResponseWriter, r *http.Request, ns string) {
		item := map[string]any{
			"apiVersion": gv, "kind": "Greeting",
			"metadata": map[string]any{"name": "hello", "namespace": ns, "uid": "00000000-0000-0000-0000-000000000001", "creationTimestamp": started},
			"spec": map[string]any{
				"servedBy": host,
				// What the aggregation layer said of the caller.
				"user":   r.Header.Get("X-Remote-User"),
				"groups": r.Header.Values("X-Remote-Group"),
				// Whether the caller's own credentials reached this server.
				"sawAuthorization": r.Header.Get("Authorization") != "",
				"clientCertificate": func() string {
					if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
						return r.TLS.PeerCertificates[0].Subject.CommonName
					}
					return ""
				}(),
			},
		}
		if r.PathValue("name") != "" {
			if r.PathValue("name") != "hello" {
				w.WriteHeader(http.StatusNotFound)
				writeJSON(w, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
					"message": fmt.Sprintf("greetings %q not found", r.PathValue("name"))})
				return
			}
			writeJSON(w, item)
			return
		}
		writeJSON(w, map[string]any{"apiVersion": gv, "kind": "GreetingList", "metadata": map[string]any{}, "items": []any{item}})
	}
	mux.HandleFunc("GET "+base+"/greetings", func(w http.ResponseWriter, r *http.Request) { greetings(w, r, "default") })
	mux.HandleFunc("GET "+base+"/namespaces/{ns}/greetings", func(w http.ResponseWriter, r *http.Request) { greetings(w, r, r.PathValue("ns")) })
	mux.HandleFunc("GET "+base+"/namespaces/{ns}/greetings/{name}", func(w http.ResponseWriter, r *http.Request) { greetings(w, r, r.PathValue("ns")) })
	cert, err := selfSigned(host)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Addr:    ":" + port,
		Handler: logged(mux),
		// Ask for the front proxy's client certificate, to show it.
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert},
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Printf("serving %s over TLS on :%s", gv, port)
	log.Fatal(srv.ListenAndServeTLS("", ""))
}

var started = time.Now().UTC().Format(time.RFC3339)

func apiGroup(group, gv, version string) map[string]any {
	v := map[string]any{"groupVersion": gv, "version": version}
	return map[string]any{"name": group, "versions": []any{v}, "preferredVersion": v}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s user=%q", r.Method, r.URL.Path, r.Header.Get("X-Remote-User"))
		h.ServeHTTP(w, r)
	})
}

// selfSigned makes a fresh key and a certificate for host, valid a day.
func selfSigned(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host, "localhost"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
