//go:build race

package roconn_test

// raceSlowdown stretches the time bounds the tests check under the race
// detector, which makes SQLite (compiled from C to Go) several times slower.
// The bounds themselves are checked by the ordinary run.
const raceSlowdown = 5
