package roconn

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
)

// ResultChecksum returns the hex SHA-256 of a query's result: its column
// names, then its rows in order, each value hashed with its storage class
// as Checksum hashes a table's (so "3" and 3 differ). Values are those
// Query returns: nil, int64, float64, string or []byte; anything else is an
// error. It identifies what an answer showed, so that the same question can
// later be seen to give the same rows, or not.
func ResultChecksum(columns []string, rows [][]any) (string, error) {
	h := sha256.New()
	writeLen(h, uint64(len(columns)))
	for _, c := range columns {
		writeTagged(h, 'C', []byte(c))
	}
	for _, row := range rows {
		h.Write([]byte{'R'})
		writeLen(h, uint64(len(row)))
		for _, v := range row {
			if err := hashValue(h, v); err != nil {
				return "", fmt.Errorf("roconn: result checksum: %w", err)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashValue writes v with its storage class (a tag) and, for text and
// blobs, its length, so that values of different classes or split
// differently never hash alike.
func hashValue(h hash.Hash, v any) error {
	var b [8]byte
	switch x := v.(type) {
	case nil:
		h.Write([]byte{'N'})
	case int64:
		binary.BigEndian.PutUint64(b[:], uint64(x))
		writeTagged(h, 'I', b[:])
	case float64:
		binary.BigEndian.PutUint64(b[:], math.Float64bits(x))
		writeTagged(h, 'F', b[:])
	case string:
		writeTagged(h, 'S', []byte(x))
	case []byte:
		writeTagged(h, 'B', x)
	default:
		return fmt.Errorf("unexpected value type %T", v)
	}
	return nil
}

// writeTagged writes a type tag, the length of p and p.
func writeTagged(h hash.Hash, tag byte, p []byte) {
	h.Write([]byte{tag})
	writeLen(h, uint64(len(p)))
	h.Write(p)
}

func writeLen(h hash.Hash, n uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	h.Write(b[:])
}
