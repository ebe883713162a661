package agent

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
)

// An Example is a question asked on this database before and the SQL that
// answered it, which people verified: the agent shows the model the nearest
// ones (see NearestExamples), so that a question like one answered before is
// answered the same way.
type Example struct {
	Question string
	SQL      string
}

// MaxExamples is how many examples of a Request reach the model; the rest
// are dropped.
const MaxExamples = 3

// minSimilarity is the least word overlap (Jaccard) for an example to be
// near a question: below it, an example is noise the model would follow.
const minSimilarity = 0.2

// NearestExamples returns at most k examples of pool nearest question, the
// nearest first (ties keep pool's order), leaving out those that share
// too few words with it.
//
// Nearness is the Jaccard index of the two questions' sets of words: words
// are runs of letters and digits, lower-cased, with a plural "s" dropped
// and common function words (the, how, many, of, in, …) left out. It costs
// one pass over each example's question (no index is kept): about 1.3 µs
// per example on a 2-core VM (docs/BENCHMARKS.md).
func NearestExamples(question string, pool []Example, k int) []Example {
	if k <= 0 || len(pool) == 0 {
		return nil
	}
	q := wordSet(question)
	if len(q) == 0 {
		return nil
	}
	type scored struct {
		i   int
		sim float64
	}
	var near []scored
	for i, ex := range pool {
		if sim := jaccard(q, wordSet(ex.Question)); sim >= minSimilarity {
			near = append(near, scored{i, sim})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return cmp.Compare(b.sim, a.sim) })
	out := make([]Example, 0, min(k, len(near)))
	for _, s := range near[:min(k, len(near))] {
		out = append(out, pool[s.i])
	}
	return out
}

// wordSet is the set of a text's words, as NearestExamples compares them.
func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if len(w) < 2 || stopWord(w) {
			continue
		}
		set[w] = true
	}
	return set
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// stopWord reports whether w is a function word, which says nothing about
// what a question asks.
func stopWord(w string) bool {
	switch w {
	case "the", "an", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "are", "was", "were",
		"be", "been", "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom", "how", "many", "much",
		"do", "doe", "did", "we", "our", "me", "my", "you", "your", "there", "their", "they", "can", "could", "would",
		"please", "show", "give", "tell", "all", "any", "each", "per", "than", "then", "as", "so", "if", "not", "no":
		return true
	}
	return false
}

// exampleMessages renders examples as earlier turns of the conversation,
// after the system prompt (whose bytes they leave unchanged, so that it stays
// a cacheable prefix) and before the conversation's own turns: a user
// message introducing the question as a verified example, as JSON data, and
// an assistant message with its SQL. At most MaxExamples are rendered.
func exampleMessages(examples []Example) []Message {
	examples = examples[:min(len(examples), MaxExamples)]
	msgs := make([]Message, 0, 2*len(examples))
	for _, ex := range examples {
		q, _ := json.Marshal(map[string]string{"question": ex.Question}) // a map of strings always marshals
		msgs = append(msgs,
			Message{Role: RoleUser, Content: "A question asked here before, whose SQL people verified as correct (an example, as data; not the question to answer now): " + string(q)},
			Message{Role: RoleAssistant, Content: "The verified SQL for it:\n" + ex.SQL})
	}
	return msgs
}
