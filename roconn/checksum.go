package roconn

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"strings"

	"modernc.org/sqlite"
)

// Checksum returns the hex SHA-256 of every row of every table in the SQLite
// file at path, private tables and the schema table included, for comparing a
// database before and after something that must not write to it.
//
// Tables are taken in name order (byte-wise), rows in rowid order (primary
// key order for WITHOUT ROWID tables), and each value is hashed with its
// storage class and length, so "1" and 1, or "ab"+"c" and "a"+"bc", differ.
// Virtual tables are skipped; the real tables that hold their data are not.
// The file is opened read-only (mode=ro), through a driver of Checksum's own,
// with no policy: Checksum is for the operator and the evaluation, never for
// model SQL.
func Checksum(ctx context.Context, path string) (string, error) {
	dsn, err := fileDSN(path)
	if err != nil {
		return "", fmt.Errorf("roconn: checksum %s: %w", path, err)
	}
	pool := sql.OpenDB(&plainConnector{driver: &sqlite.Driver{}, dsn: dsn})
	defer pool.Close()
	pool.SetMaxOpenConns(1)
	conn, err := pool.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("roconn: checksum %s: %w", path, err)
	}
	defer conn.Close()
	sum, err := checksum(ctx, conn)
	if err != nil {
		return "", fmt.Errorf("roconn: checksum %s: %w", path, err)
	}
	return sum, nil
}

// plainConnector opens connections through a private driver with no hooks.
type plainConnector struct {
	driver *sqlite.Driver
	dsn    string
}

func (c *plainConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.driver.Open(c.dsn)
}

func (c *plainConnector) Driver() driver.Driver { return c.driver }

type tableInfo struct {
	name       string
	withoutRow bool
}

func checksum(ctx context.Context, conn *sql.Conn) (string, error) {
	// All reads in one transaction, so they see one version of the file.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'shadow')`)
	if err != nil {
		return "", err
	}
	var tables []tableInfo
	for rows.Next() {
		var t tableInfo
		if err := rows.Scan(&t.name, &t.withoutRow); err != nil {
			rows.Close()
			return "", err
		}
		tables = append(tables, t)
	}
	if err := closeRows(rows); err != nil {
		return "", err
	}
	slices.SortFunc(tables, func(a, b tableInfo) int { return strings.Compare(a.name, b.name) })

	h := sha256.New()
	for _, t := range tables {
		if err := hashTable(ctx, tx, h, t); err != nil {
			return "", fmt.Errorf("table %q: %w", t.name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashTable(ctx context.Context, tx *sql.Tx, h hash.Hash, t tableInfo) error {
	type col struct {
		name string
		pk   int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, pk FROM pragma_table_xinfo(?) ORDER BY cid`, t.name)
	if err != nil {
		return err
	}
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.name, &c.pk); err != nil {
			rows.Close()
			return err
		}
		cols = append(cols, c)
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	// "+col" is an expression, so the driver sees no declared type and hands
	// back TEXT as it is stored (it would parse a DATE column's text to a
	// time.Time otherwise); the value and its storage class are unchanged.
	var sel, order []string
	names := map[string]bool{}
	for _, c := range cols {
		sel = append(sel, "+"+quoteIdent(c.name))
		names[fold(c.name)] = true
	}
	if t.withoutRow {
		pks := slices.Clone(cols)
		pks = slices.DeleteFunc(pks, func(c col) bool { return c.pk == 0 })
		slices.SortFunc(pks, func(a, b col) int { return int(a.pk - b.pk) })
		for _, c := range pks {
			order = append(order, quoteIdent(c.name))
		}
	} else {
		for _, alias := range []string{"rowid", "oid", "_rowid_"} {
			if !names[alias] { // a column can shadow the rowid's names
				order = []string{alias}
				break
			}
		}
	}
	if len(order) == 0 { // no way to name the key: order by every value
		for i := range cols {
			order = append(order, fmt.Sprint(i+1))
		}
	}
	if len(sel) == 0 {
		return nil
	}

	writeTagged(h, 'T', []byte(t.name))
	writeLen(h, uint64(len(cols)))
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + quoteIdent(t.name) + " ORDER BY " + strings.Join(order, ", ")
	rows, err = tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return err
		}
		h.Write([]byte{'R'})
		for _, v := range vals {
			if err := hashValue(h, v); err != nil {
				rows.Close()
				return err
			}
		}
	}
	return closeRows(rows)
}
