package grade

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// InitExercise scaffolds a new exercise in dir/name: an exercise.yaml
// that loads and grades as is (a Deployment and a Service), a reference
// solution/ that scores full marks and a wrong/one-replica/ sample that
// loses documented points. It refuses to overwrite anything.
func InitExercise(dir, name string) error {
	if len(name) > 63 || !dnsLabelRE.MatchString(name) {
		return fmt.Errorf("init exercise %q: want a DNS label (lower-case letters, digits and '-')", name)
	}
	root := filepath.Join(dir, name)
	if _, err := os.Stat(root); err == nil {
		return fmt.Errorf("init exercise %s: %w", root, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("init exercise: %w", err)
	}
	files := map[string]string{
		ExerciseFile:                  strings.ReplaceAll(scaffoldExercise, "NAME", name),
		"solution/web.yaml":           strings.ReplaceAll(scaffoldWeb, "REPLICAS", "3"),
		"wrong/one-replica/web.yaml":  strings.ReplaceAll(scaffoldWeb, "REPLICAS", "1"),
		"wrong/one-replica/README.md": "Only one replica: the Deployment exists, but the replica and endpoint checks fail.\n",
		"solution/README.md":          "The reference solution: scores full marks.\n",
		"wrong/README.md":             "Wrong answers, one directory each; exercise.yaml lists the score each gets.\n",
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("init exercise: %w", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("init exercise: %w", err)
		}
	}
	return nil
}

const scaffoldExercise = `# yaml-language-server: $schema=https://kubelab.dev/schema/exercise.v1alpha1.json
apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata:
  name: NAME
  title: Run three replicas of web behind a Service
  difficulty: easy
  topics: [workloads]
  duration: 10m
spec:
  statement: |
    Submit a directory of manifests that runs:

    - a Deployment named **web** with **3 replicas** of the image
      ` + "`kubelab/http:dev`" + `, pods labelled ` + "`app: web`" + `;
    - a Service named **web** that selects them (port 80 to 8080).

    Everything goes in the ` + "`default`" + ` namespace.
  notes: |
    Replace this scaffold with your task. Every check is a list of lab
    operations (wait, assert, kubectl with expectOutput, faults...).
    ` + "`kubelab grade . --submission solution`" + ` must score full marks and each
    wrong/ sample the score listed under samples.
  timeout: 3m
  cluster:
    workers: 2
  submission:
    kinds: [Deployment, Service]
    namespaces: [default]
  checks:
  - name: the Deployment exists
    points: 1
    hint: Name the Deployment web, in the default namespace.
    explanation: The checks find your objects by name.
    try:
    - wait: {expr: 'deployment("web").exists', timeout: 20s}
  - name: three ready replicas
    points: 2
    hint: Look at spec.replicas.
    explanation: Three replicas keep serving while one is replaced.
    try:
    - wait: {expr: 'deployment("web").ready == 3', timeout: 30s}
  - name: the Service has three ready endpoints
    points: 2
    hint: The Service's selector must match the pods' labels.
    explanation: A Service only sends traffic to the ready pods it selects.
    try:
    - wait: {expr: 'len(endpoints("web")) == 3', timeout: 30s}
  passingScore: 3
  samples:
  - path: solution
    score: 5
    description: the reference solution
  - path: wrong/one-replica
    score: 1
    fails: [three ready replicas, the Service has three ready endpoints]
    description: a single replica
`

const scaffoldWeb = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: REPLICAS
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: kubelab/http:dev
        ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`
