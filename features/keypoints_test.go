package features

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kubelab.dev/kubelab/internal/i18n"
)

func TestScoreMatchesTermsInBothLanguages(t *testing.T) {
	points := []KeyPoint{
		{Point: "majority", Terms: [][]string{{"majority", "quorum", "多数派"}, {"commit", "提交"}}},
		{Point: "term", Terms: [][]string{{"higher term", "任期"}}},
		{Point: "stem", Terms: [][]string{{"reconcil"}}},
	}
	for _, tc := range []struct {
		answer string
		made   []bool
		by     string
	}{
		{"Writes are committed by a quorum. The new leader has a higher term!", []bool{true, true, false}, "Writes are committed by a quorum"},
		{"写入需要多数派确认后才提交。新的领导者任期更高。", []bool{true, true, false}, "写入需要多数派确认后才提交"},
		// The quote is the sentence that makes the most of the point,
		// not the first that names one of its terms.
		{"多数派选出领导者。写入由多数派确认后才提交。", []bool{true, false, false}, "写入由多数派确认后才提交"},
		{"A quorum elects the leader. Writes commit on a majority.", []bool{true, false, false}, "Writes commit on a majority"},
		{"Controllers reconciled it; a MAJORITY was needed to commit.", []bool{true, false, true}, "a MAJORITY was needed to commit"},
		{"determination of terms", []bool{false, false, false}, ""},
		{"", []bool{false, false, false}, ""},
	} {
		got := Score(points, tc.answer)
		var made []bool
		for _, s := range got {
			made = append(made, s.Made)
		}
		if !slices.Equal(made, tc.made) || got[0].By != tc.by {
			t.Errorf("Score(%q): made %v, by %q; want %v, %q", tc.answer, made, got[0].By, tc.made, tc.by)
		}
		if !got[0].Made && !slices.Contains(got[0].Missing, "majority / 多数派") && !slices.Contains(got[0].Missing, "commit / 提交") {
			t.Errorf("Score(%q): missing %v, want the first term of the missing group with its first Chinese one", tc.answer, got[0].Missing)
		}
	}
}

// TestTermIn: a Chinese term matches with or without the particle 的 on
// either side, as learners write both; every word of an English term
// takes the common endings, so a learner's grammar does not cost a point,
// and short words but the last match only as they are.
func TestTermIn(t *testing.T) {
	for _, tc := range []struct {
		term, answer string
		want         bool
	}{
		{"新的领导者", "选出新领导者", true},
		{"新的领导者", "选出新的领导者", true},
		{"新领导者", "选出新的领导者", true},
		{"新 leader", "会有新的 Leader", true},
		{"election timeout", "follower在election timeout内收不到heartbeat", true},
		{"heartbeat", "收不到heartbeat就发起选举", true},
		{"term", "term加一", true},
		{"选举超时", "在选举超时内", true},
		{"新的领导者", "旧领导者", false},
		{"keep running", "NoSchedule keeps running pods", true},
		{"cascade", "you get cascading restarts", true},
		{"reconcil", "the controllers reconciled it", true},
		{"leader", "both leaders", true},
		{"not lost", "the notes lost their order", false},
		{"no state", "nodes state", false},
		{"elect", "electricity", false},
		{"use", "us", false},
	} {
		if got := termIn(normalizeAnswer(tc.answer), tc.term); got != tc.want {
			t.Errorf("termIn(%q, %q) = %v, want %v", tc.answer, tc.term, got, tc.want)
		}
	}
}

func TestKeyPointsParseErrorsHaveLines(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"\n  terms: x\n", "line 11: a key point starts with"},
		{"\n  - a\n  - b\n    terms: b\n  - c\n    terms: c\n", `line 11: key point "a" has no terms`},
		{"\n  - a\n    terms: a\n  - b\n    terms: b\n", "line 10: 2 key points, want 3 to 8"},
		{"\n  - a\n    terms: a |\n  - b\n    terms: b\n  - c\n    terms: c\n", "line 12: an empty group of terms"},
		{"\n  - a\n    terms: a\n    evidence: raft.term >\n  - b\n    terms: b\n  - c\n    terms: c\n", "line 13: evidence"},
	} {
		_, err := parseKeyPoints(tc.text, 10)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseKeyPoints(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestShippedDrillsKeyPoints: every shipped drill has key points, its
// model answer makes every one of them, and a poorer answer kept in
// testdata/answers (its first line says how many it makes) makes exactly
// that many: the matching neither misses what the model says nor gives
// points away.
func TestShippedDrillsKeyPoints(t *testing.T) {
	drills, err := Load(".", "docker")
	if err != nil {
		t.Fatal(err)
	}
	if len(drills) < 20 {
		t.Fatalf("%d drills", len(drills))
	}
	for _, d := range drills {
		name := strings.TrimSuffix(filepath.ToSlash(d.Path), ".feature")
		if len(d.KeyPoints) < MinKeyPoints {
			t.Errorf("%s: %d key points, want %d to %d", d.Path, len(d.KeyPoints), MinKeyPoints, MaxKeyPoints)
			continue
		}
		for _, s := range Score(d.KeyPoints, d.ModelAnswer) {
			if !s.Made {
				t.Errorf("%s: the model answer misses %q (no term of: %v)", d.Path, s.Point, s.Missing)
			}
		}
		file := filepath.Join("testdata", "answers", strings.ReplaceAll(name, "/", "-")+".txt")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: a poorer answer: %v", d.Path, err)
			continue
		}
		first, answer, _ := strings.Cut(string(data), "\n")
		want, err := strconv.Atoi(strings.TrimPrefix(first, "# makes "))
		if err != nil {
			t.Errorf("%s: first line %q, want \"# makes N\"", file, first)
			continue
		}
		if got := Made(Score(d.KeyPoints, answer)); got != want || want >= len(d.KeyPoints) {
			var detail []string
			for _, s := range Score(d.KeyPoints, answer) {
				detail = append(detail, strconv.FormatBool(s.Made)+" "+s.Point)
			}
			t.Errorf("%s: makes %d of %d, its file says %d (fewer than all):\n%s", file, got, len(d.KeyPoints), want, strings.Join(detail, "\n"))
		}
	}
}

// TestChineseModelAnswersMakeTheirPoints: the Chinese model answer of
// every shipped drill (its catalog, package i18n) makes every key point,
// so that an answer in the course's language is scored as one in English.
func TestChineseModelAnswersMakeTheirPoints(t *testing.T) {
	drills, err := Load(".", "docker")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drills {
		cat, err := i18n.LoadCatalog(d.Path, i18n.ZH)
		if err != nil {
			t.Fatal(err)
		}
		points := d.KeyPoints
		zh := cat.T(d.ModelAnswer)
		if zh == d.ModelAnswer {
			t.Errorf("%s: no Chinese model answer", d.Path)
			continue
		}
		for _, s := range Score(points, zh) {
			if !s.Made {
				t.Errorf("%s: the Chinese model answer misses %q (no term of: %v)", d.Path, s.Point, s.Missing)
			}
		}
	}
}

// TestLearnerAnswersMakeTheirPoints: for every shipped drill,
// testdata/answers/zh and testdata/answers/en hold answers (separated by
// lines of ---) that learners of the course might write, in Chinese and
// in English, in the course notes' words or their own and not the model
// answer's, full and terse, each making every key point. Each must score
// full marks: a point missed there is a synonym the drill's terms lack.
func TestLearnerAnswersMakeTheirPoints(t *testing.T) {
	drills, err := Load(".", "docker")
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"zh", "en"} {
		for _, d := range drills {
			name := strings.TrimSuffix(filepath.Base(d.Path), ".feature")
			answer, err := os.ReadFile(filepath.Join("testdata", "answers", lang, name+".txt"))
			if err != nil {
				t.Errorf("%s: no learner's answer in %s: %v", d.Path, lang, err)
				continue
			}
			for i, a := range strings.Split(string(answer), "\n---\n") {
				for _, s := range Score(d.KeyPoints, a) {
					if !s.Made {
						t.Errorf("%s: learner's answer %s/%d misses %q (no term of: %v)", d.Path, lang, i+1, s.Point, s.Missing)
					}
				}
			}
		}
	}
}
