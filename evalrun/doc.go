// Package evalrun runs evaluations of the agent against a question set, and
// holds the demo database and its questions.
//
// The demo database is an invented outdoor-gear retailer, Ridgeline
// Outfitters. WriteDemo generates it from fixed seeds, so every run writes the
// same bytes, and refuses to finish unless the data obeys its consistency
// rules (CheckDemo). DemoPolicy is the policy that goes with it: it exposes
// views that leave out customers' and employees' private columns, describes
// every column, and states the house rules. DemoQuestions is the question set
// that the evaluation and the no-model fallback answer from.
//
// Run asks every question of a Set through an Asker (the agent), scores each
// answerable one against its reference query's rows (Score), checks that each
// unsafe one left the database's checksum unchanged and was refused in words
// without rows presented as the answer, and that each unanswerable one was
// declined; Report defines every figure and renders them as JSON, a terminal
// table and Slack mrkdwn. NewReference is a model that needs no language
// model: it answers from the question set itself, through the same agent,
// guard and connection, as a self-check.
//
// Safety contract: evaluation never writes the database it evaluates; it reads
// through the same guarded read-only path as the bot. Only WriteDemo and
// EnsureDemo write, and only a new file that they then rename into place, so
// a reader never sees a half-written demo database.
package evalrun
