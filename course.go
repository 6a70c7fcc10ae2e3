// Package kubelab is the course that ships with kubelab: its labs, drills
// and exercises, embedded in the binary so that every listing and every
// shipped name (labs/02-etcd-leader-failover.yaml, exercises/pdb-drain)
// works outside a checkout. The command line extracts it once per build
// under the home and takes a file from there only when the path given
// does not exist on disk.
package kubelab

import "embed"

// Course holds labs/ (with docker/, embedded/ and manifests/), the drills
// of features/ (with docker/ and manifests/) and every exercise of
// exercises/.
//
//go:embed labs/*.yaml labs/docker labs/embedded labs/manifests labs/i18n
//go:embed features/*.feature features/docker features/manifests features/i18n
//go:embed exercises/*/*
var Course embed.FS
