package roconn

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// explainPrefix makes a statement EXPLAIN, which lists its program when
// stepped: Open's privileged reads of views and tables list programs so
// (see explain). Query does not use it: it compiles each statement once,
// plainly, reads the compiled program where SQLite keeps it (see
// readProgram), checks it, and runs that same compiled statement, so the
// program roconn checks is the program that runs.
const explainPrefix = "EXPLAIN "

// An SQLError is an error SQLite returned for a statement that neither the
// authorizer, the program check nor a limit stopped: a syntax error, a
// missing column or table, a function called with the wrong arguments. Query
// returns it wrapped. Its Message is SQLite's own words ("no such column:
// Nmae"), which name only what the statement itself wrote, so they may be
// shown to the model that wrote it so that it can correct the statement.
type SQLError struct {
	Code    int    // SQLite's extended result code
	Message string // sqlite3_errmsg, or the result code's description when SQLite gave none
	text    string // Error's text: "SQL logic error: no such column: x (1)"
}

func (e *SQLError) Error() string { return e.text }

// errorOf returns the error for result code rc on the connection; its Error
// is worded as modernc.org/sqlite words its own ("SQL logic error: no such
// column: x (1)").
func errorOf(pc *capi, rc int32) *SQLError {
	str := libc.GoString(sqlite3.Xsqlite3_errstr(pc.tls, rc))
	msg := libc.GoString(sqlite3.Xsqlite3_errmsg(pc.tls, pc.handle))
	if msg == "" || msg == str {
		return &SQLError{Code: int(rc), Message: str, text: fmt.Sprintf("%s (%d)", str, rc)}
	}
	return &SQLError{Code: int(rc), Message: msg, text: fmt.Sprintf("%s: %s (%d)", str, msg, rc)}
}

// execute compiles stmt once on pc, reads its program back and checks it,
// then runs that same compiled statement and collects its rows (or sends
// them to rows, when it is not nil). It runs on
// the goroutine that owns pc, and classifies its errors there, while pc's
// authorizer state is still this statement's.
func (db *DB) execute(ctx context.Context, pc *physConn, stmt string, rows chan<- streamed) (*Result, error) {
	res, err := db.compileCheckRun(ctx, pc, stmt, rows)
	if res != nil {
		res.SQL = stmt
	}
	if err == nil {
		return res, nil
	}
	if j := pc.job; j != nil && j.memStop.Load() && !errors.Is(err, ErrRowLimit) {
		return nil, db.outOfMemory()
	}
	if pc.temp != nil && pc.temp.over && !errors.Is(err, ErrRowLimit) {
		return nil, db.tempTooBig()
	}
	return res, db.classify(pc.auth, err)
}

func (db *DB) compileCheckRun(ctx context.Context, pc *physConn, stmt string, rows chan<- streamed) (*Result, error) {
	tls := pc.tls
	pc.auth.begin(stmt)
	if pc.temp != nil {
		pc.temp.reset()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := prepare(&pc.capi, stmt)
	if err != nil {
		return nil, err
	}
	defer sqlite3.Xsqlite3_finalize(tls, st)
	if db.at != nil {
		db.at("compiled")
	}
	if sqlite3.Xsqlite3_stmt_isexplain(tls, st) != 0 {
		// Query refuses a text that starts with EXPLAIN; this is the
		// compiled statement saying so in spite of that.
		return nil, &Refusal{Layer: LayerReadOnly, Reason: "EXPLAIN is not allowed"}
	}

	prog, err := readProgram(&pc.capi, st)
	if err != nil {
		return nil, err
	}
	if err := db.checkCompiled(ctx, stmt, prog); err != nil {
		return nil, err
	}
	if j := pc.job; j != nil {
		j.grows.Store(programGrows(prog))
	}
	if db.at != nil {
		db.at("checked")
	}
	// A statement stopped while it was compiled or checked never starts:
	// the interrupt that stopped it is lost once its program starts.
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// From here SQLite must not compile anything: a compile now would be
	// SQLite re-preparing the statement (after a schema change by the
	// file's owner, say) into a program nobody checked. The authorizer
	// denies it, and the re-prepare count catches what it cannot.
	if !db.hooks.noSeal {
		pc.auth.seal()
	}
	defer pc.auth.unseal()
	if db.recompiledSince(pc, st) {
		return nil, recompiled()
	}
	if db.at != nil {
		db.at("run")
	}
	res, err := db.collect(ctx, pc, st, stmt, rows)
	if db.recompiledSince(pc, st) {
		return nil, recompiled()
	}
	return res, err
}

// recompiled is the refusal for a statement SQLite compiled again between
// the check of its program and its run.
func recompiled() *Refusal {
	return &Refusal{Layer: LayerReadOnly, Reason: "the database's schema changed while the statement ran; run it again"}
}

// recompiledSince reports whether SQLite has compiled st again since its
// program was checked, by either of two independent records: the sealed
// authorizer saw a compile, or the statement's re-prepare count moved.
func (db *DB) recompiledSince(pc *physConn, st uintptr) bool {
	return pc.auth.sealBroken() || !db.hooks.noRepreparedCheck && reprepared(pc, st)
}

// reprepared reports whether SQLite has compiled st again since it was
// prepared.
func reprepared(pc *physConn, st uintptr) bool {
	return sqlite3.Xsqlite3_stmt_status(pc.tls, st, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0) != 0
}

// prepare compiles sql on pc and returns the statement. The text must hold
// exactly one statement: anything but space and comments after it is
// refused.
func prepare(pc *capi, sql string) (uintptr, error) {
	tls := pc.tls
	z, err := libc.CString(sql)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(tls, z)
	out := tls.Alloc(16)
	defer tls.Free(16)
	// The length given includes the NUL, so SQLite need not copy the text.
	rc := sqlite3.Xsqlite3_prepare_v3(tls, pc.handle, z, int32(len(sql)+1), 0, out, out+8)
	st := *(*uintptr)(cMem(out))
	if rc != sqlite3.SQLITE_OK {
		if st != 0 {
			sqlite3.Xsqlite3_finalize(tls, st)
		}
		return 0, errorOf(pc, rc)
	}
	tail := *(*uintptr)(cMem(out + 8))
	if st == 0 || tail != 0 && len(scan(libc.GoString(tail)).stmts) > 0 {
		if st != 0 {
			sqlite3.Xsqlite3_finalize(tls, st)
		}
		return 0, &Refusal{Layer: LayerReadOnly, Reason: "only one statement may run at a time"}
	}
	return st, nil
}

// cMem returns p, an address of memory that SQLite or libc allocated (never
// Go), as a pointer. (Written this way, rather than as unsafe.Pointer(p),
// because vet cannot tell C memory from Go's.)
func cMem(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// cText returns the text of column i of st's current row, as a view of
// SQLite's memory valid until the next step: the caller copies what it keeps.
func cText(tls *libc.TLS, st uintptr, i int32) string {
	p := sqlite3.Xsqlite3_column_text(tls, st, i)
	n := sqlite3.Xsqlite3_column_bytes(tls, st, i)
	if p == 0 || n <= 0 {
		return ""
	}
	return unsafe.String((*byte)(cMem(p)), n)
}

// readProgram returns the program of st, a statement just prepared and
// not yet stepped: of every instruction the opcode's name, P1, P2, P3 and
// P5 (addr is the index; P4 and the comment no check reads). It reads the
// instructions where SQLite keeps them, the statement's own array (Vdbe.aOp,
// Vdbe.nOp), which is the program sqlite3_step then runs: the rows EXPLAIN
// would list for the same statement, field for field (sqlite3VdbeList
// copies each from there, naming the opcode by sqlite3OpcodeName, which
// opcodeNames mirrors), without a step, a formatted P4 and five C calls per
// instruction. EXPLAIN also lists the programs of triggers
// (P4_SUBPROGRAM), which a SELECT never has; a program that has one is
// refused here, and so is one with an opcode opcodeNames does not know.
//
// The program is read into the connection's own buffer (a program has
// hundreds of instructions, and a new slice for each statement made most of
// the safe path's garbage): it is valid until the next readProgram on the
// same connection, and a caller that keeps it longer copies it.
func readProgram(pc *capi, st uintptr) ([]instr, error) {
	v := (*sqlite3.TVdbe)(cMem(st))
	if v.FnOp < 0 || v.FnOp > 0 && v.FaOp == 0 {
		return nil, fmt.Errorf("roconn: query: a program of %d instructions at %#x", v.FnOp, v.FaOp)
	}
	var ops []sqlite3.TVdbeOp
	if v.FnOp > 0 {
		ops = unsafe.Slice((*sqlite3.TVdbeOp)(cMem(v.FaOp)), v.FnOp)
	}
	prog := pc.prog[:0]
	defer func() {
		if cap(prog) > 4096 { // an honest program has hundreds; do not keep a hostile one's megabytes
			prog = nil
		}
		pc.prog = prog[:0]
	}()
	for i := range ops {
		op := &ops[i]
		name := opcodeNames[op.Fopcode]
		switch {
		case name == "":
			return nil, &Refusal{Layer: LayerReadOnly, Reason: fmt.Sprintf("the statement's program uses an instruction sqlbot does not know (opcode %d)", op.Fopcode)}
		case op.Fp4type == sqlite3.P4_SUBPROGRAM:
			return nil, &Refusal{Layer: LayerReadOnly, Reason: fmt.Sprintf("the statement's program would write (%s runs a trigger program)", name)}
		}
		prog = append(prog, instr{Opcode: name, P1: int64(op.Fp1), P2: int64(op.Fp2), P3: int64(op.Fp3), P5: int64(op.Fp5)})
	}
	return prog, nil
}

// collect steps st and reads its rows into a Result: at most Rows rows (one
// more is read to know whether there are more, and then Query returns
// ErrRowLimit), and at most ResultBytes bytes, counted as values arrive and
// before each is copied (see Limits.ResultBytes). The number of columns was
// checked on the program. When out is not nil, each row is sent there as it
// is read, with the Result (SQL and columns) as its head, instead of being
// kept; a send waits for the reader, or for ctx, which ends when the
// statement is stopped.
//
// No row leaves before SQLite has been seen not to compile st again: a
// re-prepared statement runs a program nobody checked, so each row is
// looked at only after the re-prepare count and the sealed authorizer say
// it came from the checked one.
func (db *DB) collect(ctx context.Context, pc *physConn, st uintptr, stmt string, out chan<- streamed) (*Result, error) {
	tls := pc.tls
	n := sqlite3.Xsqlite3_column_count(tls, st)
	res := &Result{Columns: make([]string, n), Rows: [][]any{}}
	size := 0
	for i := range n {
		res.Columns[i] = libc.GoString(sqlite3.Xsqlite3_column_name(tls, st, i))
		size += len(res.Columns[i])
	}
	var head *Result
	if out != nil {
		res.Rows = nil
		head = &Result{SQL: stmt, Columns: res.Columns}
	}
	tooBig := func(more int) bool {
		size += more
		return size > db.lim.ResultBytes
	}
	count := 0
	for {
		switch rc := sqlite3.Xsqlite3_step(tls, st); rc {
		case sqlite3.SQLITE_DONE:
			return res, nil
		case sqlite3.SQLITE_ROW:
		default:
			return nil, errorOf(&pc.capi, rc)
		}
		if db.recompiledSince(pc, st) {
			return nil, recompiled()
		}
		if count == db.lim.Rows {
			res.Truncated = true
			return res, fmt.Errorf("%w (the first %d rows are returned)", ErrRowLimit, db.lim.Rows)
		}
		row := make([]any, n)
		for i := range n {
			switch sqlite3.Xsqlite3_column_type(tls, st, i) {
			case sqlite3.SQLITE_INTEGER:
				row[i] = sqlite3.Xsqlite3_column_int64(tls, st, i)
				if tooBig(8) {
					return nil, db.resultTooBig()
				}
			case sqlite3.SQLITE_FLOAT:
				row[i] = sqlite3.Xsqlite3_column_double(tls, st, i)
				if tooBig(8) {
					return nil, db.resultTooBig()
				}
			case sqlite3.SQLITE_TEXT:
				// TEXT comes back as stored, whatever the column's
				// declared type (DATE, DATETIME…).
				s := cText(tls, st, i)
				if tooBig(len(s)) {
					return nil, db.resultTooBig()
				}
				row[i] = string([]byte(s))
			case sqlite3.SQLITE_BLOB:
				var b []byte
				if p := sqlite3.Xsqlite3_column_blob(tls, st, i); p != 0 {
					b = unsafe.Slice((*byte)(cMem(p)), sqlite3.Xsqlite3_column_bytes(tls, st, i))
				}
				if utf8.Valid(b) {
					if tooBig(len(b)) {
						return nil, db.resultTooBig()
					}
					row[i] = string(b)
					continue
				}
				if tooBig(2*len(b) + 3) {
					return nil, db.resultTooBig()
				}
				row[i] = "x'" + hex.EncodeToString(b) + "'"
			}
		}
		count++
		if out == nil {
			res.Rows = append(res.Rows, row)
			continue
		}
		select {
		case out <- streamed{head: head, row: row}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// outOfMemory is the refusal for a statement that needed more memory than
// SQLite may use.
func (db *DB) outOfMemory() *Refusal {
	return &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf("the statement needed more memory than the limit of %s", byteSize(db.lim.Memory))}
}

// tempTooBig is the refusal for a statement whose temporary files would
// have held more than Limits.TempBytes.
func (db *DB) tempTooBig() *Refusal {
	return &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf("the statement needed more temporary disk space (for sorting or grouping) than the limit of %s", byteSize(db.lim.TempBytes))}
}

// resultTooBig is the refusal for a result over Limits.ResultBytes.
func (db *DB) resultTooBig() *Refusal {
	return &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf(
		"the result would be larger than the limit of %s; select fewer rows or columns, or shorter values", byteSize(int64(db.lim.ResultBytes)))}
}

// byteSize writes n bytes for a person: "8 MiB", "1.5 KiB", "200 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
