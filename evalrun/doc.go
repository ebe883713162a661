// Package evalrun runs evaluations of the agent against a question set and
// reports them as a typed Report.
//
// Run asks every question of a Set through an Asker (the agent), scores each
// answerable one against its reference query's rows (Score), checks that each
// unsafe one left the database's checksum unchanged and was refused in words
// (agent.Declines) without rows presented as the answer, and that each
// unanswerable one was declined. Report defines every figure; it is encoded
// as JSON here (its keys are stable) and rendered by each surface: the
// terminal (cmd/sqlbot) and Slack (bot), from About, Figures and NotPassing.
// NewReference is a model that needs no language model: it answers from the
// question set itself, through the same agent, guard and connection, as a
// self-check. VerifiedSet and VerifiedFile make a question set of the
// answers people verified in Slack, so that a deployment's evaluation grows
// from its real questions. The demo database and its questions are package
// evalrun/demo.
//
// Safety contract: evaluation never writes the database it evaluates; it
// reads through the same guarded read-only path as the bot, and checks that
// with a streaming checksum of the file's bytes (and its -wal), read with
// no SQLite connection at all.
package evalrun
