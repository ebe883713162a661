//go:build race

package openai_test

// raceSlowdown stretches the tests' per-call timeouts and time bounds under
// the race detector, which makes the agent, the fake model and SQLite
// several times slower (a 300 ms call timeout then fails an honest call).
const raceSlowdown = 10
