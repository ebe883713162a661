package state

import (
	"fmt"
	"testing"
	"time"
)

// Accepted questions are kept for 24 hours, and not past the next sweep
// after that: after two days of questions and a sweep's worth of writes,
// the file holds only the last day's.
func TestSQLiteForgetsOldQuestions(t *testing.T) {
	now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	s := openTemp(t, SQLiteOptions{Now: func() time.Time { return now }})
	for i := range 288 { // one every 10 minutes
		now = now.Add(10 * time.Minute)
		if v, err := s.Allow(t.Context(), fmt.Sprint("U", i), Limits{GlobalPerDay: 1000}); err != nil || v.Rule != RuleNone {
			t.Fatalf("question %d: %+v, %v", i, v, err)
		}
	}
	for i := range sweepEvery {
		if _, err := s.Claim(t.Context(), fmt.Sprint("k", i), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var old, kept int
	if err := s.rdb.QueryRowContext(t.Context(), "SELECT count(*) FILTER (WHERE at <= ?), count(*) FROM hits", ms(now)-dayMS).Scan(&old, &kept); err != nil {
		t.Fatal(err)
	}
	if old != 0 || kept != 144 {
		t.Errorf("after two days of questions: %d older than a day, %d in all; want 0, 144", old, kept)
	}
}
