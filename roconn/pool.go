package roconn

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// grace is how long a caller waits, after interrupting a statement at its
// time limit, for SQLite to return before abandoning the statement. Control
// returns to the caller within the limit plus grace plus scheduling delay;
// Query promises the limit plus 100 ms.
const grace = 25 * time.Millisecond

// errClosed is returned by Query once the DB is closed.
var errClosed = errors.New("roconn: the database is closed")

// A pool holds the physical connections model SQL runs on. It is roconn's
// own rather than database/sql's because a statement must be stoppable from
// outside whatever SQLite is doing: each statement runs on its connection's
// own goroutine, while the caller waits for it, for the time limit, and for
// its context. (One goroutine per connection, for its whole life, rather
// than one per statement: SQLite's Go code runs deep, and a new goroutine
// would grow its stack from scratch, by copying, for every statement.)
//
// A slot is taken for each statement running; there are size of them, and a
// statement waits for one without its time limit running. A statement that
// does not return within grace of being interrupted is abandoned: its caller
// gets its refusal, and its goroutine closes the connection (never reused)
// once SQLite returns. An abandoned statement gives its slot back at once
// if fewer than maxStrays abandoned statements are still running; otherwise
// it keeps the slot until it ends, and new statements wait. So at most
// size + maxStrays statements ever run at once, and an abandoned statement
// costs at most the CPU of one SQLite call that does not check for
// interrupts (see the package doc).
type pool struct {
	open   func(context.Context) (*physConn, error)
	slots  chan struct{} // one token per statement holding a slot
	strays chan struct{} // one token per abandoned statement that gave its slot back

	mu       sync.Mutex
	idle     []*physConn
	running  map[*physConn]bool
	closed   bool
	watching bool // the memory watch runs (see watchMemory)
}

func newPool(size, maxStrays int, open func(context.Context) (*physConn, error)) *pool {
	return &pool{
		open:    open,
		slots:   make(chan struct{}, size),
		strays:  make(chan struct{}, maxStrays),
		running: map[*physConn]bool{},
	}
}

// interruptEvery is how often a stopped statement is interrupted again
// while it still runs (see pool.stop).
const interruptEvery = time.Millisecond

// A job is one statement running on a connection of its own.
type job struct {
	pc      *physConn
	done    chan struct{} // closed when res and err are set and pc is let go of
	started time.Time
	grows   atomic.Bool // its program keeps rows in memory (see programGrows)
	memStop atomic.Bool // the memory watch interrupted it

	// ctx is the work's context: the caller's, ended too when the job is
	// stopped. The work checks it between its phases and gives it to the
	// shadow compile.
	ctx     context.Context
	cancel  context.CancelFunc
	stopped atomic.Bool // stop was called

	mu        sync.Mutex
	abandoned bool // the caller gave up on it
	ended     bool // its goroutine finished
	stray     bool // abandoned, and holds a strays token instead of its slot
	res       *Result
	err       error
}

// start waits for a slot (bounded by ctx only) and a connection, and runs
// work on that connection on a goroutine of its own. work gets the job's
// context (see job.ctx).
func (p *pool) start(ctx context.Context, work func(context.Context, *physConn) (*Result, error)) (*job, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pc, err := p.take(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	j := &job{pc: pc, done: make(chan struct{}), started: time.Now()}
	j.ctx, j.cancel = context.WithCancel(ctx)
	pc.mu.Lock()
	pc.job = j
	pc.mu.Unlock()
	p.mu.Lock()
	if !p.watching {
		p.watching = true
		go p.watchMemory()
	}
	p.mu.Unlock()
	pc.work <- func() {
		res, err := work(j.ctx, pc)
		p.finish(j, res, err)
	}
	return j, nil
}

// serve is a connection's goroutine: it runs the connection's statements
// one after another until the connection is retired.
func serve(work <-chan func()) {
	for f := range work {
		f()
	}
}

// retire closes pc for good, and ends its goroutine once the statement it
// runs, if any, returns.
func retire(pc *physConn) {
	pc.Close()
	close(pc.work)
}

// take returns an idle connection, or opens one.
func (p *pool) take(ctx context.Context) (*physConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	if n := len(p.idle); n > 0 {
		pc := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.running[pc] = true
		p.mu.Unlock()
		return pc, nil
	}
	p.mu.Unlock()
	pc, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	pc.work = make(chan func(), 1)
	go serve(pc.work)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		retire(pc)
		return nil, errClosed
	}
	p.running[pc] = true
	return pc, nil
}

// finish runs on the job's goroutine when its work returns: it records the
// outcome, lets go of the connection (back to the pool, or closed if the job
// was abandoned or left the connection in a transaction), frees the job's
// slot or stray token, and then signals done.
func (p *pool) finish(j *job, res *Result, err error) {
	pc := j.pc
	pc.mu.Lock()
	pc.job = nil // no interrupt reaches pc from here on
	pc.mu.Unlock()

	j.mu.Lock()
	j.res, j.err, j.ended = res, err, true
	abandoned, stray := j.abandoned, j.stray
	j.mu.Unlock()

	j.cancel()
	// A stopped job's connection may hold an interrupt that arrived after
	// its last step, which would stop the next statement's compile.
	reuse := !abandoned && !j.stopped.Load() && sqlite3.Xsqlite3_get_autocommit(pc.tls, pc.handle) != 0
	p.mu.Lock()
	delete(p.running, pc)
	if reuse && !p.closed {
		p.idle = append(p.idle, pc)
	} else {
		reuse = false
	}
	p.mu.Unlock()
	if !reuse {
		retire(pc)
	}
	if stray {
		<-p.strays
	} else {
		<-p.slots
	}
	close(j.done)
}

// stop stops j: it ends the job's context, and interrupts the job now and
// again every interruptEvery until it ends. SQLite forgets an interrupt that
// arrives while no statement of the connection is running (while the
// statement is being compiled or checked, or between the check and its
// first step: SQLite clears the flag when a statement starts), so one
// interrupt is not enough; the work also looks at its context between its
// phases and never starts a program once it is done. Stopping a job twice
// does nothing more.
func (p *pool) stop(j *job) {
	if j.stopped.Swap(true) {
		return
	}
	j.cancel()
	go func() {
		tls := libc.NewTLS()
		defer tls.Close()
		tick := time.NewTicker(interruptEvery)
		defer tick.Stop()
		for {
			j.pc.interruptJob(tls, j)
			select {
			case <-j.done:
				return
			case <-tick.C:
			}
		}
	}()
}

// abandon gives up on j unless it has just ended, and reports whether it
// did. The job keeps running until SQLite returns; it gives its slot back
// now if a stray token is free.
func (p *pool) abandon(j *job) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended {
		return false
	}
	j.abandoned = true
	select {
	case p.strays <- struct{}{}:
		j.stray = true
		<-p.slots
	default:
	}
	return true
}

// close closes the idle connections and interrupts the running ones, which
// their goroutines close when they end. Statements that have not started
// get errClosed.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	var running []*physConn
	for pc := range p.running {
		running = append(running, pc)
	}
	p.mu.Unlock()
	for _, pc := range idle {
		retire(pc)
	}
	for _, pc := range running {
		pc.mu.Lock()
		j := pc.job
		pc.mu.Unlock()
		if j != nil {
			p.stop(j)
		}
	}
}

// The memory watch. SQLite's heap limit is process-wide: when a statement
// fills the heap, the next allocation fails, whichever statement makes it,
// and an honest statement running beside a hog can be the one. So while
// statements run, the pool looks at SQLite's heap, and when it is over 3/4
// of the limit, it interrupts one statement, refused for memory: among those
// that have not been stopped yet, one whose program keeps rows in memory (a
// sort, a temporary table) before one that does not, and of those the one
// that has run longest; and it waits for that one to end before it picks
// another. SQLite counts memory for the process, not per statement, so this
// is a judgement: a hog that started after a long honest sort is stopped
// second, after the honest one. The quarter of the heap left is the room the
// other statements have while the hog is being stopped (a hog that sorts 1
// KB rows fills 6 MB in under 5 ms). It looks every watchSlow while the heap
// is under half full (filling the next quarter takes a hog tens of
// milliseconds), and every watchFast above.
const (
	watchSlow = 10 * time.Millisecond
	watchFast = time.Millisecond
)

func (p *pool) watchMemory() {
	tls := libc.NewTLS()
	defer tls.Close()
	wait := watchSlow
	for {
		time.Sleep(wait)
		p.mu.Lock()
		if len(p.running) == 0 || p.closed {
			p.watching = false
			p.mu.Unlock()
			return
		}
		var jobs []*job
		stopping := false // a statement stopped for memory has not ended yet
		for pc := range p.running {
			pc.mu.Lock()
			if j := pc.job; j != nil {
				if j.memStop.Load() {
					stopping = true
				} else {
					jobs = append(jobs, j)
				}
			}
			pc.mu.Unlock()
		}
		p.mu.Unlock()
		used, limit := heapInUse(tls)
		wait = watchSlow
		if limit > 0 && used > limit/2 {
			wait = watchFast
		}
		if stopping || len(jobs) == 0 || limit <= 0 || used <= limit-limit/4 {
			continue
		}
		victim := slices.MinFunc(jobs, func(a, b *job) int {
			if ga, gb := a.grows.Load(), b.grows.Load(); ga != gb {
				if ga {
					return -1
				}
				return 1
			}
			return a.started.Compare(b.started)
		})
		victim.memStop.Store(true)
		p.stop(victim)
	}
}

// programGrows reports whether prog keeps rows in memory as it runs: a
// sorter, a temporary table or index, or an aggregate (group_concat and
// the like accumulate).
func programGrows(prog []instr) bool {
	for _, in := range prog {
		switch in.Opcode {
		case "SorterOpen", "OpenEphemeral", "OpenAutoindex", "AggStep", "AggStep1", "AggInverse":
			return true
		}
	}
	return false
}
