package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cmd/kubelab/app"
)

// TestShippedTranslations: every learner-facing text of the shipped labs,
// drills and exercises has its Chinese translation, and no catalog keeps
// a text its file no longer has. The output lists any that lack one.
func TestShippedTranslations(t *testing.T) {
	h := newFakeHome(t, webPods(0))
	out, code := h.run(t.Context(), "translate", "--lang", "zh", "../../../labs", "../../../features", "../../../exercises")
	if code != app.ExitPassed || !strings.Contains(out, " 0 texts without a 中文 translation, 0 stale entries") {
		t.Errorf("exit %d: missing or stale translations (kubelab translate --lang zh --write PATH adds their entries; then translate them):\n%s", code, out)
	}
}

// TestTranslateKeepsCatalogsInStep: translate lists the texts a new lab
// lacks and fails; --write makes the catalog for a translator; once
// filled, the lab passes; a changed English text is missing again and its
// old entry stale.
func TestTranslateKeepsCatalogsInStep(t *testing.T) {
	h := newFakeHome(t, webPods(0))
	dir := t.TempDir()
	lab := writeTestFile(t, filepath.Join(dir, "lab.yaml"), `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: tiny, title: A tiny lab}
spec:
  steps:
  - name: the web pods run
    try:
    - description: two of them
      wait: {expr: 'len(pods("app=web")) == 2'}
`)
	out, code := h.run(t.Context(), "translate", lab)
	if code != app.ExitFailed || !strings.Contains(out, `missing zh text for "the web pods run"`) || !strings.Contains(out, "3 texts without a 中文 translation") {
		t.Fatalf("exit %d, want the three texts listed:\n%s", code, out)
	}
	if out, code = h.run(t.Context(), "translate", "--write", lab); code != app.ExitPassed {
		t.Fatalf("--write: exit %d\n%s", code, out)
	}
	catalog := filepath.Join(dir, "i18n", "zh", "lab.yaml")
	data, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	filled := string(data)
	for _, zh := range []string{"一个小实验", "web Pod 在运行", "两个"} {
		filled = strings.Replace(filled, `zh: ""`, "zh: "+zh, 1)
	}
	writeTestFile(t, catalog, filled)
	if out, code = h.run(t.Context(), "translate", lab); code != app.ExitPassed {
		t.Fatalf("a filled catalog: exit %d\n%s", code, out)
	}
	src, _ := os.ReadFile(lab)
	writeTestFile(t, lab, strings.Replace(string(src), "two of them", "both of them", 1))
	out, code = h.run(t.Context(), "translate", lab)
	if code != app.ExitFailed || !strings.Contains(out, `missing zh text for "both of them"`) || !strings.Contains(out, `stale: "two of them"`) {
		t.Errorf("a changed text: exit %d, want it missing and the old one stale:\n%s", code, out)
	}
	if out, code = h.run(t.Context(), "validate", lab, "--lang", "fr"); code != app.ExitInvalid || !strings.Contains(out, "kubelab speaks en and zh") {
		t.Errorf("--lang fr: exit %d\n%s", code, out)
	}
}

// TestDrillInChineseOnAFake: with --lang zh a drill shows its question,
// steps, model answer and key points from its catalog and the headings in
// Chinese, and scores an answer written in Chinese.
func TestDrillInChineseOnAFake(t *testing.T) {
	h := newFakeHome(t, webPods(2))
	dir := t.TempDir()
	feature := writeTestFile(t, filepath.Join(dir, "scheduler-down.feature"), `Feature: The scheduler goes down
  Question: What keeps running when the scheduler dies?

  Model answer:
    Bound pods keep running: the kubelet runs them.

  Key points:
    - Bound pods keep running, the kubelet runs them.
      terms: keep running, 继续运行 | kubelet
    - New pods stay Pending.
      terms: pending, 挂起
    - A standby takes over the lease.
      terms: lease, 租约

  Scenario: Kill the scheduler
    Given a lab cluster with 2 schedulers
    When I kill "kube-scheduler-1"
    Then 2 pods labelled "app=web" are Running
`)
	writeTestFile(t, filepath.Join(dir, "i18n", "zh", "scheduler-down.yaml"), `texts:
- en: 'The scheduler goes down'
  zh: '调度器宕机'
- en: 'What keeps running when the scheduler dies?'
  zh: '调度器挂掉时什么还在运行？'
- en: 'Bound pods keep running: the kubelet runs them.'
  zh: '已绑定的 Pod 继续运行：kubelet 在运行它们。'
- en: 'Bound pods keep running, the kubelet runs them.'
  zh: '已绑定的 Pod 继续运行，由 kubelet 运行。'
- en: 'New pods stay Pending.'
  zh: '新 Pod 保持 Pending。'
- en: 'A standby takes over the lease.'
  zh: '备用实例接管租约。'
- en: 'Kill the scheduler'
  zh: '杀掉调度器'
- en: 'a lab cluster with 2 schedulers'
  zh: '一个有 2 个调度器的实验集群'
- en: 'I kill "kube-scheduler-1"'
  zh: '我杀掉 "kube-scheduler-1"'
- en: '2 pods labelled "app=web" are Running'
  zh: '有 2 个带标签 "app=web" 的 Pod 处于 Running'
`)
	answer := writeTestFile(t, filepath.Join(dir, "answer.txt"), "已经绑定的 Pod 会继续运行，kubelet 负责它们。\n")
	page := filepath.Join(dir, "drill.html")
	out, code := h.run(t.Context(), "drill", feature, "--lang", "zh", "--answer-file", answer, "--html", page)
	if code != app.ExitPassed {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"━━ 演练 1/1：调度器宕机",
		"问题：\n  调度器挂掉时什么还在运行？",
		"场景：杀掉调度器",
		"▶ 我杀掉 \"kube-scheduler-1\"",
		"参考答案：\n  已绑定的 Pod 继续运行：kubelet 在运行它们。",
		"要点：你的回答答到了 1 个（共 3 个）",
		"✔ 已绑定的 Pod 继续运行，由 kubelet 运行。",
		"✘ 备用实例接管租约。",
		"未答到；需要提到：lease",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, english := range []string{"Question:", "Model answer", "Key points", "What keeps running", "Kill the scheduler"} {
		if strings.Contains(out, english) {
			t.Errorf("the Chinese drill says %q:\n%s", english, out)
		}
	}
	// The HTML report follows the same language.
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<html lang="zh">`, "<h3>问题</h3>", "调度器挂掉时什么还在运行？", "<h3>要点</h3>", "<h3>参考答案</h3>", "<h3>时间线</h3>", "杀掉调度器"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	for _, english := range []string{"<h3>Question</h3>", "<h3>Timeline</h3>", "Model answer", "What keeps running"} {
		if strings.Contains(string(html), english) {
			t.Errorf("the Chinese HTML report says %q", english)
		}
	}
}
