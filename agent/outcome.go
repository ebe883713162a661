package agent

import (
	"fmt"
	"strings"
)

// classify decides the Outcome of a final answer text given the statements
// tried. In order:
//   - the prompt's markers win: "Refused:" → Refused, "Not in the data:" →
//     Unanswerable (asterisks, quotes and spaces before them are ignored);
//   - a refused statement with no statement run ok after it → Refused;
//   - a statement that ran ok → Answered;
//   - otherwise (nothing ran) common phrasings decide: words about writes,
//     permission or privacy → Refused; words saying the data lacks it →
//     Unanswerable; a bare "I can't"/"I cannot" → Refused; else Unanswerable.
func classify(text string, stmts []Statement) Outcome {
	switch {
	case HasMarker(text, RefusedPrefix):
		return Refused
	case HasMarker(text, NotInDataPrefix):
		return Unanswerable
	}
	lastOK, lastRefused := -1, -1
	for i, s := range stmts {
		switch s.Status {
		case StatusOK:
			lastOK = i
		case StatusRefused:
			lastRefused = i
		}
	}
	if lastRefused > lastOK {
		return Refused
	}
	if lastOK >= 0 {
		return Answered
	}
	lower := strings.ToLower(strings.ReplaceAll(text, "\u2019", "'"))
	switch {
	case containsAny(lower, refusalWords):
		return Refused
	case containsAny(lower, notInDataWords):
		return Unanswerable
	case containsAny(lower, declineWords):
		return Refused
	}
	return Unanswerable
}

// Fallback phrasings for models that ignore the markers. They are consulted
// only when no statement ran, so a figure's explanation cannot trip them.
var (
	refusalWords = []string{"read-only", "read only", "not allowed", "not permitted", "i won't", "i will not",
		"refuse", "cannot modify", "can't modify", "cannot delete", "can't delete", "cannot change", "can't change",
		"private", "confidential"}
	notInDataWords = []string{"not in the data", "does not contain", "doesn't contain", "does not have", "doesn't have",
		"does not include", "doesn't include", "no data", "not available", "no information", "does not hold",
		"doesn't hold", "not recorded", "isn't recorded", "not tracked", "no column", "no table"}
	declineWords = []string{"i can't", "i cannot", "i can not", "i'm unable", "i am unable", "unable to"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// HasMarker reports whether text begins with marker (RefusedPrefix or
// NotInDataPrefix), ignoring case and the spaces, quotes and Markdown a model
// may put before it.
func HasMarker(text, marker string) bool {
	return hasPrefixFold(strings.TrimLeft(text, " \t\r\n*_>`\"'#"), marker)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// lastRefusal returns a copy of the last refused statement, or nil.
func lastRefusal(stmts []Statement) *Statement {
	for i := len(stmts) - 1; i >= 0; i-- {
		if stmts[i].Status == StatusRefused {
			s := stmts[i]
			return &s
		}
	}
	return nil
}

// budgetAnswer says that the budget ran out, and shows the last SQL tried
// and what became of it, rather than presenting half an investigation as an
// answer.
func budgetAnswer(maxSteps int, stmts []Statement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "I stopped after %d model calls, the step limit, without reaching an answer.", maxSteps)
	if len(stmts) == 0 {
		b.WriteString(" I did not run any SQL.")
		return b.String()
	}
	last := stmts[len(stmts)-1]
	switch last.Status {
	case StatusOK:
		b.WriteString(" The last SQL I ran (it ran without error) was:\n")
	case StatusRefused:
		fmt.Fprintf(&b, " The last SQL I tried was refused (%s: %s):\n", last.Layer, last.Reason)
	default:
		fmt.Fprintf(&b, " The last SQL I tried failed (%s):\n", last.Reason)
	}
	b.WriteString(last.SQL)
	return b.String()
}
