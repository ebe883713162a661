package roconn

import (
	"fmt"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// functionAllowed reports whether model SQL may call the SQL function name
// (lower-cased). SQLite reports the -> and ->> operators as functions too.
// Everything else is denied: load_extension, randomblob, zeroblob, sqlite_*,
// fts3_tokenizer, readfile/writefile, edit, the JSON writers and the like.
func functionAllowed(name string) bool {
	switch name {
	case // aggregates
		"avg", "count", "group_concat", "string_agg", "max", "min", "sum", "total",
		// window functions
		"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
		"lag", "lead", "first_value", "last_value", "nth_value",
		// date and time
		"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
		"current_date", "current_time", "current_timestamp",
		// strings and the other core scalars
		"abs", "char", "coalesce", "concat", "concat_ws", "format", "glob",
		"hex", "ifnull", "iif", "if", "instr", "length", "like",
		"likelihood", "likely", "lower", "ltrim", "nullif", "octet_length",
		"printf", "quote", "replace", "round", "rtrim", "sign", "substr",
		"substring", "trim", "typeof", "unhex", "unicode", "unlikely",
		"upper", "random", "soundex",
		// math
		"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh",
		"ceil", "ceiling", "cos", "cosh", "degrees", "exp", "floor",
		"ln", "log", "log10", "log2", "mod", "pi", "pow", "power",
		"radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
		// JSON, the read-only subset
		"json", "json_array", "json_array_length", "json_extract", "json_object",
		"json_quote", "json_type", "json_valid", "json_group_array", "json_group_object",
		"->", "->>":
		return true
	}
	return false
}

// functionNameAllowed is functionAllowed(fold(name)), without a copy of a
// name of up to 32 bytes (a conversion that does not escape is made on the
// stack).
func functionNameAllowed(name string) bool {
	var buf [32]byte
	b := foldInto(buf[:], name)
	if b == nil {
		return functionAllowed(fold(name))
	}
	return functionAllowed(string(b))
}

// decide is the restricted authorizer's verdict on one action. It allows
// SELECT, RECURSIVE, READ of an allowed pair and FUNCTION of an allowed
// function; everything else is denied, with a short reason for the Refusal.
//
// stmt is the statement being compiled ("": unknown), read only to word a
// refusal.
func (a *access) decide(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, context string, modules map[string]bool, stmt string) (ok bool, reason string) {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive:
		return true, ""
	case sqlite.AuthRead:
		if a.readAllowed(arg1, arg2, dbName, context, modules) {
			return true, ""
		}
		if arg2 == "" {
			return false, "not allowed to read " + clipName(arg1)
		}
		if _, known := a.top[fold(arg1)]; !known && !a.tables[fold(arg1)] && derivedNames(stmt)[fold(arg1)] {
			// SQLite asks about a subquery's column by its name only for a
			// RIGHT or FULL join's USING column named unqualified.
			return false, "an unqualified USING column of a RIGHT or FULL JOIN whose left side is a subquery or CTE (" +
				clipName(arg1) + "." + clipName(arg2) + ") cannot be checked; name the side it comes from, e.g. " +
				clipName(arg1) + "." + clipName(arg2) + ", or coalesce(" + clipName(arg1) + "." + clipName(arg2) + ", …)"
		}
		return false, "not allowed to read " + clipName(arg1) + "." + clipName(arg2)
	case sqlite.AuthFunction:
		if functionNameAllowed(arg2) {
			return true, ""
		}
		return false, "function not allowed: " + clipName(arg2)
	case sqlite.AuthPragma:
		return false, "PRAGMA is not allowed"
	case sqlite.AuthAttach:
		return false, "ATTACH is not allowed"
	case sqlite.AuthDetach:
		return false, "DETACH is not allowed"
	case sqlite.AuthTransaction, sqlite.AuthSavepoint:
		return false, "transactions are not allowed"
	}
	return false, "writes are not allowed (" + writeWhat(action, arg1, arg2) + ")"
}

// writeWhat names a denied action the way a person would write it.
func writeWhat(action sqlite.AuthorizerActionCode, arg1, arg2 string) string {
	n1, n2 := clipName(arg1), clipName(arg2)
	if schemaTableWrite(action, arg1) {
		return "changes to the schema"
	}
	switch action {
	case sqlite.AuthInsert:
		return "insert into " + n1
	case sqlite.AuthUpdate:
		return "update " + n1
	case sqlite.AuthDelete:
		return "delete from " + n1
	case sqlite.AuthCreateTable, sqlite.AuthCreateTempTable:
		return "create table " + n1
	case sqlite.AuthCreateIndex, sqlite.AuthCreateTempIndex:
		return "create index " + n1
	case sqlite.AuthCreateView, sqlite.AuthCreateTempView:
		return "create view " + n1
	case sqlite.AuthCreateTrigger, sqlite.AuthCreateTempTrigger:
		return "create trigger " + n1
	case sqlite.AuthCreateVTable:
		return "create virtual table " + n1
	case sqlite.AuthDropTable, sqlite.AuthDropTempTable:
		return "drop table " + n1
	case sqlite.AuthDropIndex, sqlite.AuthDropTempIndex:
		return "drop index " + n1
	case sqlite.AuthDropView, sqlite.AuthDropTempView:
		return "drop view " + n1
	case sqlite.AuthDropTrigger, sqlite.AuthDropTempTrigger:
		return "drop trigger " + n1
	case sqlite.AuthDropVTable:
		return "drop virtual table " + n1
	case sqlite.AuthAlterTable:
		return "alter table " + n2
	case sqlite.AuthReindex:
		return "reindex"
	case sqlite.AuthAnalyze:
		return "analyze"
	}
	return fmt.Sprintf("action %d", int(action))
}

// schemaTableWrite reports whether action changes table, a sqlite_* table.
// Some statements ask that before they name what they do: CREATE and DROP
// change sqlite_schema first, ANALYZE sqlite_stat1; SQLite stops compiling
// CREATE and DROP at the first denial, so the reason must cover them.
func schemaTableWrite(action sqlite.AuthorizerActionCode, table string) bool {
	return (action == sqlite.AuthInsert || action == sqlite.AuthUpdate || action == sqlite.AuthDelete) &&
		strings.HasPrefix(fold(table), "sqlite_")
}

// clipName keeps a name that came from the statement short in a reason: it
// is echoed to the model and the user, and the model chose it.
func clipName(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// An authState is the authorizer of one physical connection: the access it
// enforces and the reason for its most recent denial, which Query reads back
// to explain a refusal. A physical connection is used by one goroutine at a
// time; the mutex is there because the callback runs inside SQLite.
type authState struct {
	access   *access
	modules  map[string]bool // the connection's virtual table modules, lower-cased
	allowAll bool            // for tests of the other layer alone: every action is allowed

	mu     sync.Mutex
	denied string // the reason for the first denial since reset, "" if none
	weak   bool   // denied is only about the schema table (see authorize)
	// text is the reason the text of the statement being compiled is
	// refused (see access.textRefusal), "" if it is not: every action of
	// that statement is then denied.
	text string
	// counts holds, per table, how many reads of its column "" the views
	// compiled so far in the statement allow (see access.counts).
	counts map[string]int
	// stmt is the statement being compiled, since begin ("" after reset).
	stmt string
	// last and lastText remember the last statement begin judged: Query
	// compiles each statement twice.
	last, lastText string
	sealed         bool // a checked program is running: nothing may be compiled
	broken         bool // something was compiled, and denied, while sealed
}

// authorize is the sqlite.AuthorizerFn installed on the connection.
func (s *authState) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, context string) sqlite.AuthorizerReturnCode {
	if s.deniedSealed() {
		return sqlite.AuthorizerDeny
	}
	s.mu.Lock()
	stmt := s.stmt
	s.mu.Unlock()
	ok, reason := s.access.decide(action, arg1, arg2, dbName, context, s.modules, stmt)
	s.mu.Lock()
	if action == sqlite.AuthSelect {
		for t, n := range lookup(s.access.counts, context) {
			if s.counts == nil {
				s.counts = map[string]int{}
			}
			s.counts[t] += n
		}
	}
	// A context that is no view's is the statement's own (a common table
	// expression): the top level, as far as counts go.
	topLevel := lookup(s.access.via, context) == nil
	if !ok && action == sqlite.AuthRead && arg2 == "" && topLevel && lookup(s.counts, arg1) > 0 && foldEq(dbName, "main") {
		s.counts[fold(arg1)]--
		ok = true
	}
	if s.text != "" {
		ok, reason = false, s.text
	}
	if s.allowAll {
		ok = true
	}
	s.mu.Unlock()
	if ok {
		return sqlite.AuthorizerOK
	}
	// When SQLite keeps asking after denying a change to a sqlite_* table
	// (as for ANALYZE), the clearer, later reason replaces the first.
	weak := schemaTableWrite(action, arg1)
	s.mu.Lock()
	if s.denied == "" || s.weak && !weak {
		s.denied, s.weak = reason, weak
	}
	s.mu.Unlock()
	return sqlite.AuthorizerDeny
}

// reset forgets the last denial and the statement's text.
func (s *authState) reset() {
	s.mu.Lock()
	s.denied, s.weak, s.text, s.counts, s.stmt = "", false, "", nil, ""
	s.mu.Unlock()
}

// begin is reset for compiling stmt: Query calls it before every compile
// of a statement, so that the authorizer judges the statement's text too
// (see access.textRefusal) and denies all of it if the text is refused.
func (s *authState) begin(stmt string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stmt != s.last || s.last == "" {
		s.last, s.lastText = stmt, s.access.textRefusal(stmt, s.modules)
	}
	s.denied, s.weak, s.text, s.counts, s.stmt = "", false, s.lastText, nil, stmt
}

// seal forbids every compile until unseal: between the check of a program
// and the end of its run, SQLite compiles only to re-prepare the statement
// into a program nobody checked (after a schema change), and that must fail.
func (s *authState) seal() {
	s.mu.Lock()
	s.sealed, s.broken = true, false
	s.mu.Unlock()
}

func (s *authState) unseal() {
	s.mu.Lock()
	s.sealed = false
	s.mu.Unlock()
}

// sealBroken reports whether SQLite tried to compile while sealed.
func (s *authState) sealBroken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

// deniedSealed records, and reports, a compile while sealed.
func (s *authState) deniedSealed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealed {
		s.broken = true
	}
	return s.sealed
}

// denial returns the reason for the first denial since reset, or "".
func (s *authState) denial() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.denied
}
