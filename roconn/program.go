package roconn

import (
	"context"
	"database/sql"
	"fmt"
)

// An instr is one row of EXPLAIN output, one VDBE instruction: its opcode
// and operands (its address is its index in the program; the comment column
// is empty in this build of SQLite).
type instr struct {
	Opcode     string
	P1, P2, P3 int64
	P4         string // as EXPLAIN shows it; "" when NULL
	P5         int64
}

// explain compiles query as EXPLAIN query on a database/sql connection and
// returns its program, as Query reads it (see readProgram); tests use it to
// check a program on a connection that has no authorizer or no check.
// Compiling runs the authorizer over query exactly as running it would;
// stepping an EXPLAIN program only lists instructions.
func explain(ctx context.Context, conn *sql.Conn, query string) ([]instr, error) {
	rows, err := conn.QueryContext(ctx, explainPrefix+query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var prog []instr
	for rows.Next() {
		var in instr
		var addr any
		var p4, comment sql.NullString
		if err := rows.Scan(&addr, &in.Opcode, &in.P1, &in.P2, &in.P3, &p4, &in.P5, &comment); err != nil {
			return nil, err
		}
		in.P4 = p4.String
		prog = append(prog, in)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return prog, rows.Close()
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
