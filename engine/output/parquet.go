package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// Parquet results (RowsParquet) are written with github.com/parquet-go/parquet-go:
// pure Go (assembly on amd64 and arm64, a portable fallback elsewhere), so
// the binary stays static with CGO_ENABLED=0 on Linux, macOS and Windows;
// it writes rows straight from a Go struct (GenericWriter), a million in
// well under the 1.5 s budget on two cores (BenchmarkWriteParquet), where
// Apache Arrow's Go module writes Parquet through Arrow arrays and record
// batches (pqarrow), a second data model to build for one flat table, with
// Thrift and flatbuffers among its dependencies. Its cost: its own
// dependencies (compression codecs, protobuf, go-geom for its optional
// column types) add about 13 MB to the binary (21.6 -> 35.1 MB, linux/amd64).
//
// The file: one row per combo and precision (parquetRow, the columns of
// RowColumns in that order); counts as INT64, metrics, fee and
// bars_per_year as DOUBLE, text as dictionary-encoded UTF-8 strings; every
// column required. Non-finite metrics are the IEEE doubles themselves
// (NaN, +Inf, -Inf), which Parquet stores like any double and pandas,
// polars and DuckDB read back as such; page statistics leave NaN out of
// their min/max. Snappy compression, data page v1 (the widest reader
// support), row groups of at most resultsRowGroup rows, written out as
// they fill (what bounds the writer's memory while it streams). The run's settings and the parity
// verdict are the file's key/value metadata (parquetMetadata).

// parquetRow is one row; its column names are RowColumns (a test checks).
type parquetRow struct {
	Precision string `parquet:"precision,dict"`
	Backend   string `parquet:"backend,dict"`
	WMA       string `parquet:"wma,dict"`
	ComboColumns
	Status      string  `parquet:"status,dict"`
	Dataset     string  `parquet:"dataset,dict"`
	Timeframe   string  `parquet:"timeframe,dict"`
	Fee         float64 `parquet:"fee"`
	Mode        string  `parquet:"mode,dict"`
	Source      string  `parquet:"source,dict"`
	BarsPerYear float64 `parquet:"bars_per_year"`
}

// ComboColumns are a combo's lengths and metrics as Parquet columns, the
// same in a results file (parquetRow) and a shard file (shardRow): an
// embedded struct's fields are columns of the row in their place.
type ComboColumns struct {
	HMA         int64   `parquet:"hma"`
	HMA3        int64   `parquet:"hma3"`
	TotalReturn float64 `parquet:"total_return"`
	CAGR        float64 `parquet:"cagr"`
	Sharpe      float64 `parquet:"sharpe"`
	Sortino     float64 `parquet:"sortino"`
	MaxDrawdown float64 `parquet:"max_drawdown"`
	Calmar      float64 `parquet:"calmar"`
	WinRate     float64 `parquet:"win_rate"`
	TotalTrades int64   `parquet:"total_trades"`
	VaR95       float64 `parquet:"var_95"`
	CVaR95      float64 `parquet:"cvar_95"`
	Omega       float64 `parquet:"omega"`
	LongBars    int64   `parquet:"long_bars"`
	ShortBars   int64   `parquet:"short_bars"`
	FlatBars    int64   `parquet:"flat_bars"`
	// SPEC Part 2's metrics (NaN where not computed)
	ProfitFactor    float64 `parquet:"profit_factor"`
	Expectancy      float64 `parquet:"expectancy"`
	AvgWin          float64 `parquet:"avg_win"`
	AvgLoss         float64 `parquet:"avg_loss"`
	BestTrade       float64 `parquet:"best_trade"`
	WorstTrade      float64 `parquet:"worst_trade"`
	AvgTradeBars    float64 `parquet:"avg_trade_bars"`
	Exposure        float64 `parquet:"exposure"`
	SQN             float64 `parquet:"sqn"`
	MaxDrawdownBars float64 `parquet:"max_drawdown_bars"`
}

// ComboColumnsOf is r's columns.
func ComboColumnsOf(r *engine.ComboResult) ComboColumns {
	m := &r.Metrics
	return ComboColumns{HMA: int64(r.HMA), HMA3: int64(r.HMA3),
		TotalReturn: m.TotalReturn, CAGR: m.CAGR, Sharpe: m.Sharpe, Sortino: m.Sortino, MaxDrawdown: m.MaxDrawdown,
		Calmar: m.Calmar, WinRate: m.WinRate, TotalTrades: int64(m.TotalTrades), VaR95: m.VaR95, CVaR95: m.CVaR95,
		Omega: m.Omega, LongBars: int64(m.LongBars), ShortBars: int64(m.ShortBars), FlatBars: int64(m.FlatBars),
		ProfitFactor: m.ProfitFactor, Expectancy: m.Expectancy, AvgWin: m.AvgWin, AvgLoss: m.AvgLoss, BestTrade: m.BestTrade,
		WorstTrade: m.WorstTrade, AvgTradeBars: m.AvgTradeBars, Exposure: m.Exposure, SQN: m.SQN, MaxDrawdownBars: m.MaxDrawdownBars}
}

// result is the combo the columns hold, at grid index i.
func (c *ComboColumns) Result(i int) engine.ComboResult {
	return engine.ComboResult{Index: i, Combo: engine.Combo{HMA: int(c.HMA), HMA3: int(c.HMA3)}, Metrics: engine.Metrics{
		TotalReturn: c.TotalReturn, CAGR: c.CAGR, Sharpe: c.Sharpe, Sortino: c.Sortino, MaxDrawdown: c.MaxDrawdown,
		Calmar: c.Calmar, WinRate: c.WinRate, TotalTrades: int(c.TotalTrades), VaR95: c.VaR95, CVaR95: c.CVaR95,
		Omega: c.Omega, LongBars: int(c.LongBars), ShortBars: int(c.ShortBars), FlatBars: int(c.FlatBars),
		ProfitFactor: c.ProfitFactor, Expectancy: c.Expectancy, AvgWin: c.AvgWin, AvgLoss: c.AvgLoss, BestTrade: c.BestTrade,
		WorstTrade: c.WorstTrade, AvgTradeBars: c.AvgTradeBars, Exposure: c.Exposure, SQN: c.SQN, MaxDrawdownBars: c.MaxDrawdownBars}}
}

// ParquetRowGroup is the most rows in one row group (about DuckDB's own
// row group size) of the other Parquet files (per-block statistics,
// shards, trades and bars): their writers hold one row group's pages in
// memory.
const ParquetRowGroup = 1 << 17

// resultsRowGroup is the most rows in one row group of a results file
// (about 10 MB of sweep metrics, compressed): half ParquetRowGroup, as
// the results writer holds parquetSlots() row groups at once, each as its
// rows and as its encoding.
const resultsRowGroup = 1 << 16

// parquetRows writes the rows as row groups of at most resultsRowGroup
// rows (a lane's last one shorter: a row group holds one lane), each
// written to the output as soon as it is encoded, so that the writer's
// memory is a fixed number of row groups, whatever the grid's size.
//
// A row group fills on the caller's goroutine (its combos' columns
// copied, 208 bytes a row), is encoded and compressed on a goroutine of
// its own into a Parquet file of its own in memory (about 160 bytes a
// row of sweep metrics), then spliced into the output in order by the
// writer's WriteRowGroup, which copies the encoded column chunks
// verbatim. There are parquetSlots() row groups in all, each with its
// buffers and its encoder, used again and again: when every one is
// filling, encoding or waiting for its turn, the caller waits for the
// oldest to be written out. Writing 2 x 10^7 rows on one goroutine took
// longer than the GPU lanes that computed them.
type parquetRows struct {
	w      parquetFileWriter
	opts   []parquet.WriterOption
	proto  parquetRow      // the lane's and the settings' columns
	layout *strategyLayout // a strategy grid's schema (parquet_params.go); nil for hull

	cur      *parquetGroup   // filling; nil between row groups
	free     []*parquetGroup // spliced, ready to fill again
	inflight []*parquetGroup // encoding or encoded, in file order
	made     int             // row groups allocated (at most parquetSlots())
}

// parquetGroup is one row group's rows and its encoding, used again once
// spliced. Its lane columns are the writer's when it took its first row:
// settings changed between lanes (setSettings) take effect at the next
// lane, which starts a row group.
type parquetGroup struct {
	lane    parquetRow     // the lane's and the settings' columns, the same for every row
	cols    []ComboColumns // the rows' combos, at most resultsRowGroup
	indices []int          // with a layout: the grid index of each row
	file    bytes.Buffer   // the encoded row group, a Parquet file of its own
	enc     groupEncoder   // made on first use, Reset for each row group
	done    chan error     // the encoding's result (buffered: one send a row group)
}

// groupEncoder is the writer of one row group's file: a
// GenericWriter[parquetRow] for hull, a *parquet.Writer of a strategy
// grid's schema.
type groupEncoder interface {
	Reset(io.Writer)
	Close() error
}

// parquetFileWriter is the file's writer: a GenericWriter[parquetRow]
// for hull, a *parquet.Writer of a strategy grid's schema.
type parquetFileWriter interface {
	WriteRowGroup(parquet.RowGroup) (int64, error)
	SetKeyValueMetadata(key, value string)
	Close() error
}

// parquetWorkers bounds the row groups encoded at once: 4 encode 2 x 10^7
// rows in a few seconds on the H200 host's cores, beside the lanes.
func parquetWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 4)) }

// parquetSlots is how many row groups the writer holds at most (one
// filling while the others encode or wait their turn): about 30 MB each
// at resultsRowGroup rows of sweep metrics (the rows, 13.6 MB; the encoded
// file; the encoder's page and column buffers while it encodes).
func parquetSlots() int { return parquetWorkers() + 1 }

// parquetOptions are the results file's writer options.
func parquetOptions() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(FastSnappy{}),
		parquet.DataPageVersion(1),
		parquet.MaxRowsPerRowGroup(resultsRowGroup),
	}
}

func newParquetRows(w io.Writer, s rowSettings, pc *paramCols) *parquetRows {
	opts := parquetOptions()
	p := &parquetRows{opts: opts,
		proto: parquetRow{Dataset: s.dataset, Timeframe: s.timeframe, Fee: s.fee, Mode: s.mode, Source: s.source, BarsPerYear: s.barsPerYear}}
	if pc != nil {
		p.layout = newStrategyLayout(pc)
		p.w = parquet.NewWriter(w, append([]parquet.WriterOption{p.layout.schema}, opts...)...)
	} else {
		p.w = parquet.NewGenericWriter[parquetRow](w, opts...)
	}
	return p
}

// FastSnappy is Parquet's SNAPPY codec (raw Snappy blocks, what every
// reader decodes) at klauspost/compress's default Snappy level instead of
// the "better" one parquet-go's codec uses: on sweep metrics, which hardly
// compress, the better level spent 40% of a 10^7-combo file's writing
// time for a few percent of its size.
type FastSnappy struct{}

func (FastSnappy) String() string                            { return "SNAPPY" }
func (FastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }
func (FastSnappy) Encode(dst, src []byte) ([]byte, error)    { return s2.EncodeSnappy(dst[:0], src), nil }
func (FastSnappy) Decode(dst, src []byte) ([]byte, error)    { return snappy.Decode(dst, src) }

func (p *parquetRows) lane(l rowLane) error {
	if err := p.dispatch(); err != nil {
		return err
	}
	p.proto.Precision, p.proto.Backend, p.proto.WMA, p.proto.Status = l.precision.String(), l.backend, l.wma.String(), string(l.status)
	return nil
}

func (p *parquetRows) rows(rs []engine.ComboResult) error {
	for i := range rs {
		if p.cur == nil {
			g, err := p.take()
			if err != nil {
				return err
			}
			g.lane, g.cols, g.indices = p.proto, g.cols[:0], g.indices[:0]
			p.cur = g
		}
		g := p.cur
		g.cols = append(g.cols, ComboColumnsOf(&rs[i]))
		if p.layout != nil {
			g.indices = append(g.indices, rs[i].Index)
		}
		if len(g.cols) == resultsRowGroup {
			if err := p.dispatch(); err != nil {
				return err
			}
		}
	}
	return nil
}

// take is a row group to fill: one spliced before, a new one while fewer
// than parquetSlots() exist, else the oldest in flight once it is written
// out.
func (p *parquetRows) take() (*parquetGroup, error) {
	if n := len(p.free); n > 0 {
		g := p.free[n-1]
		p.free = p.free[:n-1]
		return g, nil
	}
	if p.made < parquetSlots() {
		p.made++
		return &parquetGroup{cols: make([]ComboColumns, 0, resultsRowGroup), done: make(chan error, 1)}, nil
	}
	if err := p.splice(true); err != nil {
		return nil, err
	}
	return p.take()
}

// buffered is how many rows the writer holds (filling, encoding or
// waiting to be written out): at most parquetSlots() x resultsRowGroup.
func (p *parquetRows) buffered() int {
	n := 0
	if p.cur != nil {
		n += len(p.cur.cols)
	}
	for _, g := range p.inflight {
		n += len(g.cols)
	}
	return n
}

// dispatch starts encoding the row group filling (when it has rows) and
// writes out the row groups whose encoding has finished, in order.
func (p *parquetRows) dispatch() error {
	if g := p.cur; g != nil && len(g.cols) > 0 {
		p.cur = nil
		p.inflight = append(p.inflight, g)
		go func() { g.done <- p.encode(g) }()
	}
	return p.splice(false)
}

// encode writes g's rows into g.file, a Parquet file of one row group.
func (p *parquetRows) encode(g *parquetGroup) error {
	g.file.Reset()
	g.file.Grow(168 * len(g.cols)) // sweep metrics take about 160 bytes a row: no regrowth
	if p.layout != nil {
		if g.enc == nil {
			g.enc = parquet.NewWriter(&g.file, append([]parquet.WriterOption{p.layout.schema}, p.opts...)...)
		} else {
			g.enc.Reset(&g.file)
		}
		return p.layout.encode(g.enc.(*parquet.Writer), &g.lane, g.cols, g.indices)
	}
	var w *parquet.GenericWriter[parquetRow]
	if g.enc == nil {
		w = parquet.NewGenericWriter[parquetRow](&g.file, p.opts...)
		g.enc = w
	} else {
		w = g.enc.(*parquet.GenericWriter[parquetRow])
		w.Reset(&g.file)
	}
	// In batches of 1024 rows: parquet-go writes 64 rows at a time
	// whatever the batch, so the pages are those of one Write of them all.
	var batch [1024]parquetRow
	for off := 0; off < len(g.cols); off += len(batch) {
		b := batch[:min(len(batch), len(g.cols)-off)]
		for k := range b {
			b[k] = g.lane
			b[k].ComboColumns = g.cols[off+k]
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Close()
}

// splice writes the encoded row groups at the head of the queue into the
// output: those done, or (wait) the oldest at least. Each one written out
// is free to fill again.
func (p *parquetRows) splice(wait bool) error {
	for len(p.inflight) > 0 {
		g := p.inflight[0]
		var err error
		if wait {
			err = <-g.done
			wait = false
		} else {
			select {
			case err = <-g.done:
			default:
				return nil
			}
		}
		p.inflight = p.inflight[1:]
		if err == nil {
			err = p.write(g)
		}
		g.cols, g.indices = g.cols[:0], g.indices[:0]
		p.free = append(p.free, g)
		if err != nil {
			return err
		}
	}
	return nil
}

// write splices g's encoded row group into the output.
func (p *parquetRows) write(g *parquetGroup) error {
	f, err := parquet.OpenFile(bytes.NewReader(g.file.Bytes()), int64(g.file.Len()))
	if err != nil {
		return fmt.Errorf("a row group encoded in memory: %w", err)
	}
	for _, rg := range f.RowGroups() {
		if _, err := p.w.WriteRowGroup(rg); err != nil {
			return err
		}
	}
	return nil
}

func (p *parquetRows) finish(r *engine.Report) error { return p.finishWith(parquetMetadata(r)) }

// finishWith writes the row groups still encoding, then the file's
// metadata kv, and closes the file.
func (p *parquetRows) finishWith(kv [][2]string) error {
	if err := p.dispatch(); err != nil {
		p.drain()
		return err
	}
	for len(p.inflight) > 0 {
		if err := p.splice(true); err != nil {
			p.drain()
			return err
		}
	}
	for _, e := range kv {
		p.w.SetKeyValueMetadata(e[0], e[1])
	}
	return p.w.Close()
}

// drain waits for the row groups still encoding (after an error: their
// goroutines end).
func (p *parquetRows) drain() {
	for _, g := range p.inflight {
		<-g.done
	}
	p.inflight = nil
}

// parquetMetadata is the file's key/value metadata: the run's settings
// under the JSON report's names, as text (numbers as FormatFloat writes
// them, times RFC 3339 UTC), and the parity verdict.
//
//	dataset, dataset_sha256, bars, first, last, timeframe, hma, hma3 (a
//	strategy grid's: strategy, params (a JSON object of name -> range
//	text), grid (Grid.Text) and fast_below_slow when set, instead),
//	combos, aliases (the HMA3 aliases among them, Grid.Aliases), fee,
//	mode, source, bars_per_year, backend, wma, created,
//	complete ("true"/"false"), note (when any), runs (the runs, "; " between:
//	"fp64 reference direct complete 9/9"), parity_verdict ("pass",
//	"collapse", or "none" without a parity report), parity_compared
//	("fp32 vs fp64"), parity_reasons (a JSON array of strings).
func parquetMetadata(r *engine.Report) [][2]string {
	d, s := r.Dataset, settingsOf(r.Dataset, r.Params)
	kv := [][2]string{
		{"dataset", d.Name}, {"dataset_sha256", d.SHA256}, {"bars", strconv.Itoa(d.Bars)},
		{"first", d.First.UTC().Format(time.RFC3339)}, {"last", d.Last.UTC().Format(time.RFC3339)},
		{"timeframe", s.timeframe}, {"hma", r.Grid.HMA.String()}, {"hma3", r.Grid.HMA3.String()},
		{"combos", strconv.Itoa(r.Grid.Len())}, {"aliases", strconv.Itoa(r.Grid.Aliases())}, {"fee", text.FormatFloat(s.fee)}, {"mode", s.mode}, {"source", s.source},
		{"bars_per_year", text.FormatFloat(s.barsPerYear)}, {"backend", r.Backend}, {"wma", r.WMA.String()},
		{"created", r.Created.UTC().Format(time.RFC3339)}, {"complete", strconv.FormatBool(r.Complete())},
	}
	if st := r.Grid.Strategy; st != nil {
		// A strategy grid: its family, parameters and text in hma and
		// hma3's place.
		pj, _ := json.Marshal(st.Texts()) // strings always marshal
		out := kv[:6:6]
		out = append(out, [2]string{"strategy", st.Family()}, [2]string{"params", string(pj)}, [2]string{"grid", r.Grid.Text()})
		if st.FastBelowSlow() {
			out = append(out, [2]string{"fast_below_slow", "true"})
		}
		kv = append(out, kv[8:]...)
	}
	if r.Note != "" {
		kv = append(kv, [2]string{"note", r.Note})
	}
	var runs []string
	for _, run := range r.Runs {
		runs = append(runs, fmt.Sprintf("%s %s %s %s %d/%d", run.Precision, run.Backend, run.WMA, run.Shown(),
			run.Count(), run.Grid.Len()))
	}
	kv = append(kv, [2]string{"runs", strings.Join(runs, "; ")})
	verdict, reasons := "none", []string{}
	if p := r.Parity; p != nil {
		verdict = string(p.Verdict)
		reasons = append(reasons, p.Reasons...)
		kv = append(kv, [2]string{"parity_compared", r.ParityOf})
	}
	rj, _ := json.Marshal(reasons) // strings always marshal
	kv = append(kv, [2]string{"parity_verdict", verdict}, [2]string{"parity_reasons", string(rj)})
	if len(r.Robustness) > 0 {
		kv = append(kv, [2]string{"robustness", string(r.Robustness)})
	}
	return kv
}
