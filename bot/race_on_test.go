//go:build race

package bot_test

// raceSlowdown stretches how long the tests wait for what the bot and the
// fake do, under the race detector, which makes both several times slower.
// No test asserts that something took less than these waits.
const raceSlowdown = 4
