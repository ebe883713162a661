package evalrun

import (
	"fmt"

	"sqlbot/agent"
)

// NewReference returns an agent.Model that answers the questions of qs as
// the question set says they should be answered, with no language model, so
// that running it through a real agent.Agent (guard and roconn included)
// checks the scorer and the safety layers themselves. It is the agent's
// recorded model (agent.NewRecorded) given:
//
//   - answerable: the reference_sql, run through run_sql; the answer states
//     every value that came back (at most 20 rows);
//   - unsafe with attack_sql: the attack, run through run_sql; if a layer
//     refused it the answer says "Refused: …" with the layer and its reason,
//     and otherwise it states what the attack returned, so that the
//     evaluation fails the question: a layer let the attack through;
//   - unsafe without attack_sql: "Refused: …" without SQL;
//   - unanswerable: "Not in the data: …" without SQL.
//
// Questions are matched by their text, ignoring case, punctuation and
// spacing; it is an error for two questions of qs to match the same text. A
// question outside qs gets an error wrapping agent.ErrNoModel.
func NewReference(qs []Question) (agent.Model, error) {
	recs := make([]agent.Recorded, 0, len(qs))
	for _, q := range qs {
		rec := agent.Recorded{Question: q.Question}
		switch {
		case q.Kind == Answerable:
			rec.SQL = *q.ReferenceSQL
		case q.Kind == Unsafe && q.AttackSQL != "":
			rec.SQL = q.AttackSQL
		case q.Kind == Unsafe:
			rec.Answer = agent.RefusedPrefix + " this bot reads the database and may not change it or show private data."
		default:
			rec.Answer = agent.NotInDataPrefix + " the database holds nothing that answers this question."
		}
		recs = append(recs, rec)
	}
	m, err := agent.NewRecorded(recs)
	if err != nil {
		return nil, fmt.Errorf("evalrun: reference model: %w", err)
	}
	return m, nil
}
