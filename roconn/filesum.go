package roconn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
)

// FileChecksumOf says what FileChecksum hashes, for reports.
const FileChecksumOf = "sha256 of the database file's bytes, then of its -wal file's (when not empty)"

// FileChecksum returns the hex SHA-256 of the SQLite file at path and of its
// write-ahead log (path+"-wal"), when there is one that is not empty, each
// framed by its name and length, read in one streaming pass: for comparing a
// database before and after something that must not write to it, at the
// cost of reading the file once (Checksum reads every row through SQLite).
//
// Every write to the database, by any connection, changes the main file or
// the -wal, so it changes the sum. Reading does not: roconn's connections
// are read-only and never checkpoint, and the -shm file (shared memory for
// readers, which they do write) is not hashed, nor is an empty -wal that a
// reader may create. A sum can change without a change of content (the
// owner's checkpoint moves the -wal's pages into the file; VACUUM moves
// rows): it is a witness that nothing wrote, not a hash of the contents.
// ctx is checked between blocks.
func FileChecksum(ctx context.Context, path string) (string, error) {
	h := sha256.New()
	if err := hashFile(ctx, h, "db", path, false); err != nil {
		return "", fmt.Errorf("roconn: checksum %s: %w", path, err)
	}
	if err := hashFile(ctx, h, "wal", path+"-wal", true); err != nil {
		return "", fmt.Errorf("roconn: checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes name, the file's length and its bytes to h. With optional,
// a missing or empty file adds nothing.
func hashFile(ctx context.Context, h hash.Hash, name, path string, optional bool) error {
	f, err := os.Open(path)
	if optional && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if optional && fi.Size() == 0 {
		return nil
	}
	h.Write([]byte(name + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00"))
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
