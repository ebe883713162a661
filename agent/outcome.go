package agent

import (
	"fmt"
	"strings"
)

// classify decides the Outcome of a final answer text given the statements
// tried. In order:
//   - the prompt's markers win: "Refused:" → Refused, "Not in the data:" →
//     Unanswerable (see HasMarker);
//   - a refused statement with no statement run ok after it → Refused;
//   - a statement that ran ok → Answered;
//   - otherwise (nothing ran) the words decide (Read): a refusal →
//     Refused; anything else, a decline because the data lacks it included,
//     → Unanswerable.
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
	if Read(text) == ReadsAsRefusal {
		return Refused
	}
	return Unanswerable
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
