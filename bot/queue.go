package bot

import "sync"

// A fifo hands out a fixed number of slots strictly in the order they were
// asked for: a question that arrives first is worked on first, and none is
// dropped. It is safe for concurrent use.
type fifo struct {
	mu      sync.Mutex
	free    int
	waiting []chan struct{} // reservations not yet granted, oldest first
}

func newFIFO(slots int) *fifo { return &fifo{free: slots} }

// reserve takes a place in line. The returned channel is closed when the
// slot is granted; the holder must then call release, or cancel to leave.
func (f *fifo) reserve() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if f.free > 0 && len(f.waiting) == 0 {
		f.free--
		close(ch)
		return ch
	}
	f.waiting = append(f.waiting, ch)
	return ch
}

// release gives a granted slot to the next in line.
func (f *fifo) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiting) > 0 {
		close(f.waiting[0])
		f.waiting[0] = nil
		f.waiting = f.waiting[1:]
		return
	}
	f.free++
}

// cancel leaves the line: a reservation still waiting is removed, and one
// already granted is released.
func (f *fifo) cancel(ch chan struct{}) {
	f.mu.Lock()
	for i, w := range f.waiting {
		if w == ch {
			f.waiting = append(f.waiting[:i:i], f.waiting[i+1:]...)
			f.mu.Unlock()
			return
		}
	}
	f.mu.Unlock()
	f.release()
}

// queued is the number of reservations waiting for a slot.
func (f *fifo) queued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiting)
}
