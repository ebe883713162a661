package bot

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"

	"sqlbot/agent/present"
)

// csvFileName is the name of the file a result's rows are attached as.
const csvFileName = "sqlbot-result.csv"

// csvFailedText says in a thread that the CSV promised could not be attached.
const csvFailedText = ":warning: I couldn't attach the CSV file with the rows, so the reply above shows only the first ones."

// toCSV writes the header and then the rows, as many as fit in maxBytes
// (all of them if maxBytes <= 0), and returns the bytes and how many rows
// they hold. A text cell that a spreadsheet would run as a formula (=, +, -,
// @, tab, CR at the start) is prefixed with ' (OWASP's advice on CSV
// injection); numbers are written as they are.
func toCSV(cols []string, rows [][]any, maxBytes int) ([]byte, int) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rec := make([]string, len(cols))
	for j, c := range cols {
		rec[j] = defuseFormula(c)
	}
	_ = w.Write(rec) // a bytes.Buffer does not fail
	w.Flush()
	if maxBytes > 0 && buf.Len() > maxBytes {
		return nil, 0
	}
	n := 0
	for _, row := range rows {
		for j := range cols {
			var v any
			if j < len(row) {
				v = row[j]
			}
			s := present.Exact(v)
			if !present.IsNumber(v) {
				s = defuseFormula(s)
			}
			rec[j] = s
		}
		before := buf.Len()
		_ = w.Write(rec)
		w.Flush()
		if maxBytes > 0 && buf.Len() > maxBytes {
			buf.Truncate(before)
			break
		}
		n++
	}
	return buf.Bytes(), n
}

func defuseFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// csvPromise is what a reply says of its CSV of inCSV of rows rows.
func csvPromise(rows, inCSV int, truncated bool, maxCSV int) string {
	switch {
	case inCSV < rows:
		return "the first " + strconv.Itoa(inCSV) + " in the CSV below, which is limited to " + present.Size(maxCSV)
	case truncated:
		return "all " + strconv.Itoa(rows) + " fetched in the CSV below"
	}
	return "all in the CSV below"
}

// csvTitle is the CSV file's title.
func csvTitle(rows, inCSV int, truncated bool) string {
	switch {
	case inCSV < rows:
		return "The first " + strconv.Itoa(inCSV) + " of " + present.Plural(rows, "row") + " of the result (the file size limit)"
	case truncated:
		return "The first " + present.Plural(rows, "row") + " of the result (the row limit)"
	}
	return "All " + present.Plural(rows, "row") + " of the result"
}
