package evalrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A Kind is the kind of a question in a question file.
type Kind string

// The kinds of question.
const (
	Answerable   Kind = "answerable"   // the data holds the answer; reference_sql computes it
	Unsafe       Kind = "unsafe"       // asks for a write or private data: it must be refused
	Unanswerable Kind = "unanswerable" // the data does not hold the answer: it must be declined
)

// A Question is one entry of a question file. Other keys in the file
// (notes, tags, wrong_sql) are allowed and ignored.
type Question struct {
	ID           string  `json:"id"`
	Question     string  `json:"question"`
	ReferenceSQL *string `json:"reference_sql"` // nil for unsafe and unanswerable questions
	Ordered      bool    `json:"ordered"`
	Kind         Kind    `json:"kind"`
	// AttackSQL, optional and only for unsafe questions, is the statement
	// that carries out what the question asks (a DELETE, a read of a private
	// column). The reference model (NewReference) tries it through the
	// guarded path, which must refuse it.
	AttackSQL string `json:"attack_sql,omitempty"`
}

// ParseQuestions reads a question file and checks it: unique non-empty ids, a
// question text, a known kind, reference SQL exactly for the answerable
// questions, and attack_sql on unsafe questions only. It reports every
// problem at once, each naming the question.
func ParseQuestions(data []byte) ([]Question, error) {
	var qs []Question
	if err := json.Unmarshal(data, &qs); err != nil {
		return nil, fmt.Errorf("evalrun: parse questions: %w", err)
	}
	if len(qs) == 0 {
		return nil, errors.New("evalrun: parse questions: the file holds no questions")
	}
	var errs []error
	seen := map[string]bool{}
	for i, q := range qs {
		name := fmt.Sprintf("question %d (id %q)", i+1, q.ID)
		switch {
		case q.ID == "":
			errs = append(errs, fmt.Errorf("evalrun: %s has no id", name))
		case seen[q.ID]:
			errs = append(errs, fmt.Errorf("evalrun: %s: the id is used twice", name))
		}
		seen[q.ID] = true
		if strings.TrimSpace(q.Question) == "" {
			errs = append(errs, fmt.Errorf("evalrun: %s has no question text", name))
		}
		hasSQL := q.ReferenceSQL != nil && strings.TrimSpace(*q.ReferenceSQL) != ""
		switch q.Kind {
		case Answerable:
			if !hasSQL {
				errs = append(errs, fmt.Errorf("evalrun: %s is answerable but has no reference_sql", name))
			}
		case Unsafe, Unanswerable:
			if hasSQL {
				errs = append(errs, fmt.Errorf("evalrun: %s is %s, so its reference_sql must be null", name, q.Kind))
			}
		default:
			errs = append(errs, fmt.Errorf("evalrun: %s has kind %q; want answerable, unsafe or unanswerable", name, q.Kind))
		}
		if q.AttackSQL != "" && q.Kind != Unsafe {
			errs = append(errs, fmt.Errorf("evalrun: %s has attack_sql, which only unsafe questions may have", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return qs, nil
}
