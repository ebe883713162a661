package evalrun

import (
	"fmt"
	"slices"
	"strings"
)

// A source is a candidate column, or two adjacent ones joined, that a
// reference column may match.
type source struct {
	name string
	col  column
	pair bool
}

// sources returns the candidate's columns, then, when withPairs, each
// adjacent pair joined with a space, leaving out those holding a value that
// no reference column holds.
func sources(in *interner, cand ResultSet, withPairs bool) []source {
	names := candNames(cand.Columns)
	srcs := make([]source, 0, 2*len(names))
	for j, name := range names {
		if c, ok := canonColumn(in, cand.Rows, j); ok {
			srcs = append(srcs, source{name: name, col: c})
		}
	}
	if withPairs {
		for j := 0; j+1 < len(names); j++ {
			if c, ok := canonPair(in, cand.Rows, j); ok {
				srcs = append(srcs, source{name: names[j] + "+" + names[j+1], col: c, pair: true})
			}
		}
	}
	return srcs
}

func candNames(cols []string) []string {
	seen := make(map[string]int, len(cols))
	for _, c := range cols {
		seen[c]++
	}
	names := make([]string, len(cols))
	for j, c := range cols {
		names[j] = c
		if c == "" || seen[c] > 1 {
			names[j] = fmt.Sprintf("%s#%d", c, j+1)
		}
	}
	return names
}

func anyFixes(refs []column, srcs []source) bool {
	for _, c := range refs {
		if len(c.fixes) > 0 {
			return true
		}
	}
	for _, s := range srcs {
		if len(s.col.fixes) > 0 {
			return true
		}
	}
	return false
}

// match scores the canonical columns; tolerant selects the reading of
// ambiguous numbers as rounded away from zero.
func match(n int, refNames []string, refs []column, srcs []source, ordered, tolerant bool) Verdict {
	rv := make([][]int32, len(refs))
	for i, c := range refs {
		rv[i] = c.values(tolerant)
	}
	sv := make([][]int32, len(srcs))
	for i, s := range srcs {
		sv[i] = s.col.values(tolerant)
	}

	// Sources with identical values are interchangeable: each reference
	// column tries only the one it prefers.
	class := make([]int, len(sv))
	byHash := map[uint64][]int{}
	for i, v := range sv {
		h := hashIDs(v)
		class[i] = i
		for _, j := range byHash[h] {
			if slices.Equal(sv[j], v) {
				class[i] = j
				break
			}
		}
		if class[i] == i {
			byHash[h] = append(byHash[h], i)
		}
	}
	// Multisets of each source, for the per-column check.
	sortedHash := make([]uint64, len(sv))
	sorted := make([][]int32, len(sv))
	for i, v := range sv {
		if class[i] != i {
			continue
		}
		sorted[i] = slices.Clone(v)
		slices.Sort(sorted[i])
		sortedHash[i] = hashIDs(sorted[i])
	}

	// A reference column identical to an earlier one must map where that one
	// maps (any other source would break the row pairing), so only the first
	// of each is searched.
	rep := make([]int, len(rv))
	opts := make([][]int, len(rv))
	distinct := make([]int, len(rv))
	for r, v := range rv {
		rep[r] = r
		for q := range r {
			if rep[q] == q && slices.Equal(rv[q], v) {
				rep[r] = q
				break
			}
		}
		if rep[r] != r {
			continue
		}
		s := slices.Clone(v)
		slices.Sort(s)
		distinct[r] = len(slices.Compact(slices.Clone(s)))
		h := hashIDs(s)
		tried := map[int]bool{}
		for _, i := range preference(refNames[r], srcs) {
			if c := class[i]; !tried[c] && sortedHash[c] == h && slices.Equal(sorted[c], s) {
				tried[c] = true
				opts[r] = append(opts[r], i)
			}
		}
		if len(opts[r]) == 0 {
			return wrong(fmt.Sprintf("reference column %d (%s) not found among candidate columns", r+1, refNames[r]))
		}
	}

	choice := make([]int, len(rv))
	if ordered {
		inOrder := true
		for r := range rv {
			if rep[r] != r {
				continue
			}
			choice[r] = -1
			for _, i := range opts[r] {
				if slices.Equal(sv[i], rv[r]) {
					choice[r] = i
					break
				}
			}
			inOrder = inOrder && choice[r] >= 0
		}
		if inOrder {
			return correct(refNames, srcs, rep, choice, " in order")
		}
	}

	var order []int
	for r := range rv {
		if rep[r] == r {
			order = append(order, r)
		}
	}
	// Most constrained first, then the columns that split rows finest: a
	// wrong choice is then refuted at a shallow level.
	slices.SortStableFunc(order, func(a, b int) int {
		if d := len(opts[a]) - len(opts[b]); d != 0 {
			return d
		}
		return distinct[b] - distinct[a]
	})
	s := newSearcher(n, rv, order, opts, sv)
	switch s.solve(0, make([]int32, n)) {
	case exhausted:
		return wrong(fmt.Sprintf("no consistent column mapping found within the search limit of %d rows examined", searchBudget))
	case none:
		return wrong("each reference column matches some candidate column, but not all of them on the same rows")
	}
	if ordered {
		return wrong("rows differ in order (ordered question)")
	}
	for k, r := range order {
		choice[r] = s.choice[k]
	}
	return correct(refNames, srcs, rep, choice, "")
}

// preference lists srcs in the order they are tried for a reference column
// named name: a column of the same name, the other columns left to right,
// then the joined pairs. The order decides only which of several equally
// good sources Mapping reports.
func preference(name string, srcs []source) []int {
	idx := make([]int, 0, len(srcs))
	for i, s := range srcs {
		if !s.pair && strings.EqualFold(strings.TrimSpace(s.name), strings.TrimSpace(name)) {
			idx = append(idx, i)
		}
	}
	for i, s := range srcs {
		if !s.pair && !strings.EqualFold(strings.TrimSpace(s.name), strings.TrimSpace(name)) {
			idx = append(idx, i)
		}
	}
	for i, s := range srcs {
		if s.pair {
			idx = append(idx, i)
		}
	}
	return idx
}

func correct(refNames []string, srcs []source, rep, choice []int, how string) Verdict {
	m := make([]string, len(refNames))
	parts := make([]string, len(refNames))
	for r := range refNames {
		m[r] = srcs[choice[rep[r]]].name
		parts[r] = refNames[r] + "=" + m[r]
	}
	return Verdict{
		Correct: true,
		Reason:  fmt.Sprintf("correct: every reference column matched a candidate column%s (%s)", how, strings.Join(parts, ", ")),
		Mapping: m,
	}
}

// hashIDs hashes ids (FNV-1a over whole values); equal hashes are
// confirmed by comparing the slices.
func hashIDs(ids []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, id := range ids {
		h = (h ^ uint64(uint32(id))) * 1099511628211
	}
	return h
}

type outcome int

const (
	none outcome = iota
	found
	exhausted
)

// A searcher looks for one source per reference column such that the
// candidate's rows, projected onto the chosen sources, equal the reference's
// rows as a multiset. It assigns columns one level at a time and checks the
// projection so far at each level: rows are tracked as tuple ids, interned
// per level over the reference's rows, so a candidate row whose partial tuple
// the reference lacks, or one tuple too many, refutes a choice at once.
type searcher struct {
	n      int
	cols   [][]int32          // reference columns, in search order
	opts   [][]int            // sources to try for each level
	src    [][]int32          // every source's values
	next   []map[uint64]int32 // per level: (tuple id before, value) → tuple id after
	want   [][]int32          // per level: reference rows per tuple id
	tuples [][]int32          // per level: the candidate rows' tuple ids
	count  []int32
	choice []int // per level: the chosen source
	budget int
}

func newSearcher(n int, rv [][]int32, order []int, opts [][]int, sv [][]int32) *searcher {
	s := &searcher{
		n: n, src: sv, budget: searchBudget,
		count:  make([]int32, n),
		choice: make([]int, len(order)),
	}
	prev := make([]int32, n)
	for _, r := range order {
		s.cols = append(s.cols, rv[r])
		s.opts = append(s.opts, opts[r])
		m := make(map[uint64]int32, n)
		cur := make([]int32, n)
		var want []int32
		for row, v := range rv[r] {
			k := pairKey(prev[row], v)
			id, ok := m[k]
			if !ok {
				id = int32(len(want))
				m[k] = id
				want = append(want, 0)
			}
			want[id]++
			cur[row] = id
		}
		s.next = append(s.next, m)
		s.want = append(s.want, want)
		s.tuples = append(s.tuples, make([]int32, n))
		prev = cur
	}
	return s
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (s *searcher) solve(level int, prev []int32) outcome {
	if level == len(s.cols) {
		return found
	}
	cur := s.tuples[level]
	for _, o := range s.opts[level] {
		if s.budget < s.n {
			return exhausted
		}
		s.budget -= s.n
		if !s.extend(level, prev, s.src[o], cur) {
			continue
		}
		s.choice[level] = o
		if r := s.solve(level+1, cur); r != none {
			return r
		}
	}
	return none
}

// extend projects the candidate rows one column further and reports whether
// they still equal the reference rows as a multiset.
func (s *searcher) extend(level int, prev, src, cur []int32) bool {
	want := s.want[level]
	cnt := s.count[:len(want)]
	clear(cnt)
	m := s.next[level]
	for row, p := range prev {
		id, ok := m[pairKey(p, src[row])]
		if !ok {
			return false
		}
		// Both sides have n rows, so no tuple above its reference count
		// means every count is equal.
		if cnt[id]++; cnt[id] > want[id] {
			return false
		}
		cur[row] = id
	}
	return true
}
