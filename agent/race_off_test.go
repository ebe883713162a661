//go:build !race

package agent_test

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
