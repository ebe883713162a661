//go:build !race

package roconn_test

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
