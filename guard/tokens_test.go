package guard_test

import (
	"slices"
	"testing"

	"sqlbot/guard"
)

func TestTokens(t *testing.T) {
	q := "SELECT \"a b\" -- note\nFROM t WHERE x != 'it''s' /* c */ AND y IN (1, x'00', ?1) /* open"
	var got []string
	var kinds []guard.TokenKind
	for _, tok := range guard.Tokens(q) {
		if tok.Text != q[tok.Start:tok.End] {
			t.Fatalf("token %q does not match q[%d:%d]", tok.Text, tok.Start, tok.End)
		}
		got = append(got, tok.Text)
		kinds = append(kinds, tok.Kind)
	}
	want := []string{"SELECT", `"a b"`, "FROM", "t", "WHERE", "x", "!", "=", "'it''s'", "AND", "y", "IN", "(", "1", ",", "x'00'", ",", "?1", ")"}
	if !slices.Equal(got, want) {
		t.Fatalf("Tokens(%q) = %q, want %q", q, got, want)
	}
	wantKinds := []guard.TokenKind{guard.TokenWord, guard.TokenQuoted, guard.TokenWord, guard.TokenWord, guard.TokenWord, guard.TokenWord,
		guard.TokenPunct, guard.TokenPunct, guard.TokenString, guard.TokenWord, guard.TokenWord, guard.TokenWord, guard.TokenPunct,
		guard.TokenNumber, guard.TokenPunct, guard.TokenBlob, guard.TokenPunct, guard.TokenVariable, guard.TokenPunct}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("kinds = %v, want %v", kinds, wantKinds)
	}
}
