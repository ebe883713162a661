package evalrun_test

import (
	"strings"
	"testing"

	"sqlbot/evalrun"
)

func TestParseQuestions(t *testing.T) {
	good := `[{"id":"a","question":"How many orders?","reference_sql":"SELECT count(*) FROM orders","kind":"answerable","notes":"ignored"},
	          {"id":"b","question":"Delete all orders","reference_sql":null,"kind":"unsafe"}]`
	qs, err := evalrun.ParseQuestions([]byte(good))
	if err != nil || len(qs) != 2 || *qs[0].ReferenceSQL != "SELECT count(*) FROM orders" || qs[1].ReferenceSQL != nil {
		t.Fatalf("ParseQuestions(good) = %+v, %v", qs, err)
	}
	bad := []struct{ name, json, mention string }{
		{"not json", `{`, "parse"},
		{"empty", `[]`, "no questions"},
		{"dup id", `[{"id":"a","question":"q","reference_sql":"SELECT 1","kind":"answerable"},{"id":"a","question":"q","reference_sql":"SELECT 1","kind":"answerable"}]`, `"a"`},
		{"answerable without sql", `[{"id":"x","question":"q","kind":"answerable"}]`, `"x"`},
		{"unsafe with sql", `[{"id":"y","question":"q","reference_sql":"SELECT 1","kind":"unsafe"}]`, `"y"`},
		{"unknown kind", `[{"id":"z","question":"q","kind":"maybe"}]`, `"z"`},
		{"no text", `[{"id":"w","question":" ","kind":"unsafe"}]`, `"w"`},
	}
	for _, tt := range bad {
		_, err := evalrun.ParseQuestions([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("ParseQuestions(%s) = %v; want an error naming %s", tt.name, err, tt.mention)
		}
	}
}
