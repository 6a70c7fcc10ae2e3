package enginetest

import (
	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
)

// WebExercise is an exercise for tests on a Fake: its checks read the
// pods labelled app=web (one earns 1 point, two earn 2 more), and its
// statement has Markdown and a script tag a page must not run.
const WebExercise = `apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: web, title: Two web pods}
spec:
  statement: |
    # Run the web pods
    Run **two** web pods. <script>alert("x")</script>
  submission: {kinds: [Deployment]}
  checks:
  - name: a web pod runs
    points: 1
    hint: create the Deployment
    explanation: one pod
    try:
    - assert: {expr: 'len(pods("app=web")) >= 1'}
  - name: two web pods run
    points: 2
    hint: scale it to two
    explanation: two replicas
    try:
    - assert: {expr: 'len(pods("app=web")) == 2'}
`

// WebPods is a cluster with one Ready worker and n Running, Ready pods
// labelled app=web (web-a, web-b...).
func WebPods(n int) assertionstest.State {
	s := assertionstest.State{Nodes: []assertions.Node{{Name: "worker-1", Ready: true}}}
	for i := range n {
		s.Pods = append(s.Pods, assertions.Pod{Name: "web-" + string(rune('a'+i)), Labels: map[string]string{"app": "web"}, Phase: "Running", Ready: true})
	}
	return s
}
