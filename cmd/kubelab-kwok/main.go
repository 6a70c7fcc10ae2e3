// Command kubelab-kwok runs one program of an embedded kubelab cluster
// (see package kwok): `kubelab-kwok component NAME ARGS...`, exactly as
// `kubelab component` does, from a binary that initialises the packages
// of that program alone (see package components).
package main

import (
	"os"

	"kubelab.dev/kubelab/internal/components"
	_ "kubelab.dev/kubelab/internal/components/kwok"
)

func main() { os.Exit(components.Command("kubelab-kwok")) }
