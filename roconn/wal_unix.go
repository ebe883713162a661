//go:build unix

package roconn

import (
	"os"
	"syscall"
)

// ownerOf returns the user id that owns fi's file, or -1.
func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// mayCreateIn reports whether this process may create files in dir, as the
// kernel decides (root may, whatever the permissions say).
func mayCreateIn(dir string) bool {
	const wOK, xOK = 2, 1
	return syscall.Access(dir, wOK|xOK) == nil
}
