package output

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"sweepbench/engine"
)

// RewindableWriter is an output a RowWriter can start over on (a file):
// when what it streamed turns out not to be the report (a lane that
// stopped early), it truncates the output and writes it again.
//
// It is read back too (io.ReaderAt) when only the status of a run's rows
// turns out wrong and the report's results were not kept (see RowWriter).
type RewindableWriter interface {
	io.Writer
	io.Seeker
	io.ReaderAt
	Truncate(size int64) error
}

// RowWriter writes a study's per-combo results file while the study runs:
// its Sink (StudyOptions.Sink) takes each completed chunk, and a goroutine
// of its own writes the rows, so the sweep's lanes never wait on the
// disk unless the writer falls behind by rowWriterQueue chunks. Close,
// given the finished report, ends the file.
//
// Order. The file is exactly what Report.WriteRows writes from the
// finished report (the same bytes for CSV and JSON lines, the same rows
// for Parquet): each run's rows in grid order, the runs in the order they
// ran (fp64 then fp32). Sweep hands chunks over in completion order, which
// on several lanes is not grid order: a chunk that arrives ahead of its
// turn waits in a reorder buffer (references to the sweep's own result
// slices, which it keeps anyway: no copy) until the chunks before it have
// come. It holds the chunks completed out of turn: a few per lane on the
// CPU reference (chunks of two combos handed out in order); on GPUs, whose
// lanes each take one share of the grid, up to the other lanes' shares,
// which the sweep holds in one slice anyway.
//
// Rows are written optimistically with status "complete", the only status
// a run that goes on to its end can have. A run's status is known only
// when it ends: when the report disagrees with what was streamed (a lane
// cancelled or failed, holes left by it, results that did not come through
// the sink such as a resumed session's saved ones), Close truncates the
// output and writes it again from the report, so the file is always the
// report's. When the report kept no results (StudyOptions.Discard) the file
// is all there is: Close then rewrites the lane fields (status, and backend
// and the like should they differ) of the rows streamed, read back from
// the output (see relabel), so that the file still says what the report
// and `sessions export` say. Only a study that stopped early pays for it.
type RowWriter struct {
	out    RewindableWriter
	format RowFormat
	study  *engine.Study
	enc    rowEncoder
	queue  chan streamChunk
	done   chan struct{}
	// queued counts the rows in queue, which Sink bounds by
	// rowWriterQueueRows (room says when there is room again).
	qmu    sync.Mutex
	room   *sync.Cond
	queued int
	// free holds the chunks written, for Results to hand out again;
	// nil until Results is asked for.
	free chan []engine.ComboResult

	// Owned by the writing goroutine until done is closed.
	lanes   []streamLane
	pending map[int][]engine.ComboResult // chunks ahead of their turn, by first index
	err     error
}

type streamChunk struct {
	p  engine.Precision
	rs []engine.ComboResult
}

type streamLane struct {
	rowLane
	next  int  // the grid index the next row must have
	rows  int  // rows written
	stray bool // a chunk out of any order (overlap, left waiting): not the report
}

// rowWriterQueue is how many chunks the sink queues for the writer, and
// rowWriterQueueRows how many rows at most (a chunk is always taken when
// none is queued): 2^18 results are 56 MB, half a GPU chunk with its
// HMA3 twins (cuda's maxChunk; two of the pieces a lane hands a
// recycling writer, engine's resultsPiece), so that a lane ahead of the
// writer waits for it rather than queue the grid's results in memory,
// and the writer still has the next piece at hand when it finishes one. The chunks
// waiting in the reorder buffer (pending) are not counted: the chunk that
// frees them may be the next one queued.
const (
	rowWriterQueue     = 16
	rowWriterQueueRows = 1 << 18
	rowWriterFree      = 2 // chunks written kept for Results
)

// NewRowWriter starts a RowWriter of format f for study s on out. Give its
// Sink to RunStudy (StudyOptions.Sink) and call Close with the report once
// RunStudy has returned, also when it failed.
func NewRowWriter(out RewindableWriter, f RowFormat, s *engine.Study) (*RowWriter, error) {
	enc, err := newRowEncoder(out, f, settingsOf(s.Dataset.Info, s.Params), s.Grid)
	if err != nil {
		return nil, err
	}
	w := &RowWriter{out: out, format: f, study: s, enc: enc, queue: make(chan streamChunk, rowWriterQueue),
		done: make(chan struct{}), pending: map[int][]engine.ComboResult{}}
	w.room = sync.NewCond(&w.qmu)
	go w.loop()
	return w, nil
}

// Sink queues a completed chunk of precision p for writing. It never
// fails: a write error stops the writing, not the study, and Close
// returns it. The chunk's slice is read later, so it must not change
// (Sweep never reuses one). Not to be called after Close.
func (w *RowWriter) Sink(p engine.Precision, rs []engine.ComboResult) error {
	if len(rs) > 0 {
		w.qmu.Lock()
		for w.queued > 0 && w.queued+len(rs) > rowWriterQueueRows {
			w.room.Wait()
		}
		w.queued += len(rs)
		w.qmu.Unlock()
		w.queue <- streamChunk{p, rs}
	}
	return nil
}

// Results returns a results slice of n combos for the study's lanes
// (StudyOptions.Results): one the writer has written, when one of that
// size is free, else a new one. Asking for it makes the writer keep the
// chunks it has written for it: only when the writer is the last to
// hold the chunks the sink hands it (no other sink keeps them).
func (w *RowWriter) Results(n int) []engine.ComboResult {
	w.qmu.Lock()
	if w.free == nil {
		w.free = make(chan []engine.ComboResult, rowWriterFree)
	}
	free := w.free
	w.qmu.Unlock()
	select {
	case rs := <-free:
		if cap(rs) >= n {
			return rs[:n]
		}
	default:
	}
	return make([]engine.ComboResult, n)
}

// recycle keeps chunk rs, written, for Results (when asked for and
// there is room).
func (w *RowWriter) recycle(rs []engine.ComboResult) {
	w.qmu.Lock()
	free := w.free
	w.qmu.Unlock()
	if free != nil {
		select {
		case free <- rs:
		default:
		}
	}
}

func (w *RowWriter) loop() {
	defer close(w.done)
	for c := range w.queue {
		w.qmu.Lock()
		w.queued -= len(c.rs)
		w.room.Broadcast()
		w.qmu.Unlock()
		if w.err == nil {
			if err := w.take(c); err != nil {
				w.err = err
			}
		}
	}
}

// take writes a chunk when its turn has come, then the waiting chunks
// whose turn follows; it keeps a chunk ahead of its turn.
func (w *RowWriter) take(c streamChunk) error {
	if len(w.lanes) == 0 || w.lanes[len(w.lanes)-1].precision != c.p {
		if len(w.lanes) > 0 && len(w.pending) > 0 {
			// The last lane ended with holes: not the report's rows.
			w.lanes[len(w.lanes)-1].stray = true
			clear(w.pending)
		}
		be, err := w.study.BackendFor(c.p)
		if err != nil {
			return err
		}
		form := w.study.WMA
		if c.p == engine.FP64 {
			form = engine.Direct
		}
		w.lanes = append(w.lanes, streamLane{rowLane: rowLane{precision: c.p, backend: be.Name(), wma: form, status: engine.StatusComplete}})
		if err := w.enc.lane(w.lanes[len(w.lanes)-1].rowLane); err != nil {
			return err
		}
	}
	l := &w.lanes[len(w.lanes)-1]
	first := c.rs[0].Index
	switch {
	case first > l.next:
		w.pending[first] = c.rs
		return nil
	case first < l.next:
		l.stray = true
		return nil
	}
	for rs := c.rs; rs != nil; {
		if err := w.enc.rows(rs); err != nil {
			return err
		}
		w.recycle(rs)
		l.next += len(rs)
		l.rows += len(rs)
		if rs = w.pending[l.next]; rs != nil {
			delete(w.pending, l.next)
		}
	}
	return nil
}

// Close ends the file for rep, the report RunStudy returned (nil when it
// returned none: the output is then left as it is, for the caller to
// drop). When rep's rows are not what was streamed (see RowWriter), the
// output is truncated and rep is written again. A write error, during the
// run or now, is returned (wrapped); the caller drops the file then.
func (w *RowWriter) Close(rep *engine.Report) error {
	close(w.queue)
	<-w.done
	if w.err != nil {
		return w.err
	}
	if rep == nil {
		return errors.New("no report to write")
	}
	if w.streamed(rep) {
		return w.enc.finish(rep)
	}
	if rep.Kept() != nil {
		// Results not kept (StudyOptions.Discard): the file is all there
		// is. A study that stopped part way left chunks waiting for their
		// turn: they go last, in index order, so nothing computed is lost.
		firsts := make([]int, 0, len(w.pending))
		for f := range w.pending {
			firsts = append(firsts, f)
		}
		sort.Ints(firsts)
		for _, f := range firsts {
			if err := w.enc.rows(w.pending[f]); err != nil {
				return err
			}
		}
		clear(w.pending)
		if err := w.enc.finish(rep); err != nil {
			return err
		}
		if err := w.relabel(rep); err != nil {
			return fmt.Errorf("rewriting the results' status: %w", err)
		}
		return nil
	}
	if _, err := w.out.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewriting the results: %w", err)
	}
	if err := w.out.Truncate(0); err != nil {
		return fmt.Errorf("rewriting the results: %w", err)
	}
	return WriteRows(w.out, rep, w.format)
}

// streamed reports whether the rows written are exactly rep's: the same
// runs in order, each complete, every one of its results written (in grid
// order from index 0, so the same rows) and nothing left waiting.
func (w *RowWriter) streamed(rep *engine.Report) bool {
	if len(w.pending) > 0 {
		return false
	}
	var runs []*engine.Run
	for _, run := range rep.Runs {
		if run.Count() > 0 {
			runs = append(runs, run)
		}
	}
	if len(runs) != len(w.lanes) {
		return false
	}
	for i, run := range runs {
		l := w.lanes[i]
		if l.stray || l.rowLane != laneOf(run) || l.rows != run.Count() {
			return false
		}
	}
	return true
}
