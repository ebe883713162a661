package roconn

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestScratchCompile(t *testing.T) {
	path, rw := fixtureRW(t)
	rw.Close()
	db, err := Open(context.Background(), path, nil, Limits{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for n := 4; n <= 14; n++ {
		var b strings.Builder
		b.WriteString("WITH a0(v) AS (SELECT 1)")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, ", a%d(v) AS (SELECT v+v+v+v FROM a%d)", i, i-1)
		}
		fmt.Fprintf(&b, " SELECT v FROM a%d", n)
		start := time.Now()
		_, err := db.Query(context.Background(), b.String())
		back := time.Since(start)
		idle := idleWithin(t, db, time.Minute)
		t.Logf("n=%d back %v idle after %v: %v", n, back, idle, err)
	}
}
