package sessions

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"sweepbench/engine"
)

// A run's results are stored a batch at a time (schema v8): one row of
// result_batches per batch the writer commits, per precision, holding the
// batch's rows as one blob. Until v7 every combo was a row of the results
// table, and a row of SQL cost about 4 us of CPU to insert in the pure-Go
// SQLite (binding 18 values, a B-tree insert): at a GPU's million combos a
// second, saving took seconds for every second of sweep. A blob of a
// batch costs SQLite about what one row did, and encoding it well under a
// microsecond a combo (docs/PERFORMANCE.md, "Saving beside the sweep").
//
// The blob, format version 2 (batchVersion):
//
//	byte 0      the version, 2
//	uvarint     n, the rows (at least 1; result_batches.rows)
//	n uvarints  the rows' grid indices, strictly ascending (from
//	            result_batches.first_idx to last_idx): the first as it is,
//	            each next one as its distance from the one before less 1
//	            (0 for the next combo)
//	24 columns  the metrics of engine.MetricNames in order, n values each:
//	            a float metric as its float64 bits, 8 bytes little-endian
//	            (NaN payloads, -0 and ±Inf kept bit for bit); a count
//	            (total_trades, long_bars, short_bars, flat_bars) as the
//	            zigzag varint of its int64 value (binary.AppendVarint)
//
// and nothing after. A combo's lengths (hma, hma3) are not stored: they are
// the run's grid at the index.
//
// Format version 1 (every batch saved before SPEC Part 2's metrics) is
// version 2 with the first 14 columns only (total_return to flat_bars,
// v1Columns): it is still read, its rows' Part 2 metrics (profit_factor
// to max_drawdown_bars) NaN, "not computed", as a GPU lane leaves the
// trade metrics. The writer writes version 2 only.
//
// The blob is not compressed. A metric's low mantissa bytes are noise, and
// zstd at its fastest level (klauspost/compress) took 1% off a batch of
// 512 real rows (btcusdt, the reference backend) for twice the time of
// encoding it (BenchmarkBatchEncode: about 89 B and 70 ns a row raw, 88 B
// and 150 ns compressed, at version 1's 14 columns); on batches of 512 to
// 4,096, with the float columns'
// bytes shuffled (high bytes together), an experiment got 17% off for
// several times the encoding's CPU, more than writing those bytes costs
// SQLite (about 4 ns a byte through the WAL and its checkpoint). A
// compressed or otherwise changed format takes a new version byte; the
// older ones stay readable.
const batchVersion = 2

// v1Columns is how many of resultColumns a version 1 blob holds (and the
// results table of schema v1 to v7 had): Part 1's 14 metrics.
const v1Columns = 14

// maxBlobRows bounds the rows of one blob: a part of a batch larger than
// this (a GPU's chunk) is stored as several of about 360 kB. Blobs of a
// GPU's 16,384 rows (1.4 MB) cost SQLite more CPU a row: the gpu case of
// BenchmarkStudySaving took a median 2.2 CPU-seconds with them, 1.6 with
// four of 4,096 each; blobs of 1,024 cost what blobs of 4,096 do.
const maxBlobRows = 1 << 12

// minRowBytes is the least a row takes in a blob of the current version:
// an index, the float metrics and the counts at a byte each. A blob
// shorter than its rows need is refused before anything is allocated for
// them (minRowBytesOf for a blob of cols columns).
var minRowBytes = minRowBytesOf(len(resultColumns))

// minRowBytesOf is minRowBytes for a blob of the first cols of
// resultColumns.
func minRowBytesOf(cols int) int {
	n := 1
	for _, c := range resultColumns[:cols] {
		if c.float != nil {
			n += 8
		} else {
			n++
		}
	}
	return n
}

// resultColumns are a row's metrics in engine.MetricNames order
// (TestResultColumnsAreMetricNames checks it), read and written through
// the fields: Metrics.Value looks each name up in a map, and 24 lookups a
// row cost more than encoding it. The first v1Columns are version 1's.
var resultColumns = [...]struct {
	name  string
	float func(*engine.Metrics) *float64 // a float metric
	count func(*engine.Metrics) *int     // or a count
}{
	{name: "total_return", float: func(m *engine.Metrics) *float64 { return &m.TotalReturn }},
	{name: "cagr", float: func(m *engine.Metrics) *float64 { return &m.CAGR }},
	{name: "sharpe", float: func(m *engine.Metrics) *float64 { return &m.Sharpe }},
	{name: "sortino", float: func(m *engine.Metrics) *float64 { return &m.Sortino }},
	{name: "max_drawdown", float: func(m *engine.Metrics) *float64 { return &m.MaxDrawdown }},
	{name: "calmar", float: func(m *engine.Metrics) *float64 { return &m.Calmar }},
	{name: "win_rate", float: func(m *engine.Metrics) *float64 { return &m.WinRate }},
	{name: "total_trades", count: func(m *engine.Metrics) *int { return &m.TotalTrades }},
	{name: "var_95", float: func(m *engine.Metrics) *float64 { return &m.VaR95 }},
	{name: "cvar_95", float: func(m *engine.Metrics) *float64 { return &m.CVaR95 }},
	{name: "omega", float: func(m *engine.Metrics) *float64 { return &m.Omega }},
	{name: "long_bars", count: func(m *engine.Metrics) *int { return &m.LongBars }},
	{name: "short_bars", count: func(m *engine.Metrics) *int { return &m.ShortBars }},
	{name: "flat_bars", count: func(m *engine.Metrics) *int { return &m.FlatBars }},
	// SPEC Part 2 "New metrics" (format version 2 on)
	{name: "profit_factor", float: func(m *engine.Metrics) *float64 { return &m.ProfitFactor }},
	{name: "expectancy", float: func(m *engine.Metrics) *float64 { return &m.Expectancy }},
	{name: "avg_win", float: func(m *engine.Metrics) *float64 { return &m.AvgWin }},
	{name: "avg_loss", float: func(m *engine.Metrics) *float64 { return &m.AvgLoss }},
	{name: "best_trade", float: func(m *engine.Metrics) *float64 { return &m.BestTrade }},
	{name: "worst_trade", float: func(m *engine.Metrics) *float64 { return &m.WorstTrade }},
	{name: "avg_trade_bars", float: func(m *engine.Metrics) *float64 { return &m.AvgTradeBars }},
	{name: "exposure", float: func(m *engine.Metrics) *float64 { return &m.Exposure }},
	{name: "sqn", float: func(m *engine.Metrics) *float64 { return &m.SQN }},
	{name: "max_drawdown_bars", float: func(m *engine.Metrics) *float64 { return &m.MaxDrawdownBars }},
}

// appendBatch appends the blob of rows to dst. rows must be strictly
// ascending by index, at least one (sortBatch).
func appendBatch(dst []byte, rows []engine.ComboResult) []byte {
	dst = slices.Grow(dst, 1+binary.MaxVarintLen64+len(rows)*(minRowBytes+8))
	dst = append(dst, batchVersion)
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	prev := -1
	for i := range rows {
		dst = binary.AppendUvarint(dst, uint64(rows[i].Index-prev-1))
		prev = rows[i].Index
	}
	for _, c := range &resultColumns {
		if c.float != nil {
			for i := range rows {
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*c.float(&rows[i].Metrics)))
			}
		} else {
			for i := range rows {
				dst = binary.AppendVarint(dst, int64(*c.count(&rows[i].Metrics)))
			}
		}
	}
	return dst
}

// sortBatch puts rows in index order and checks that each is a combo of g,
// saved once: the rows a blob can hold.
func sortBatch(rows []engine.ComboResult, g engine.Grid) error {
	if !slices.IsSortedFunc(rows, byIndex) {
		slices.SortFunc(rows, byIndex)
	}
	n := g.Len()
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Index < 0 || r.Index >= n:
			return fmt.Errorf("combo index %d is outside the grid's %d combos", r.Index, n)
		case i > 0 && r.Index == rows[i-1].Index:
			return fmt.Errorf("combo %d is in the batch twice", r.Index)
		case r.Combo != g.At(r.Index):
			c := g.At(r.Index)
			return fmt.Errorf("combo %d is (%d, %d), the grid's is (%d, %d)", r.Index, r.HMA, r.HMA3, c.HMA, c.HMA3)
		}
	}
	return nil
}

func byIndex(a, b engine.ComboResult) int { return a.Index - b.Index }

// Why a blob is refused.
var (
	errBlobTruncated = errors.New("it ends early")
	errBlobTrailing  = errors.New("it has bytes past its end")
)

// decodeBatch appends to out the rows of blob, which result_batches says
// holds rows combos from grid index first to last, each with its combo
// from g. A
// blob that is not what it says (truncated, damaged, of a newer format,
// outside the grid) is refused, with out unchanged, by an error saying how.
func decodeBatch(out []engine.ComboResult, blob []byte, first, last, rows int, g engine.Grid) ([]engine.ComboResult, error) {
	if len(blob) == 0 {
		return out, errors.New("it is empty")
	}
	cols := len(resultColumns)
	switch v := blob[0]; v {
	case batchVersion:
	case 1:
		cols = v1Columns
	default:
		return out, fmt.Errorf("its format version is %d, this sweepbench reads 1 to %d", v, batchVersion)
	}
	b := blob[1:]
	n64, k := binary.Uvarint(b)
	if k <= 0 {
		return out, errBlobTruncated
	}
	b = b[k:]
	switch {
	case rows < 1:
		return out, fmt.Errorf("the table says it holds %d rows", rows)
	case n64 != uint64(rows):
		return out, fmt.Errorf("it holds %d rows, the table says %d", n64, rows)
	case rows > g.Len():
		return out, fmt.Errorf("it holds %d rows, more than the grid's %d combos", rows, g.Len())
	case len(b) < rows*minRowBytesOf(cols):
		return out, errBlobTruncated
	}
	base := len(out)
	out = slices.Grow(out, rows)[:base+rows]
	rs := out[base:]
	fail := func(err error) ([]engine.ComboResult, error) {
		clear(rs)
		return out[:base], err
	}
	grid := uint64(g.Len())
	idx := uint64(0)
	for i := range rs {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return fail(errBlobTruncated)
		}
		b = b[k:]
		if i > 0 {
			d += idx + 1 // wraps only past the grid, refused next
			if d <= idx {
				d = grid
			}
		}
		if idx = d; idx >= grid {
			return fail(fmt.Errorf("row %d is past the grid's %d combos", i, grid))
		}
		rs[i].Index = int(idx)
		rs[i].Combo = g.At(int(idx))
	}
	if a, z := rs[0].Index, rs[len(rs)-1].Index; a != first || z != last {
		return fail(fmt.Errorf("it holds combos %d to %d, the table says %d to %d", a, z, first, last))
	}
	for j, c := range &resultColumns {
		if j >= cols { // a version 1 blob: Part 2's metrics not computed
			for i := range rs {
				*c.float(&rs[i].Metrics) = math.NaN()
			}
			continue
		}
		if c.float != nil {
			if len(b) < 8*len(rs) {
				return fail(errBlobTruncated)
			}
			for i := range rs {
				*c.float(&rs[i].Metrics) = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
			b = b[8*len(rs):]
			continue
		}
		for i := range rs {
			v, k := binary.Varint(b)
			if k <= 0 {
				return fail(errBlobTruncated)
			}
			b = b[k:]
			if int64(int(v)) != v {
				return fail(fmt.Errorf("combo %d's %s %d does not fit an int here", rs[i].Index, c.name, v))
			}
			*c.count(&rs[i].Metrics) = int(v)
		}
	}
	if len(b) != 0 {
		return fail(errBlobTrailing)
	}
	return out, nil
}

// BatchError refuses a saved run one of whose batches of results cannot be
// read: its blob is truncated or damaged in the database, of a format newer
// than this sweepbench reads, or at odds with the other batches (a combo
// saved twice). Show, export, diff and resume refuse the run, as they do
// one whose digest does not match (DigestError).
type BatchError struct {
	ID        int64            // the session
	Precision engine.Precision // its run
	First     int              // the batch: its first combo's grid index (result_batches.first_idx)
	Rows      int              // the rows the batch says it holds
	Err       error            // what is wrong with it
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("session %d, run %d:%s: the saved batch of %d results from combo %d cannot be read (%v): it was damaged in the database after it was saved, so the run is not used",
		e.ID, e.ID, e.Precision, e.Rows, e.First, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// inIndexOrder returns the rows of a run, read batch after batch (batch k
// from rows[starts[k]], each in index order), in index order: rows itself
// when the batches follow one another, else merged into a new slice
// (batches of chunks computed side by side overlap). dup is the batch, by
// its number, holding a combo an earlier batch holds too, or -1.
func inIndexOrder(rows []engine.ComboResult, starts []int) (out []engine.ComboResult, dup int) {
	ordered := true
	for _, s := range starts[min(1, len(starts)):] {
		if rows[s].Index <= rows[s-1].Index {
			ordered = false
			break
		}
	}
	if ordered {
		return rows, -1
	}
	// A k-way merge: a heap of the batches by the index of their next row.
	type cursor struct{ at, end, batch int }
	h := make([]cursor, len(starts))
	for k, s := range starts {
		end := len(rows)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		h[k] = cursor{s, end, k}
	}
	less := func(i, j int) bool {
		a, b := rows[h[i].at].Index, rows[h[j].at].Index
		return a < b || a == b && h[i].batch < h[j].batch
	}
	down := func(i int) {
		for {
			m := i
			if l := 2*i + 1; l < len(h) && less(l, m) {
				m = l
			}
			if r := 2*i + 2; r < len(h) && less(r, m) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	out = make([]engine.ComboResult, 0, len(rows))
	for len(h) > 0 {
		c := &h[0]
		r := &rows[c.at]
		if n := len(out); n > 0 && out[n-1].Index == r.Index {
			return nil, c.batch
		}
		out = append(out, *r)
		if c.at++; c.at == c.end {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return out, -1
}
