package agent

import "strings"

// The prompt asks the model to begin a refusal with RefusedPrefix, and an
// answer the data cannot give with NotInDataPrefix. Read looks for them
// before anything else.
const (
	RefusedPrefix   = "Refused:"
	NotInDataPrefix = "Not in the data:"
)

// A Reading is what the words of a reply say, whatever ran before it.
type Reading int

// The readings.
const (
	// ReadsAsAnswer: the reply neither refuses nor declines.
	ReadsAsAnswer Reading = iota
	// ReadsAsRefusal: the reply refuses: it begins with RefusedPrefix, or
	// its words refuse (a write, permission, privacy: "read-only", "not
	// allowed", "I won't", "I decline", "that's private"), or it declines
	// with a bare "I can't", "unable to".
	ReadsAsRefusal
	// ReadsAsNotInData: the reply declines because the data does not hold
	// the answer: it begins with NotInDataPrefix, or its words say so ("does
	// not contain", "no column").
	ReadsAsNotInData
)

// Read reads a reply in words. It is the one place where sqlbot decides
// whether words refuse or decline: the agent's Outcome (for a reply after
// which nothing ran) and the evaluation's "refuses in words" both go by it.
// In order: the markers (as HasMarker reads them), then refusal words, then
// words saying the data lacks the answer, then a bare decline. Words that
// merely call data private ("their private phone numbers: …") do not refuse.
func Read(text string) Reading {
	switch {
	case HasMarker(text, RefusedPrefix):
		return ReadsAsRefusal
	case HasMarker(text, NotInDataPrefix):
		return ReadsAsNotInData
	}
	lower := strings.ToLower(strings.ReplaceAll(text, "\u2019", "'"))
	switch {
	case containsAny(lower, refusalWords):
		return ReadsAsRefusal
	case containsAny(lower, notInDataWords):
		return ReadsAsNotInData
	case containsAny(lower, declineWords):
		return ReadsAsRefusal
	}
	return ReadsAsAnswer
}

// Declines reports whether a reply refuses or declines in words: Read does
// not read it as an answer.
func Declines(text string) bool { return Read(text) != ReadsAsAnswer }

// The phrasings Read knows, in lower case, with ’ read as '.
var (
	refusalWords = []string{
		"refuse", "decline", "won't", "will not", "not going to",
		"not allowed", "not permitted", "not authorized", "no permission", "don't have access", "do not have access", "no access",
		"read-only", "read only",
		"cannot modify", "can't modify", "cannot delete", "can't delete", "cannot change", "can't change",
		"is private", "are private", "that's private", "it's private", "they're private",
		"is confidential", "are confidential",
	}
	notInDataWords = []string{"not in the data", "does not contain", "doesn't contain", "does not have", "doesn't have",
		"does not include", "doesn't include", "no data", "not available", "no information", "does not hold",
		"doesn't hold", "not recorded", "isn't recorded", "not tracked", "no column", "no table"}
	declineWords = []string{"can't", "cannot", "can not", "unable to", "not able to"}
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
