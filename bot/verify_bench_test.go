package bot_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/bot/state"
)

// BenchmarkExamplesFromState is what the examples cost a question: listing
// the 500 most recent verified answers from a state file (as the bot does)
// and choosing the nearest among them.
func BenchmarkExamplesFromState(b *testing.B) {
	st, err := state.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "state.db"), state.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	regions := []string{"west", "south", "midwest", "northeast", "mountain"}
	for i := range 500 {
		err := st.Verify(b.Context(), state.Verification{
			Channel: "C1", TS: fmt.Sprintf("1700000000.%06d", i),
			Question: fmt.Sprintf("How many orders were shipped to the %s region in %d?", regions[i%5], 2000+i%25),
			SQL:      fmt.Sprintf("SELECT count(*) FROM orders WHERE region = '%s' AND year = %d", regions[i%5], 2000+i%25),
			Checksum: "x", User: "U1", At: at.Add(time.Duration(i) * time.Minute),
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		list, err := st.ListVerified(b.Context(), 500)
		if err != nil || len(list) != 500 {
			b.Fatalf("listed %d: %v", len(list), err)
		}
		pool := make([]agent.Example, len(list))
		for i, v := range list {
			pool[i] = agent.Example{Question: v.Question, SQL: v.SQL}
		}
		if got := agent.NearestExamples("how many orders shipped to the west in 2024", pool, agent.MaxExamples); len(got) != agent.MaxExamples {
			b.Fatalf("%d examples", len(got))
		}
	}
}
