package sessions

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"sync"
)

// Checkpoints beside the commits. In WAL mode a commit appends its pages
// to the -wal file, and a checkpoint copies them into the database file
// (and syncs both, synchronous NORMAL). SQLite checkpoints on the
// connection that commits, once the WAL holds 1,000 pages: a GPU lane's
// 102,400 results are 20 MB, so the commit of the last lane copied 20 MB
// and synced it before the parity report could go in, time a GPU study
// waited for. The Writer's connections (the committer's, Finish's) commit
// with the automatic checkpoint off, and a checkpointer copies on a
// connection of its own, while the next batch or the parity report is
// written (a passive checkpoint never blocks a writer; a crash in the
// middle of one loses nothing committed). Finish asks for one more after
// its commit, which runs while the front end writes its report; Close
// waits for it, and SQLite's checkpoint on Close then finds little left.

// checkpointBytes is how much a writer commits between two checkpoints:
// about SQLite's automatic 1,000 pages of 4 kB.
const checkpointBytes = 4 << 20

// checkpointer runs passive checkpoints of db, one each time it is asked,
// on its own goroutine and connection, until it is closed: then it runs
// the one asked for last, if it has not started, and returns (Store.Close
// waits for it).
type checkpointer struct {
	poke chan struct{} // a checkpoint asked for (one waits at most)
	quit chan struct{}
	once sync.Once
}

// startCheckpointer starts the checkpointer of a writer of s.
func (s *Store) startCheckpointer() *checkpointer {
	c := &checkpointer{poke: make(chan struct{}, 1), quit: make(chan struct{})}
	s.ckptMu.Lock()
	if s.ckpts == nil {
		s.ckpts = map[*checkpointer]bool{}
	}
	s.ckpts[c] = true
	s.ckptMu.Unlock()
	s.bg.Go(func() {
		ctx := context.Background()
		var conn *sql.Conn
		defer func() {
			if conn != nil {
				conn.Close()
			}
			s.ckptMu.Lock()
			delete(s.ckpts, c)
			s.ckptMu.Unlock()
		}()
		run := func() {
			if conn == nil {
				var err error
				if conn, err = s.db.Conn(ctx); err != nil {
					conn = nil
					return // the next commit's or Close's checkpoint copies the pages
				}
			}
			// Busy (another process's checkpoint) or failed: the next one,
			// or Close's, copies those pages.
			_, _ = conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
		for {
			select {
			case <-c.poke:
				run()
			case <-c.quit:
				select {
				case <-c.poke:
					run()
				default:
				}
				return
			}
		}
	})
	return c
}

// ask asks for a checkpoint (none more when one is waiting already).
func (c *checkpointer) ask() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// close lets the checkpointer return once the checkpoint it runs, and the
// one asked for before close, are done. It does not wait.
func (c *checkpointer) close() { c.once.Do(func() { close(c.quit) }) }

// noAutoCheckpoint turns off conn's automatic checkpoint (its commits
// leave the copying to a checkpointer) and returns what turns it back on
// as it was, before conn goes back to the pool. When the setting cannot be
// read or changed, conn checkpoints as before.
func noAutoCheckpoint(ctx context.Context, conn *sql.Conn) (restore func()) {
	var pages int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil || pages <= 0 {
		return func() {}
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		return func() {}
	}
	return func() {
		if _, err := conn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = `+strconv.Itoa(pages)); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // not back to the pool without it
		}
	}
}
