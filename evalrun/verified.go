package evalrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A VerifiedAnswer is an answer that people marked correct in Slack: the
// question, the SQL that produced the answer, a checksum of the rows it
// showed, what it was computed on (Source), and who verified it since when.
// The bot keeps them; evalrun turns them into a question set, so that the
// evaluation of a deployment grows from its real questions.
type VerifiedAnswer struct {
	Channel, TS string // the answer's message in Slack
	Question    string
	SQL         string
	Checksum    string
	Source      string
	Verifiers   []string
	Since       time.Time
}

// verifiedQuestion is a Question as VerifiedFile writes it: the question
// file's keys, and where it came from (keys ParseQuestions ignores).
type verifiedQuestion struct {
	Question
	VerifiedBy    []string `json:"verified_by"`
	VerifiedSince string   `json:"verified_since"`
	RowsChecksum  string   `json:"rows_checksum,omitempty"`
	Source        string   `json:"source,omitempty"`
	Slack         string   `json:"slack"` // channel/ts of the answer
}

// ErrNoVerified is returned by VerifiedFile and VerifiedSet when there is no
// verified answer to make questions of.
var ErrNoVerified = errors.New("evalrun: no verified answers")

// VerifiedFile returns vs as a question file (the JSON that ParseQuestions
// reads): each verified answer an answerable question whose reference_sql is
// the verified SQL, in the order given, with an id made of its Slack
// channel and ts, and where it came from in keys that ParseQuestions
// ignores (verified_by, verified_since, rows_checksum, source, slack).
// Order does not count (ordered is false): what a person verified is the
// rows, and a question that needs an order says so in its file, which can
// be edited after an export.
func VerifiedFile(vs []VerifiedAnswer) ([]byte, error) {
	if len(vs) == 0 {
		return nil, ErrNoVerified
	}
	out := make([]verifiedQuestion, len(vs))
	for i, v := range vs {
		sql := strings.TrimSpace(v.SQL)
		out[i] = verifiedQuestion{
			Question: Question{
				ID: "verified-" + v.Channel + "-" + v.TS, Question: strings.TrimSpace(v.Question),
				ReferenceSQL: &sql, Kind: Answerable,
			},
			VerifiedBy: v.Verifiers, VerifiedSince: v.Since.UTC().Format(time.RFC3339),
			RowsChecksum: v.Checksum, Source: v.Source, Slack: v.Channel + "/" + v.TS,
		}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("evalrun: write verified questions: %w", err)
	}
	return append(data, '\n'), nil
}

// VerifiedSet returns vs as a question set: ParseSet of VerifiedFile's
// bytes, so that its Checksum is that of the file an export writes.
func VerifiedSet(vs []VerifiedAnswer) (*Set, error) {
	data, err := VerifiedFile(vs)
	if err != nil {
		return nil, err
	}
	return ParseSet(data)
}
