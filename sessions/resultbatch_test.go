package sessions

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"sweepbench/engine"
)

var batchGrid = engine.Grid{HMA: engine.Range{Start: 10, Stop: 1009, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 111, Step: 1}} // 1,000 x 100

// specialRows are rows whose every metric is a value hard to keep: NaNs
// with payloads and signs, -0, ±Inf, the extremes of a float64, and counts
// past 2^53 or negative (the format keeps any int64), at indices with gaps.
func specialRows(g engine.Grid) []engine.ComboResult {
	floats := []uint64{
		0x7ff8000000000000, // the NaN the digest takes
		0x7ff8000000000001, // math.NaN()
		0xfff8000000000000, // a negative NaN
		0x7ff0000000000001, // a signalling NaN
		0x8000000000000000, // -0
		math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1)),
		math.Float64bits(math.MaxFloat64), math.Float64bits(-math.MaxFloat64),
		math.Float64bits(math.SmallestNonzeroFloat64), 0, math.Float64bits(0.1),
	}
	counts := []int{0, 1, 1<<53 + 1, math.MaxInt64, math.MinInt64, -1, 127, 128, 1 << 40}
	var rs []engine.ComboResult
	for k, idx := range []int{0, 1, 2, 7, 300, 301, 5000, 99_998, 99_999} {
		r := engine.ComboResult{Index: idx, Combo: g.At(idx)}
		for j, c := range &resultColumns {
			if c.float != nil {
				*c.float(&r.Metrics) = math.Float64frombits(floats[(k+j)%len(floats)])
			} else {
				*c.count(&r.Metrics) = counts[(k+j)%len(counts)]
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// sameBits is bit equality of two rows, every metric, the combo and index.
func sameBits(a, b *engine.ComboResult) bool {
	if a.Index != b.Index || a.Combo != b.Combo {
		return false
	}
	for _, c := range &resultColumns {
		if c.float != nil && math.Float64bits(*c.float(&a.Metrics)) != math.Float64bits(*c.float(&b.Metrics)) ||
			c.count != nil && *c.count(&a.Metrics) != *c.count(&b.Metrics) {
			return false
		}
	}
	return true
}

// TestBatchRoundTrip encodes hand-made rows and decodes them after rows
// already read: every value bit for bit, each combo the grid's.
func TestBatchRoundTrip(t *testing.T) {
	rs := specialRows(batchGrid)
	blob := appendBatch(nil, rs)
	prior := []engine.ComboResult{{Index: 42}}
	out, err := decodeBatch(prior, blob, rs[0].Index, rs[len(rs)-1].Index, len(rs), batchGrid)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1+len(rs) || out[0].Index != 42 {
		t.Fatalf("decoded %d rows after the one before (%d), want %d after it", len(out)-1, out[0].Index, len(rs))
	}
	for i := range rs {
		if !sameBits(&out[1+i], &rs[i]) {
			t.Errorf("row %d: %+v, want %+v", i, out[1+i], rs[i])
		}
	}
	// The size the format gives: version, n, the indices (the gap to 5000
	// and to 99,998 take 2 and 3 bytes), 20 floats of 8 bytes (Part 1's
	// 10 and Part 2's 10), the counts' zigzag varints.
	want := 1 + 1 + (1 + 1 + 1 + 1 + 2 + 1 + 2 + 3 + 1) + 20*8*len(rs)
	for _, r := range rs {
		for _, c := range &resultColumns {
			if c.count != nil {
				v := int64(*c.count(&r.Metrics))
				u := uint64(v<<1) ^ uint64(v>>63)
				for want++; u >= 0x80; u >>= 7 {
					want++
				}
			}
		}
	}
	if len(blob) != want {
		t.Errorf("blob of %d bytes, the format says %d", len(blob), want)
	}
}

// TestDecodeBatchVersion1: a blob of format version 1 (every batch saved
// before SPEC Part 2), written here byte by byte as that format was
// (Part 1's 14 columns), reads its rows' Part 1 metrics bit for bit and
// their Part 2 metrics as NaN, not computed; a version 3 blob is refused,
// naming the versions this build reads.
func TestDecodeBatchVersion1(t *testing.T) {
	rs := specialRows(batchGrid)
	blob := []byte{1}
	blob = binary.AppendUvarint(blob, uint64(len(rs)))
	prev := -1
	for _, r := range rs {
		blob = binary.AppendUvarint(blob, uint64(r.Index-prev-1))
		prev = r.Index
	}
	v1 := []string{"total_return", "cagr", "sharpe", "sortino", "max_drawdown", "calmar", "win_rate", "total_trades",
		"var_95", "cvar_95", "omega", "long_bars", "short_bars", "flat_bars"}
	for j, name := range v1 {
		c := resultColumns[j]
		if c.name != name {
			t.Fatalf("column %d is %s, version 1's was %s", j, c.name, name)
		}
		for i := range rs {
			if c.count != nil {
				blob = binary.AppendVarint(blob, int64(*c.count(&rs[i].Metrics)))
			} else {
				blob = binary.LittleEndian.AppendUint64(blob, math.Float64bits(*c.float(&rs[i].Metrics)))
			}
		}
	}
	out, err := decodeBatch(nil, blob, rs[0].Index, rs[len(rs)-1].Index, len(rs), batchGrid)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if out[i].Index != rs[i].Index || out[i].Combo != rs[i].Combo {
			t.Fatalf("row %d: combo %d, want %d", i, out[i].Index, rs[i].Index)
		}
		for _, c := range resultColumns[:len(v1)] {
			if c.float != nil && math.Float64bits(*c.float(&out[i].Metrics)) != math.Float64bits(*c.float(&rs[i].Metrics)) ||
				c.count != nil && *c.count(&out[i].Metrics) != *c.count(&rs[i].Metrics) {
				t.Errorf("row %d: %s differs", i, c.name)
			}
		}
		for _, name := range engine.MetricNames[len(v1):] {
			if v, _ := out[i].Metrics.Value(name); !math.IsNaN(v) {
				t.Errorf("row %d: %s = %v, want NaN (not computed)", i, name, v)
			}
		}
	}
	bad := append([]byte(nil), blob...)
	bad[0] = 3
	if _, err := decodeBatch(nil, bad, rs[0].Index, rs[len(rs)-1].Index, len(rs), batchGrid); err == nil || !strings.Contains(err.Error(), "reads 1 to 2") {
		t.Errorf("version 3: %v, want an error naming the versions read", err)
	}
}

// TestDecodeBatchRefuses: a blob cut anywhere, any byte of it changed, or
// a table row at odds with it, is refused with an error or read as some
// rows of the grid, never a panic; a refusal leaves out as it was.
func TestDecodeBatchRefuses(t *testing.T) {
	rs := specialRows(batchGrid)
	blob := appendBatch(nil, rs)
	first, last, n := rs[0].Index, rs[len(rs)-1].Index, len(rs)
	prior := make([]engine.ComboResult, 1, 64)
	for cut := 0; cut < len(blob); cut++ {
		out, err := decodeBatch(prior, blob[:cut], first, last, n, batchGrid)
		if err == nil || len(out) != 1 {
			t.Fatalf("cut to %d bytes: %d rows, %v; want an error", cut, len(out)-1, err)
		}
	}
	for at := range blob {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte(nil), blob...)
			bad[at] ^= x
			out, err := decodeBatch(prior, bad, first, last, n, batchGrid)
			switch {
			case err != nil && len(out) != 1:
				t.Fatalf("byte %d ^ %#x: refused, but out holds %d rows", at, x, len(out))
			case err == nil && len(out) != 1+n:
				t.Fatalf("byte %d ^ %#x: read %d rows, want %d", at, x, len(out)-1, n)
			}
		}
	}
	for _, c := range []struct {
		name              string
		first, last, rows int
		g                 engine.Grid
		says              string
	}{
		{"rows", first, last, n + 1, batchGrid, "the table says"},
		{"no rows", first, last, 0, batchGrid, "the table says"},
		{"first", first + 1, last, n, batchGrid, "the table says"},
		{"last", first, last - 1, n, batchGrid, "the table says"},
		{"a smaller grid", first, last, n, engine.Grid{HMA: batchGrid.HMA, HMA3: engine.Range{Start: 12, Stop: 20, Step: 1}}, "past the grid"},
		{"a grid of fewer combos than rows", first, last, n, engine.Grid{HMA: engine.Range{Start: 10, Stop: 10, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 14, Step: 1}}, "more than the grid's"},
	} {
		if _, err := decodeBatch(nil, blob, c.first, c.last, c.rows, c.g); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.says)
		}
	}
}

// FuzzDecodeBatch: whatever the blob, decoding returns rows of the grid in
// strictly ascending order, as many as the table says, or an error; never
// a panic.
func FuzzDecodeBatch(f *testing.F) {
	rs := specialRows(batchGrid)
	f.Add(appendBatch(nil, rs), rs[0].Index, rs[len(rs)-1].Index, len(rs))
	f.Add(appendBatch(nil, rs[:1]), rs[0].Index, rs[0].Index, 1)
	f.Add([]byte{1, 1, 0}, 0, 0, 1)
	f.Fuzz(func(t *testing.T, blob []byte, first, last, rows int) {
		out, err := decodeBatch(nil, blob, first, last, rows, batchGrid)
		if err != nil {
			if len(out) != 0 {
				t.Fatalf("refused (%v) with %d rows", err, len(out))
			}
			return
		}
		if len(out) != rows || out[0].Index != first || out[len(out)-1].Index != last {
			t.Fatalf("%d rows %d..%d, the table says %d, %d..%d", len(out), out[0].Index, out[len(out)-1].Index, rows, first, last)
		}
		for i := range out {
			if i > 0 && out[i].Index <= out[i-1].Index || out[i].Index >= batchGrid.Len() || out[i].Combo != batchGrid.At(out[i].Index) {
				t.Fatalf("row %d: combo %d %+v", i, out[i].Index, out[i].Combo)
			}
		}
	})
}

// TestSortBatch: the rows of a batch are put in index order; one saved
// twice, outside the grid or with another combo's lengths is refused.
func TestSortBatch(t *testing.T) {
	g := batchGrid
	row := func(i int) engine.ComboResult {
		return engine.ComboResult{Index: i, Combo: g.At(i), Metrics: engine.Metrics{Sharpe: float64(i)}}
	}
	rs := []engine.ComboResult{row(9), row(3), row(4), row(0), row(100)}
	if err := sortBatch(rs, g); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 3, 4, 9, 100} {
		if rs[i].Index != want || rs[i].Sharpe != float64(want) {
			t.Errorf("row %d: combo %d (sharpe %v), want %d", i, rs[i].Index, rs[i].Sharpe, want)
		}
	}
	wrong := row(5)
	wrong.HMA3++
	for _, c := range []struct {
		name string
		rs   []engine.ComboResult
		says string
	}{
		{"twice", []engine.ComboResult{row(2), row(1), row(2)}, "twice"},
		{"negative", []engine.ComboResult{row(1), {Index: -1}}, "outside the grid"},
		{"past the grid", []engine.ComboResult{{Index: g.Len()}}, "outside the grid"},
		{"another combo's lengths", []engine.ComboResult{row(1), wrong}, "the grid's is"},
	} {
		if err := sortBatch(c.rs, g); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.says)
		}
	}
}

// TestInIndexOrder: batches read by their first combo come out in index
// order: as they are when they follow one another, merged when chunks
// computed side by side made them overlap; a combo in two batches is
// found, with the second batch holding it.
func TestInIndexOrder(t *testing.T) {
	read := func(batches ...[]int) ([]engine.ComboResult, []int) {
		var rows []engine.ComboResult
		var starts []int
		for _, b := range batches {
			starts = append(starts, len(rows))
			for _, i := range b {
				rows = append(rows, engine.ComboResult{Index: i, Metrics: engine.Metrics{TotalTrades: i}})
			}
		}
		return rows, starts
	}
	cases := []struct {
		name    string
		batches [][]int
		want    []int
		dup     int
		same    bool // rows come back as they were read
	}{
		{"one", [][]int{{0, 1, 5}}, []int{0, 1, 5}, -1, true},
		{"one after another", [][]int{{0, 1}, {2, 3}, {7}}, []int{0, 1, 2, 3, 7}, -1, true},
		{"overlapping", [][]int{{0, 1, 8, 9}, {2, 3, 10}, {4, 11}, {5, 6, 7}}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, -1, false},
		{"a resume's batches in the holes", [][]int{{0, 1, 2, 10, 11}, {3, 4}, {5, 6, 7, 8, 9}, {12}}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, -1, false},
		{"a combo twice, in order", [][]int{{0, 1}, {1, 2}}, nil, 1, false},
		{"a combo twice, merged", [][]int{{0, 5, 9}, {3, 5}}, nil, 1, false},
	}
	for _, c := range cases {
		rows, starts := read(c.batches...)
		out, dup := inIndexOrder(rows, starts)
		if dup != c.dup {
			t.Errorf("%s: dup %d, want %d", c.name, dup, c.dup)
			continue
		}
		if dup >= 0 {
			continue
		}
		got := make([]int, len(out))
		for i := range out {
			got[i] = out[i].Index
			if out[i].TotalTrades != out[i].Index {
				t.Errorf("%s: row %d carries combo %d's metrics", c.name, out[i].Index, out[i].TotalTrades)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if same := &out[0] == &rows[0]; same != c.same {
			t.Errorf("%s: rows reused %v, want %v", c.name, same, c.same)
		}
	}
}

// TestSpans: the set of saved combos, as ranges, refuses a combo saved
// again and merges ranges that touch.
func TestSpans(t *testing.T) {
	var s spans
	steps := []struct {
		lo, hi int
		ok     bool
		want   spans
	}{
		{10, 20, true, spans{{10, 20}}},
		{30, 40, true, spans{{10, 20}, {30, 40}}},
		{0, 5, true, spans{{0, 5}, {10, 20}, {30, 40}}},
		{20, 25, true, spans{{0, 5}, {10, 25}, {30, 40}}}, // touches the left
		{28, 30, true, spans{{0, 5}, {10, 25}, {28, 40}}}, // touches the right
		{25, 28, true, spans{{0, 5}, {10, 40}}},           // joins two
		{5, 6, true, spans{{0, 6}, {10, 40}}},             // after the first
		{39, 41, false, spans{{0, 6}, {10, 40}}},          // overlaps the end
		{6, 11, false, spans{{0, 6}, {10, 40}}},           // overlaps the start
		{0, 100, false, spans{{0, 6}, {10, 40}}},          // covers it all
		{12, 13, false, spans{{0, 6}, {10, 40}}},          // inside
		{40, 50, true, spans{{0, 6}, {10, 50}}},           // after the last
		{7, 9, true, spans{{0, 6}, {7, 9}, {10, 50}}},     // between
		{6, 7, true, spans{{0, 9}, {10, 50}}},             // fills a hole of one
		{9, 10, true, spans{{0, 50}}},                     // and the other
	}
	for _, st := range steps {
		if ok := s.add(st.lo, st.hi); ok != st.ok || !slices.Equal(s, st.want) {
			t.Fatalf("add [%d, %d): %v, %v; want %v, %v", st.lo, st.hi, ok, s, st.ok, st.want)
		}
	}
	var r spans
	rows := []engine.ComboResult{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 5}, {Index: 6}}
	if _, ok := r.addRows(rows); !ok || !slices.Equal(r, spans{{0, 3}, {5, 7}}) {
		t.Fatalf("addRows: %v", r)
	}
	if dup, ok := r.addRows([]engine.ComboResult{{Index: 3}, {Index: 4}, {Index: 6}}); ok || dup != 6 {
		t.Errorf("addRows of a saved combo: %d, %v; want 6 refused", dup, ok)
	}
}

// BenchmarkBatchEncode is the case for storing batches uncompressed: a
// batch of 512 real rows (btcusdt, the reference backend) encoded as
// stored (raw), and the same blob compressed with zstd at its fastest
// level, as it would be if that paid. It reports the stored bytes a row
// next to the time a row.
func BenchmarkBatchEncode(b *testing.B) {
	ctx := context.Background()
	st := studyOn(b, 5000, engine.Grid{HMA: engine.Range{Start: 10, Stop: 200, Step: 2}, HMA3: engine.Range{Start: 12, Stop: 240, Step: 4}}, engine.FP64)
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rows := rep.Runs[0].Results
	const batch = 512
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	for _, compress := range []bool{false, true} {
		name := "raw"
		if compress {
			name = "zstd-fastest"
		}
		b.Run(name, func(b *testing.B) {
			var blob, z []byte
			stored := 0
			n := 0
			for b.Loop() {
				lo := (n * batch) % (len(rows) - batch)
				blob = appendBatch(blob[:0], rows[lo:lo+batch])
				size := len(blob)
				if compress {
					z = enc.EncodeAll(blob, z[:0])
					size = len(z)
				}
				stored += size
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*batch), "ns/row")
			b.ReportMetric(float64(stored)/float64(n*batch), "B/row")
		})
	}
}
