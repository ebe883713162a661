//go:build !race

package slacktest_test

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
