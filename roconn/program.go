package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// An instr is one VDBE instruction, one row of EXPLAIN output: its opcode
// and operands (its address is its index in the program; no check reads P4,
// and the comment column is empty in this build of SQLite).
type instr struct {
	Opcode         string
	P1, P2, P3, P5 int64
}

// explain compiles query as EXPLAIN query on a database/sql connection and
// returns its program as EXPLAIN lists it, which is what readProgram reads
// from a compiled statement (TestReadProgramIsExplain): for the
// privileged reads of Open (view and table layouts) and for tests that
// check a program on a connection that has no authorizer or no check.
// Compiling runs the authorizer over query exactly as running it would;
// stepping an EXPLAIN program only lists instructions. It reads the rows
// from the driver connection itself: a program has hundreds of them, and
// database/sql's conversions would cost more than the compile.
func explain(ctx context.Context, conn *sql.Conn, query string) ([]instr, error) {
	var prog []instr
	err := conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("a %T cannot run a query", dc)
		}
		rows, err := q.QueryContext(ctx, explainPrefix+query, nil)
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(rows.Columns()))
		if len(vals) != 8 {
			rows.Close()
			return fmt.Errorf("EXPLAIN returned %d columns", len(vals))
		}
		for {
			switch err := rows.Next(vals); {
			case errors.Is(err, io.EOF):
				return rows.Close()
			case err != nil:
				rows.Close()
				return err
			}
			in := instr{P1: intValue(vals[2]), P2: intValue(vals[3]), P3: intValue(vals[4]), P5: intValue(vals[6])}
			in.Opcode, _ = vals[1].(string)
			prog = append(prog, in)
		}
	})
	return prog, err
}

// intValue is v as an int64 (EXPLAIN's P1, P2, P3 and P5 are integers).
func intValue(v driver.Value) int64 {
	n, _ := v.(int64)
	return n
}

// A verdict is what checkProgram found out about a program.
type verdict struct {
	write   string // the opcode that would write, "" if none
	results bool   // the program returns rows (has a ResultRow)
	columns int64  // result columns: the widest ResultRow
}

// checkProgram reads a compiled program and reports whether it would write.
//
// A program writes if it has an opcode that changes a database, its schema
// or the connection's transaction state (OpenWrite, Transaction with P2 != 0,
// CreateBtree, Destroy, Clear, ParseSchema, the Drop*, V* and cookie opcodes,
// Vacuum, JournalMode, SqlExec, AutoCommit, Savepoint, ...), or if it inserts
// into or deletes from a cursor that is not a scratch table of its own.
// Ephemeral tables, automatic indexes, sorters and pseudo-tables are how
// SQLite runs DISTINCT, UNION, IN (subquery), GROUP BY, ORDER BY, window
// functions and recursive CTEs; writing to them changes nothing on disk, so
// Insert and friends are allowed on cursors that only ever opened one.
func checkProgram(prog []instr) verdict {
	var v verdict
	scratch := map[int64]bool{} // cursors opened as scratch tables
	real := map[int64]bool{}    // cursors opened on a table or index
	for _, in := range prog {
		switch in.Opcode {
		case "OpenEphemeral", "OpenAutoindex", "SorterOpen", "OpenPseudo", "OpenDup":
			scratch[in.P1] = true
		case "OpenRead", "ReopenIdx", "OpenWrite", "VOpen":
			real[in.P1] = true
		}
	}
	for _, in := range prog {
		switch in.Opcode {
		case "ResultRow":
			v.results = true
			v.columns = max(v.columns, in.P2)
		case "OpenWrite", "CreateBtree", "Destroy", "Clear", "ParseSchema",
			"DropTable", "DropIndex", "DropTrigger",
			"VUpdate", "VCreate", "VDestroy", "VBegin", "VRename",
			"SetCookie", "Vacuum", "IncrVacuum", "JournalMode", "Checkpoint",
			"LoadAnalysis", "Expire", "SqlExec", "AutoCommit", "Savepoint",
			"FkCounter", "Program", "ResetCount", "MaxPgcnt":
			if v.write == "" {
				v.write = in.Opcode
			}
		case "Transaction":
			if in.P2 != 0 && v.write == "" {
				v.write = "Transaction"
			}
		case "TableLock":
			if in.P3 != 0 && v.write == "" { // P3 != 0: a write lock
				v.write = "TableLock"
			}
		case "Insert", "Delete", "IdxInsert", "IdxDelete", "NewRowid",
			"SorterInsert", "ResetSorter", "RowCell":
			if (!scratch[in.P1] || real[in.P1]) && v.write == "" {
				v.write = in.Opcode
			}
		}
	}
	return v
}

// refusal returns the Refusal for a program that may not run, or nil. A
// program that would write is refused; so is one that returns no rows,
// because every read-only statement that can pass the authorizer returns
// rows, and one that does not (REINDEX of nothing, say) has no business here;
// and so is one with more than maxColumns result columns. That is the only
// check of a result's width: every row a statement returns is a ResultRow's.
func (v verdict) refusal(maxColumns int) *Refusal {
	switch {
	case v.write != "":
		return &Refusal{Layer: LayerReadOnly, Reason: fmt.Sprintf("the statement's program would write (%s)", v.write)}
	case !v.results:
		return &Refusal{Layer: LayerReadOnly, Reason: "only queries that return rows may run"}
	case v.columns > int64(maxColumns):
		return &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf("the result would have %d columns; at most %d are allowed", v.columns, maxColumns)}
	}
	return nil
}

// checkCompiled is the check of stmt's compiled program prog, independent
// of the authorizer: it returns a *Refusal if prog would write, returns no
// rows or too many columns (see verdict.refusal), or reads what the policy
// does not allow (see programCheck); an error from ctx; or nil.
func (db *DB) checkCompiled(ctx context.Context, stmt string, prog []instr) error {
	if r := checkProgram(prog).refusal(db.lim.Columns); r != nil {
		return r
	}
	if db.hooks.noReadCheck {
		return nil
	}
	return db.check.check(ctx, stmt, prog)
}
