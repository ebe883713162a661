//go:build !race

package openai_test

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
