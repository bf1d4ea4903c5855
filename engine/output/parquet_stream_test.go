package output

import (
	"bytes"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
)

// streamSettings are the settings columns of the streaming tests' rows.
var streamSettings = rowSettings{dataset: "FIL/USDT", timeframe: "1m", fee: 0.001, mode: "long_short", source: "close", barsPerYear: 525600}

// sweepLike is combo i's result with every metric varied as a sweep's are
// (so that compression and dictionaries see realistic data), a few of
// them non-finite, every value distinct from its neighbours'.
func sweepLike(i int) engine.ComboResult {
	x := float64(i)
	s := func(k float64) float64 { return math.Sin(x*k+k) * (1 + k) }
	m := engine.Metrics{TotalReturn: s(1), CAGR: s(.3), Sharpe: s(.37), Sortino: s(.11), MaxDrawdown: math.Abs(s(.05)), Calmar: s(.3),
		WinRate: .4 + .2*s(.7), TotalTrades: 100 + i%5000, VaR95: -.01 * math.Abs(s(1.1)), CVaR95: -.015 * math.Abs(s(1.3)), Omega: 1 + .1*s(.9),
		LongBars: 80000 + i%9000, ShortBars: 70000 + i%7000, FlatBars: i % 300, ProfitFactor: s(.21), Expectancy: s(.23), AvgWin: s(.29),
		AvgLoss: s(.31), BestTrade: s(.41), WorstTrade: s(.43), AvgTradeBars: s(.47), Exposure: s(.53), SQN: s(.59), MaxDrawdownBars: float64(i % 7777)}
	switch i % 101 {
	case 7:
		m.Sortino, m.Omega = math.Inf(1), math.Inf(1)
	case 8:
		m.Calmar = math.Inf(-1)
	case 9:
		m.Sharpe, m.ProfitFactor, m.SQN = math.NaN(), math.NaN(), math.NaN()
	}
	return engine.ComboResult{Index: i, Combo: engine.Combo{HMA: 2 + i%1000, HMA3: 6 + i/1000}, Metrics: m}
}

// streamLanes streams n rows a lane of sweepLike results, fp64 then fp32,
// in chunks of chunk rows, through p; after each chunk it calls check.
func streamLanes(p *parquetRows, n, chunk int, check func()) error {
	buf := make([]engine.ComboResult, chunk)
	for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
		if err := p.lane(rowLane{precision: prec, backend: "cuda", wma: engine.Direct, status: engine.StatusComplete}); err != nil {
			return err
		}
		for off := 0; off < n; off += chunk {
			rs := buf[:min(chunk, n-off)]
			for k := range rs {
				rs[k] = sweepLike(off + k)
				rs[k].Metrics.TotalReturn += float64(prec) // the lanes' rows differ
			}
			if err := p.rows(rs); err != nil {
				return err
			}
			if check != nil {
				check()
			}
		}
	}
	return nil
}

// TestParquetWriterMemoryFlat: however many rows stream through the
// results writer, it holds at most parquetSlots() row groups, each of at
// most resultsRowGroup rows, and every row group it made is filling,
// encoding or waiting, or free: no row group is made beyond those, so its
// memory does not grow with the grid. Counted, not timed or sampled.
func TestParquetWriterMemoryFlat(t *testing.T) {
	for _, n := range []int{resultsRowGroup / 2, 3*resultsRowGroup + 12345} {
		var out bytes.Buffer
		p := newParquetRows(&out, streamSettings, nil)
		most, bound := 0, parquetSlots()*resultsRowGroup
		err := streamLanes(p, n, 10007, func() {
			b := p.buffered()
			most = max(most, b)
			held := len(p.free) + len(p.inflight)
			if p.cur != nil {
				held++
			}
			if b > bound || p.made > parquetSlots() || held != p.made {
				t.Fatalf("%d rows buffered (at most %d), %d row groups made (at most %d), %d of them accounted for", b, bound, p.made, parquetSlots(), held)
			}
			if p.cur != nil && len(p.cur.cols) > resultsRowGroup {
				t.Fatalf("a row group of %d rows", len(p.cur.cols))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.finishWith(nil); err != nil {
			t.Fatal(err)
		}
		if p.buffered() != 0 || len(p.inflight) != 0 {
			t.Errorf("n=%d: %d rows still buffered after finishing", n, p.buffered())
		}
		f, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if f.NumRows() != int64(2*n) {
			t.Errorf("n=%d: %d rows in the file, want %d", n, f.NumRows(), 2*n)
		}
		t.Logf("n=%d a lane: at most %d rows buffered, %d row groups made", n, most, p.made)
	}
}

// TestParquetRoundTripEveryRow: a results file of several row groups a
// lane (the last of each shorter), streamed in chunks that straddle the
// row groups' bounds, reads back with the module's reader as every row
// streamed, each column bit for bit (NaN and the infinities included),
// in order.
func TestParquetRoundTripEveryRow(t *testing.T) {
	n := 2*resultsRowGroup + 777
	var out bytes.Buffer
	p := newParquetRows(&out, streamSettings, nil)
	if err := streamLanes(p, n, 30011, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.finishWith([][2]string{{"k", "v"}}); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, rg := range f.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	want := []int64{resultsRowGroup, resultsRowGroup, 777, resultsRowGroup, resultsRowGroup, 777}
	if len(sizes) != len(want) {
		t.Fatalf("row groups %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("row groups %v, want %v", sizes, want)
		}
	}
	if v, ok := f.Lookup("k"); !ok || v != "v" {
		t.Errorf("metadata k = %q %v", v, ok)
	}
	r := parquet.NewGenericReader[parquetRow](f)
	defer r.Close()
	got := make([]parquetRow, 2*n)
	if k, err := r.Read(got); k != len(got) {
		t.Fatalf("read %d of %d rows: %v", k, len(got), err)
	}
	bits := func(c ComboColumns) [26]uint64 {
		return [26]uint64{uint64(c.HMA), uint64(c.HMA3), math.Float64bits(c.TotalReturn), math.Float64bits(c.CAGR), math.Float64bits(c.Sharpe),
			math.Float64bits(c.Sortino), math.Float64bits(c.MaxDrawdown), math.Float64bits(c.Calmar), math.Float64bits(c.WinRate), uint64(c.TotalTrades),
			math.Float64bits(c.VaR95), math.Float64bits(c.CVaR95), math.Float64bits(c.Omega), uint64(c.LongBars), uint64(c.ShortBars), uint64(c.FlatBars),
			math.Float64bits(c.ProfitFactor), math.Float64bits(c.Expectancy), math.Float64bits(c.AvgWin), math.Float64bits(c.AvgLoss),
			math.Float64bits(c.BestTrade), math.Float64bits(c.WorstTrade), math.Float64bits(c.AvgTradeBars), math.Float64bits(c.Exposure),
			math.Float64bits(c.SQN), math.Float64bits(c.MaxDrawdownBars)}
	}
	for k, row := range got {
		prec := []engine.Precision{engine.FP64, engine.FP32}[k/n]
		res := sweepLike(k % n)
		res.Metrics.TotalReturn += float64(prec)
		wantRow := parquetRow{Precision: prec.String(), Backend: "cuda", WMA: engine.Direct.String(), ComboColumns: ComboColumnsOf(&res),
			Status: string(engine.StatusComplete), Dataset: streamSettings.dataset, Timeframe: streamSettings.timeframe, Fee: streamSettings.fee,
			Mode: streamSettings.mode, Source: streamSettings.source, BarsPerYear: streamSettings.barsPerYear}
		g, w := row, wantRow
		g.ComboColumns, w.ComboColumns = ComboColumns{}, ComboColumns{}
		if g != w || bits(row.ComboColumns) != bits(wantRow.ComboColumns) {
			t.Fatalf("row %d:\n%+v\nwant\n%+v", k, row, wantRow)
		}
	}
}

// BenchmarkParquetStream streams 10^6 rows (two lanes of 500,000 sweep-like
// results, in chunks of 65,536 as a GPU lane hands them over) through the
// results writer into a counter, and reports, besides B/op (the writer's
// allocations and the chunks'), the peak of the heap in use (HeapInuse,
// sampled every millisecond: garbage included, as RSS sees it) and the
// file's bytes a row.
func BenchmarkParquetStream(b *testing.B) {
	const n = 500_000
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		var out countingWriter
		p := newParquetRows(&out, streamSettings, nil)
		if err := streamLanes(p, n, 65536, nil); err != nil {
			b.Fatal(err)
		}
		if err := p.finishWith(nil); err != nil {
			b.Fatal(err)
		}
		size = int64(out)
	}
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(2*n), "file-B/row")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*n), "ns/row")
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// TestParquetStrategyRoundTrip: a strategy grid's results file of two row
// groups a lane, streamed, holds the rows one parquet-go writer gives
// when it writes every row of the report at once (the layout's rows),
// each value bit for bit, in order.
func TestParquetStrategyRoundTrip(t *testing.T) {
	st, err := engine.NewStrategy("zscore", map[string]string{"length": "2:263:1", "entry": "0.5:3:0.01", "exit": "0.25"}, false)
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{Strategy: st}
	if g.Len() <= resultsRowGroup {
		t.Fatalf("%d combos: want more than a row group", g.Len())
	}
	rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "cuda", Created: time.Unix(0, 0)}
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		run := &engine.Run{Backend: "cuda", Precision: p, Grid: g, Status: engine.StatusComplete, Results: make([]engine.ComboResult, g.Len())}
		for i := range run.Results {
			run.Results[i] = sweepLike(i)
			run.Results[i].Metrics.Sharpe += float64(p)
		}
		rep.Runs = append(rep.Runs, run)
	}
	var out bytes.Buffer
	if err := WriteParquet(&out, rep); err != nil {
		t.Fatal(err)
	}
	// The same rows by one writer, unstreamed.
	l := newStrategyLayout(paramColsOf(g))
	var want bytes.Buffer
	pw := parquet.NewWriter(&want, append([]parquet.WriterOption{l.schema}, parquetOptions()...)...)
	for _, run := range rep.Runs {
		lane := parquetRow{Precision: run.Precision.String(), Backend: "cuda", WMA: engine.Direct.String(), Status: string(engine.StatusComplete),
			Fee: engine.DefaultFee, BarsPerYear: 525600}
		s := settingsOf(rep.Dataset, rep.Params)
		lane.Dataset, lane.Timeframe, lane.Mode, lane.Source = s.dataset, s.timeframe, s.mode, s.source
		rows := make([]parquet.Row, len(run.Results))
		for i := range run.Results {
			lane.ComboColumns = ComboColumnsOf(&run.Results[i])
			rows[i] = l.row(nil, &lane, i)
		}
		if _, err := pw.WriteRows(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) (rows []parquet.Row, groups int) {
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		r := parquet.NewReader(f)
		defer r.Close()
		rows = make([]parquet.Row, f.NumRows())
		if n, _ := r.ReadRows(rows); n != len(rows) {
			for n < len(rows) {
				k, err := r.ReadRows(rows[n:])
				n += k
				if err != nil && n < len(rows) {
					t.Fatalf("read %d of %d rows: %v", n, len(rows), err)
				}
			}
		}
		return rows, len(f.RowGroups())
	}
	got, gotGroups := read(out.Bytes())
	wantRows, _ := read(want.Bytes())
	if len(got) != 2*g.Len() || len(wantRows) != len(got) || gotGroups != 4 {
		t.Fatalf("%d rows in %d row groups, want %d in 4 (the unstreamed file: %d)", len(got), gotGroups, 2*g.Len(), len(wantRows))
	}
	same := func(a, b parquet.Row) bool { // value by value, NaN equal to itself
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i].Kind() != b[i].Kind() || a[i].Column() != b[i].Column() || !bytes.Equal(a[i].Bytes(), b[i].Bytes()) {
				return false
			}
		}
		return true
	}
	for k := range got {
		if !same(got[k], wantRows[k]) {
			t.Fatalf("row %d:\n%v\nwant\n%v", k, got[k], wantRows[k])
		}
	}
}
