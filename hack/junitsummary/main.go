// Command junitsummary prints what a ginkgo JUnit report says of a
// conformance run: passed, failed and skipped specs, the same by SIG, and
// every failure and skip with its first line. hack/conformance.sh runs it.
//
//	go run ./hack/junitsummary [-took 12m] [-backend docker] junit.xml [rerun.xml ...]
//
// Given several reports, a spec counts once, with its result in the last
// report that ran it.
package main

import (
	"flag"
	"fmt"
	"os"

	"kubelab.dev/kubelab/internal/junit"
)

func main() {
	took := flag.String("took", "", "the run's wall time, printed as is")
	backend := flag.String("backend", "", "the backend the run used, printed as is")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: junitsummary [-took D] [-backend B] junit.xml [rerun.xml ...]")
		os.Exit(2)
	}
	s, err := junit.Read(flag.Args()...)
	if err == nil {
		if *backend != "" || *took != "" {
			fmt.Printf("conformance on %s, %s\n\n", *backend, *took)
		}
		err = s.Write(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "junitsummary:", err)
		os.Exit(1)
	}
}
