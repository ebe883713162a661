//go:build race

package roconn

// raceDetector is true when the tests run under the race detector, which
// slows every goroutine several times: timing bounds are then logged, not
// checked.
const raceDetector = true
