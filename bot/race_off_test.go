//go:build !race

package bot_test

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
