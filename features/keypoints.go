package features

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/expr-lang/expr/parser"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
)

// KeyPointsHeading starts the section of a Feature description, after the
// model answer, that lists the points a good answer makes.
const KeyPointsHeading = "Key points:"

// A drill has between MinKeyPoints and MaxKeyPoints key points.
const (
	MinKeyPoints = 3
	MaxKeyPoints = 8
)

// KeyPoint is one point a good answer to a drill's question makes, and
// how to tell that an answer made it.
type KeyPoint struct {
	// Point is the statement, e.g. "A write is committed once a majority
	// of the members has it."
	Point string
	// Terms are the groups of words that show the point was made: every
	// group needs one of its alternatives in the answer (in English or
	// Chinese, with synonyms), e.g. [[majority, quorum, 多数派]].
	Terms [][]string
	// Evidence is what the cluster shows of the point, read in each
	// scenario just before its cluster is torn down: an expression
	// (raft.term > etcdBefore.term), "recovery" (the measured recovery
	// times) or "timeline KIND" (the timeline's events of that kind);
	// "" when the scenario cannot show it.
	Evidence string
	// Line is where the point starts in its feature file.
	Line int
}

// EvidenceRecovery and EvidenceTimeline are the evidence that is not an
// expression.
const (
	EvidenceRecovery = "recovery"
	EvidenceTimeline = "timeline "
)

// parseKeyPoints reads a Key points section:
//
//   - A new leader is elected in a higher term.
//     terms: leader, 领导者 | higher term, new term, term + 1, 任期
//     evidence: raft.term > etcdBefore.term
//
// Alternatives are separated by commas, groups by "|". line is the line
// of the section's first point in the file.
func parseKeyPoints(text string, line int) ([]KeyPoint, error) {
	var out []KeyPoint
	var errs []error
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case strings.HasPrefix(t, "- "):
			out = append(out, KeyPoint{Point: strings.TrimSpace(t[2:]), Line: line + i})
		case len(out) == 0:
			errs = append(errs, fmt.Errorf("line %d: a key point starts with \"- \", got %q", line+i, t))
		case strings.HasPrefix(t, "terms:"):
			kp := &out[len(out)-1]
			for _, g := range strings.Split(strings.TrimPrefix(t, "terms:"), "|") {
				var alts []string
				for _, a := range strings.Split(g, ",") {
					if a = strings.TrimSpace(a); a != "" {
						alts = append(alts, a)
					}
				}
				if len(alts) == 0 {
					errs = append(errs, fmt.Errorf("line %d: an empty group of terms", line+i))
					continue
				}
				kp.Terms = append(kp.Terms, alts)
			}
		case strings.HasPrefix(t, "evidence:"):
			kp := &out[len(out)-1]
			kp.Evidence = strings.TrimSpace(strings.TrimPrefix(t, "evidence:"))
			if err := checkEvidence(kp.Evidence); err != nil {
				errs = append(errs, fmt.Errorf("line %d: %w", line+i, err))
			}
		default:
			// The statement goes on over several lines.
			kp := &out[len(out)-1]
			if len(kp.Terms) > 0 || kp.Evidence != "" {
				errs = append(errs, fmt.Errorf("line %d: want \"terms:\", \"evidence:\" or a new point (\"- \"), got %q", line+i, t))
				continue
			}
			kp.Point += " " + t
		}
	}
	for _, kp := range out {
		if len(kp.Terms) == 0 {
			errs = append(errs, fmt.Errorf("line %d: key point %q has no terms: line", kp.Line, kp.Point))
		}
	}
	if len(errs) == 0 && (len(out) < MinKeyPoints || len(out) > MaxKeyPoints) {
		errs = append(errs, fmt.Errorf("line %d: %d key points, want %d to %d", line, len(out), MinKeyPoints, MaxKeyPoints))
	}
	return out, errors.Join(errs...)
}

// checkEvidence refuses evidence that is neither an expression nor one of
// the named kinds.
func checkEvidence(e string) error {
	switch {
	case e == EvidenceRecovery:
		return nil
	case strings.HasPrefix(e, EvidenceTimeline):
		if strings.TrimSpace(strings.TrimPrefix(e, EvidenceTimeline)) == "" {
			return errors.New(`evidence "timeline KIND" needs a kind (fault, lease, node, pod, step...)`)
		}
		return nil
	}
	if _, err := parser.Parse(e); err != nil {
		return fmt.Errorf("evidence %q is neither %q, %q nor an expression: %v", e, EvidenceRecovery, EvidenceTimeline+"KIND", err)
	}
	return nil
}

// PointScore is how an answer fared on one key point (as reports carry
// it).
type PointScore = engine.KeyPointScore

// Score matches an answer against key points: deterministic and
// transparent (normalised words, the points' synonyms, English and
// Chinese alike); nothing is sent anywhere.
func Score(points []KeyPoint, answer string) []PointScore {
	norm := normalizeAnswer(answer)
	sentences := splitSentences(answer)
	out := make([]PointScore, 0, len(points))
	for _, kp := range points {
		ps := PointScore{Point: kp.Point, Made: true}
		for _, g := range kp.Terms {
			if !madeGroup(norm, g) {
				ps.Made = false
				ps.Missing = append(ps.Missing, termInBothLanguages(g))
			}
		}
		if ps.Made {
			ps.By = bestSentence(kp.Terms, sentences)
		}
		out = append(out, ps)
	}
	return out
}

// bestSentence is the sentence of the answer that makes the most of a
// point's term groups (the first of equals): the quote a learner sees as
// where the point was made.
func bestSentence(groups [][]string, sentences []string) string {
	best, most := "", 0
	for _, s := range sentences {
		norm, n := normalizeAnswer(s), 0
		for _, g := range groups {
			if madeGroup(norm, g) {
				n++
			}
		}
		if n > most {
			best, most = s, n
		}
	}
	return best
}

// madeGroup reports whether normalised text holds one of a term group's
// alternatives.
func madeGroup(norm string, group []string) bool {
	return slices.ContainsFunc(group, func(alt string) bool { return termIn(norm, alt) })
}

// Made counts the points made.
func Made(scores []PointScore) int {
	n := 0
	for _, s := range scores {
		if s.Made {
			n++
		}
	}
	return n
}

// normalizeAnswer lowercases s and turns everything but letters, digits and
// Han characters into single spaces, with a space at each end and between
// Han characters and other letters that touch.
func normalizeAnswer(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space, han := true, false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '+' {
			// Chinese written against English (leader挂了, 在election
			// timeout内) is two words, as if spaced.
			isHan := unicode.Is(unicode.Han, r)
			if !space && isHan != han {
				b.WriteByte(' ')
			}
			han = isHan
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// termIn reports whether a term occurs in normalised text: a Chinese term
// anywhere, an English one as whole words, each allowing the common
// endings (leader, leaders; elect, elected, electing, election; keep
// running, keeps running; cascade, cascading; a stem such as reconcil
// matches reconcile, reconciles, reconciling). Words of three letters or
// fewer but the last (no, not, is) match only as they are.
func termIn(norm, term string) bool {
	t := strings.TrimSpace(normalizeAnswer(term))
	if t == "" {
		return false
	}
	if hasHan(t) {
		return strings.Contains(hanText(norm), hanText(t))
	}
	words, want := strings.Fields(norm), strings.Fields(t)
	for i := 0; i+len(want) <= len(words); i++ {
		match := true
		for k, w := range want {
			if !wordMatches(words[i+k], w, k == len(want)-1) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// wordMatches reports whether an answer's word is a term's word with one
// of the common endings (the word as is when it is short and not last).
// A term's final e may give way to an ending that starts with a vowel
// (cascade, cascading).
func wordMatches(word, term string, last bool) bool {
	if word == term {
		return true
	}
	if len(term) <= 3 && !last {
		return false
	}
	if rest, ok := strings.CutPrefix(word, term); ok && slices.Contains(wordEndings, rest) {
		return true
	}
	if stem, ok := strings.CutSuffix(term, "e"); ok && len(stem) > 2 {
		if rest, ok := strings.CutPrefix(word, stem); ok && rest != "" && strings.ContainsRune("aei", rune(rest[0])) && slices.Contains(wordEndings, rest) {
			return true
		}
	}
	return false
}

// hanText is normalised text as Chinese terms match it: without spaces
// and without the particle 的, which a learner may write or leave out
// (新的领导者, 新领导者, 新的 leader).
func hanText(norm string) string { return hanDrop.Replace(norm) }

var hanDrop = strings.NewReplacer(" ", "", "的", "")

// wordEndings are the endings an English term matches with ("" first).
var wordEndings = []string{"", "s", "es", "e", "d", "ed", "ted", "ting", "ing", "ion", "ions", "ation", "ations",
	"er", "ers", "y", "ies", "ive", "ly", "al", "ment", "ments"}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// sentenceEnd ends a sentence of an answer, in English or Chinese.
var sentenceEnd = regexp.MustCompile(`[.!?;。！？；\n]+`)

// splitSentences cuts an answer into its trimmed, non-empty sentences.
func splitSentences(s string) []string {
	var out []string
	for _, p := range sentenceEnd.Split(s, -1) {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// evidence evaluates the expressions on the scenario's cluster, as the
// scenario left it.
func (s *scenario) evidence(exprs []string) map[string]string {
	out := map[string]string{}
	for _, e := range exprs {
		v, err := s.sess.Eval(e)
		if err != nil {
			continue // e.g. a name this scenario never recorded
		}
		out[e] = assertions.Format(v)
	}
	return out
}

// EvidenceExprs are the expressions among the key points' evidence (for
// Library.Evidence).
func EvidenceExprs(points []KeyPoint) []string {
	var out []string
	for _, kp := range points {
		if kp.Evidence != "" && kp.Evidence != EvidenceRecovery && !strings.HasPrefix(kp.Evidence, EvidenceTimeline) && !slices.Contains(out, kp.Evidence) {
			out = append(out, kp.Evidence)
		}
	}
	return out
}

// ScoreRun scores an answer against the drill's key points and adds, to
// each point, what the cluster showed of it in the scenarios that ran.
// The last scenario's report then carries the drill (question, answer,
// model answer, scores) for the reports; answered says whether the
// learner was asked at all. The evidence is worded in p's language.
func ScoreRun(p *i18n.Printer, d *Drill, answer string, answered bool, reps []Report) []PointScore {
	scores := Score(d.KeyPoints, answer)
	for i, kp := range d.KeyPoints {
		for _, r := range reps {
			scores[i].Evidence = append(scores[i].Evidence, evidenceOf(p, kp, r)...)
		}
	}
	if len(reps) > 0 {
		reps[len(reps)-1].Drill = &engine.DrillAnswer{Question: d.Question, Answered: answered, Answer: answer, ModelAnswer: d.ModelAnswer, KeyPoints: scores}
	}
	return scores
}

// evidenceOf is what one scenario showed of a key point.
func evidenceOf(p *i18n.Printer, kp KeyPoint, r Report) []string {
	var out []string
	switch {
	case kp.Evidence == "":
	case kp.Evidence == EvidenceRecovery:
		for _, rc := range r.Recovery {
			out = append(out, engine.DescribeIn(p, rc))
		}
	case strings.HasPrefix(kp.Evidence, EvidenceTimeline):
		kind := strings.TrimSpace(strings.TrimPrefix(kp.Evidence, EvidenceTimeline))
		for _, e := range r.Timeline {
			if e.Kind == kind && len(out) < 4 {
				out = append(out, fmt.Sprintf("%.1fs %s: %s", e.At.Seconds(), e.Subject, engine.DetailIn(p, e)))
			}
		}
	default:
		if v, ok := r.Evidence[kp.Evidence]; ok {
			out = append(out, kp.Evidence+" = "+v)
		}
	}
	return out
}

// termInBothLanguages names a group of terms for a learner who missed it:
// its first term, and its first Chinese one when the first is not.
func termInBothLanguages(g []string) string {
	if hasHan(g[0]) {
		return g[0]
	}
	for _, alt := range g[1:] {
		if hasHan(alt) {
			return g[0] + " / " + alt
		}
	}
	return g[0]
}
