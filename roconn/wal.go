package roconn

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A walFacts is what decides whether roconn may read a WAL-mode database:
// who runs, who owns the file, and what SQLite would have to create.
type walFacts struct {
	wal        bool // the file is in WAL mode (its header says so)
	euid       int  // the effective user roconn runs as; -1 where unknown
	owner      int  // the file's owner; -1 where unknown
	walExists  bool // PATH-wal exists
	shmExists  bool // PATH-shm exists
	dirCreates bool // roconn may create files in the file's directory
}

// checkWAL decides whether reading the database at path could change what
// its owner can do, and returns an error that says so, and what to do, if it
// could.
//
// A reader of a WAL-mode database uses two files beside it, PATH-wal and
// PATH-shm, and creates them when they are missing (nothing has the database
// open): even on a read-only connection, SQLite opens them to create. A file
// created by another user belongs to that user, so the owner's application
// can no longer open it to write, and its next write fails. So:
//
//   - Running as the file's owner, or as root (SQLite then gives the files
//     it creates to the database's owner), whatever SQLite creates is the
//     owner's own: reading is safe. If nothing had the database open, SQLite
//     leaves an empty -wal and a -shm behind, as every reader does.
//   - Running as another user that may create files in the directory,
//     reading is not safe: refused.
//   - Running as another user that may not, reading goes through the
//     owner's files when they exist (the owner's application has the
//     database open); when they do not, SQLite cannot read it: refused.
//
// A database in rollback-journal mode never needs a file created to be read.
func checkWAL(path string) error {
	facts, err := walFactsOf(path)
	if err != nil {
		return err
	}
	return facts.verdict(path)
}

func (f walFacts) verdict(path string) error {
	if !f.wal || f.euid == 0 || f.euid == f.owner || f.euid < 0 || f.owner < 0 {
		return nil
	}
	copyHint := fmt.Sprintf("give sqlbot a copy to read instead (sqlite3 %s \".backup /somewhere/copy.db\"), or run it as the file's owner", path)
	if f.dirCreates {
		return fmt.Errorf("the database is in WAL mode and belongs to user %d, and sqlbot runs as user %d in a directory it may write: "+
			"reading it could create its -wal and -shm files owned by user %d, and the owner's application could then no longer write; "+
			"make the directory read-only for user %d, or %s", f.owner, f.euid, f.euid, f.euid, copyHint)
	}
	if !f.walExists || !f.shmExists {
		return fmt.Errorf("the database is in WAL mode and nothing has it open, so its -wal and -shm files are missing, "+
			"and SQLite cannot read it without creating them, which user %d may not do in its directory; %s", f.euid, copyHint)
	}
	return nil
}

// walFactsOf reads the database header and looks at the files beside it.
func walFactsOf(path string) (walFacts, error) {
	f := walFacts{euid: -1, owner: -1}
	file, err := os.Open(path)
	if err != nil {
		return f, err
	}
	defer file.Close()
	var hdr [20]byte
	if _, err := io.ReadFull(file, hdr[:]); err != nil {
		return f, nil // too short to be a WAL database: SQLite says what it is
	}
	// Bytes 18 and 19 are the file format write and read versions: 2 is WAL.
	f.wal = string(hdr[:16]) == "SQLite format 3\x00" && (hdr[18] == 2 || hdr[19] == 2)
	if !f.wal {
		return f, nil
	}
	fi, err := file.Stat()
	if err != nil {
		return f, err
	}
	f.euid, f.owner = os.Geteuid(), ownerOf(fi)
	f.walExists = exists(path + "-wal")
	f.shmExists = exists(path + "-shm")
	f.dirCreates = mayCreateIn(filepath.Dir(path))
	return f, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
