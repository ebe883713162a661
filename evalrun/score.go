package evalrun

import "fmt"

// A ResultSet is a query's output as the scorer sees it: column names and
// rows, each row holding one value per column. Values are roconn's (see
// roconn.Result): nil, int64, float64 or string; Score reads anything else
// as its fmt.Sprint text.
type ResultSet struct {
	Columns []string
	Rows    [][]any
	// Truncated reports that the query returned more rows than the row cap
	// and Rows holds only the first ones (roconn.Result.Truncated,
	// agent.Result.Truncated).
	Truncated bool
}

// A Verdict is Score's judgement of one candidate result, with its reason.
type Verdict struct {
	// Correct reports whether the candidate's result answers the question
	// as the reference's does.
	Correct bool
	// Reason is one sentence for the people reading a report, starting with
	// "correct:" or "wrong:". Do not branch on its text.
	Reason string
	// Mapping holds, when Correct, one entry per reference column: the
	// candidate column that matched it ("total"), or the two adjacent
	// candidate columns joined to form it ("first_name+last_name"). A
	// candidate column whose name is empty or shared with another column is
	// named with its 1-based position as well ("id#2"). Mapping is nil when
	// the candidate is wrong, and when both results are empty.
	Mapping []string
}

// searchBudget bounds the search for a consistent column mapping, counted in
// rows examined: about 20,000 mappings tried at 200 rows, tens of
// milliseconds at worst. Real results settle in a few hundred rows examined
// per column; only results built to defeat the search reach the bound.
const searchBudget = 4_000_000

// Score reports whether cand, a candidate query's result, answers the
// question whose reference query returned ref. The rule is execution
// accuracy by containment:
//
//   - The row counts must be equal.
//   - Every reference column must appear among the candidate's columns,
//     compared by its values over all rows, never by its name: aliases and
//     column order do not matter, and extra candidate columns (an added
//     COUNT, an id) are allowed. Two adjacent candidate columns may be joined
//     with a space to form one reference column (first_name, last_name for
//     first_name || ' ' || last_name), with SQL's NULL rule for ||: a join
//     with a NULL is NULL. Two reference columns may match the same
//     candidate column only when their values are identical.
//   - The columns must match together, on one pairing of reference rows to
//     candidate rows: with ordered false rows are compared as multisets
//     (duplicates count) in any order; with ordered true row i must match
//     row i.
//
// Values are compared after canonicalisation. NULL equals only NULL.
// Numbers are compared at 2 decimal places: int64 and float64 compare
// numerically (13 equals 13.0), and a float is rounded half away from zero
// on its exact binary value, as SQLite's round() and printf('%.2f') do, so
// avg(x) matches round(avg(x), 2). A string that is a decimal number after
// trimming ("13", "13.00", "-1.5e3") is read as that number, because SQLite
// hands numbers back as text through printf(), CAST, || and TEXT columns;
// other strings are compared exactly (case and Unicode form matter) after
// trimming Unicode white space. Integers beyond ±9e15 are compared exactly.
//
// A float within 1e-9 (relative) of a half-hundredth, such as 1.005 stored
// as 1.00499999999999989, is ambiguous: two correct computations of one
// figure can land on either side. When the exact reading fails and such a
// value is present, Score tries again reading every such value rounded away
// from zero, and accepts the candidate if that matches.
//
// When both results have no rows, no value can be compared, so Score accepts
// the candidate when it has at least as many columns as the reference.
//
// A result cut at the row cap (Truncated) is never scored correct: the rows
// past the cap were never seen, so a match of the first ones proves nothing.
// A truncated candidate is wrong, and so is any candidate for a truncated
// reference; a caller should check the reference first and report that its
// question cannot be scored.
//
// The search for a consistent mapping is bounded (a few tens of
// milliseconds); a candidate whose mapping is not found within the bound is
// scored wrong, and its Reason says so. Score never fails: a row whose width
// differs from its ResultSet's Columns makes the verdict wrong.
func Score(ref, cand ResultSet, ordered bool) Verdict {
	if msg := malformed("reference", ref); msg != "" {
		return wrong(msg)
	}
	if msg := malformed("candidate", cand); msg != "" {
		return wrong(msg)
	}
	switch {
	case ref.Truncated:
		return wrong(fmt.Sprintf("the reference has more rows than the row cap (%d kept), so it cannot be scored", len(ref.Rows)))
	case cand.Truncated:
		return wrong(fmt.Sprintf("the candidate has more rows than the row cap (%d kept), the reference %d", len(cand.Rows), len(ref.Rows)))
	}
	n := len(ref.Rows)
	if len(cand.Rows) != n {
		return wrong(fmt.Sprintf("row count %d, want %d", len(cand.Rows), n))
	}
	if n == 0 {
		if len(cand.Columns) < len(ref.Columns) {
			return wrong(fmt.Sprintf("both results are empty, but the candidate has %d columns, want at least %d",
				len(cand.Columns), len(ref.Columns)))
		}
		return Verdict{Correct: true, Reason: fmt.Sprintf(
			"correct: both results are empty and the candidate has at least the reference's %d columns", len(ref.Columns))}
	}

	in := newInterner()
	refs := make([]column, len(ref.Columns))
	hasText := false
	for j := range refs {
		refs[j], _ = canonColumn(in, ref.Rows, j)
		hasText = hasText || refs[j].hasText
	}
	in.frozen = true
	srcs := sources(in, cand, hasText)

	v := match(n, ref.Columns, refs, srcs, ordered, false)
	if v.Correct || !anyFixes(refs, srcs) {
		return v
	}
	if v2 := match(n, ref.Columns, refs, srcs, ordered, true); v2.Correct {
		v2.Reason += " (reading values on a half-hundredth boundary as rounded away from zero)"
		return v2
	}
	return v
}

func wrong(why string) Verdict { return Verdict{Reason: "wrong: " + why} }

func malformed(which string, rs ResultSet) string {
	for i, row := range rs.Rows {
		if len(row) != len(rs.Columns) {
			return fmt.Sprintf("%s row %d has %d values for %d columns", which, i+1, len(row), len(rs.Columns))
		}
	}
	return ""
}
