package guard

// FirstToken returns the text of q's first significant token, as Check's
// tokenizer reads it, or "" if there is none.
func FirstToken(q string) string {
	t := nextToken(q, 0)
	return q[t.start:t.end]
}
