package output

import (
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// blockRow is one row of the per-block statistics file (WriteBlocksParquet).
type blockRow struct {
	HMA       int64   `parquet:"hma"`
	HMA3      int64   `parquet:"hma3"`
	Block     int64   `parquet:"block"`      // 0 = earliest
	FirstTime int64   `parquet:"first_time"` // the block's first return's bar, Unix nanoseconds
	LastTime  int64   `parquet:"last_time"`  // its last return's bar
	Bars      int64   `parquet:"bars"`       // bar returns in the block
	Sum       float64 `parquet:"sum"`        // sum of rs
	SumSq     float64 `parquet:"sum_sq"`     // sum of rs^2
	SumDown   float64 `parquet:"sum_down"`   // sum of min(rs,0)^2
	LogGrowth float64 `parquet:"log_growth"` // sum of log(1+rs)
	Trades    int64   `parquet:"trades"`     // trades closed in the block
	Wins      int64   `parquet:"wins"`
	Sum3      float64 `parquet:"sum3"` // the combo's sum of rs^3 over the whole sample (every row of the combo)
	Sum4      float64 `parquet:"sum4"` // its sum of rs^4
}

// ErrNoBlockStats: a report without per-block statistics asked to write them.
var ErrNoBlockStats = errors.New("the report has no per-block statistics (run with --blocks)")

// WriteBlocksParquet writes the report's per-block statistics
// (Report.Blocks, docs/SPEC.md "Robustness: decomposable metrics") as a
// Parquet file: one row per combo and block (blockRow's columns: the
// combo's lengths, the block's index and time span, its sums, log growth,
// trades and wins, and the combo's whole-sample sum3 and sum4 on each of
// its rows), in grid order then block order, with the run the statistics
// come from in the metadata; bars (the study's, may be nil: the times are
// then 0) give each block's first and last bar times. A user recomputes
// any union's metrics from it (SPEC's table). Errors: ErrNoBlockStats, the
// writer's.
func WriteBlocksParquet(w io.Writer, r *engine.Report, bars *engine.Bars) error {
	bs := r.Blocks
	if bs == nil {
		return ErrNoBlockStats
	}
	if pc := paramColsOf(r.Grid); pc != nil {
		return writeStrategyBlocks(w, r, bars, pc)
	}
	pw := parquet.NewGenericWriter[blockRow](w, parquet.Compression(FastSnappy{}), parquet.DataPageVersion(1),
		parquet.MaxRowsPerRowGroup(ParquetRowGroup))
	rows := make([]blockRow, 0, 4096)
	n := len(bs.Bounds) - 1
	times := blockTimes(bs, bars)
	for c := 0; c < bs.Combos; c++ {
		cb := r.Grid.At(c)
		for b := 0; b < n; b++ {
			i := c*bs.Blocks + b
			rows = append(rows, blockRow{HMA: int64(cb.HMA), HMA3: int64(cb.HMA3), Block: int64(b),
				FirstTime: times[b][0], LastTime: times[b][1], Bars: int64(bs.Bars[i]), Sum: bs.Sum[i], SumSq: bs.SumSq[i],
				SumDown: bs.SumDown[i], LogGrowth: bs.SumLog[i], Trades: int64(bs.Trades[i]), Wins: int64(bs.Wins[i]),
				Sum3: bs.Sum3[c], Sum4: bs.Sum4[c]})
			if len(rows) == cap(rows) {
				if _, err := pw.Write(rows); err != nil {
					return err
				}
				rows = rows[:0]
			}
		}
	}
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	setBlocksMetadata(pw, r, n)
	return pw.Close()
}

// setBlocksMetadata sets the per-block file's metadata.
func setBlocksMetadata(pw interface{ SetKeyValueMetadata(k, v string) }, r *engine.Report, n int) {
	pw.SetKeyValueMetadata("run", r.BlocksOf.String())
	pw.SetKeyValueMetadata("blocks", text.FormatFloat(float64(n)))
	pw.SetKeyValueMetadata("bars_per_year", text.FormatFloat(r.Params.BarsPerYear))
	pw.SetKeyValueMetadata("dataset", r.Dataset.Name)
	pw.SetKeyValueMetadata("dataset_sha256", r.Dataset.SHA256)
	if r.Grid.Strategy != nil {
		pw.SetKeyValueMetadata("strategy", r.Grid.Family())
		pw.SetKeyValueMetadata("grid", r.Grid.Text())
	}
}

// writeStrategyBlocks is WriteBlocksParquet for a strategy grid: the
// combo's hma and hma3 columns are "strategy" and the grid's parameter
// columns (as in the results file: a leg's kind a string, a length INT64,
// a decimal DOUBLE), the block's columns follow as blockRow's.
func writeStrategyBlocks(w io.Writer, r *engine.Report, bars *engine.Bars, pc *paramCols) error {
	bs := r.Blocks
	var fs []reflect.StructField
	add := func(t reflect.Type, tag reflect.StructTag) {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("F%d", len(fs)), Type: t, Tag: tag})
	}
	str, i64, f64 := reflect.TypeOf(""), reflect.TypeOf(int64(0)), reflect.TypeOf(0.0)
	add(str, `parquet:"strategy,dict"`)
	for _, a := range pc.axes {
		if a.leg {
			add(str, reflect.StructTag(`parquet:"`+a.name+`_kind,dict"`))
		}
		if a.integer {
			add(i64, reflect.StructTag(`parquet:"`+a.name+`"`))
		} else {
			add(f64, reflect.StructTag(`parquet:"`+a.name+`"`))
		}
	}
	first := len(fs)
	bt := reflect.TypeOf(blockRow{})
	for i := 2; i < bt.NumField(); i++ { // past hma, hma3
		add(bt.Field(i).Type, bt.Field(i).Tag)
	}
	rt := reflect.StructOf(fs)
	schema := parquet.SchemaOf(reflect.New(rt).Elem().Interface())
	pw := parquet.NewWriter(w, schema, parquet.Compression(FastSnappy{}), parquet.DataPageVersion(1),
		parquet.MaxRowsPerRowGroup(ParquetRowGroup))
	n := len(bs.Bounds) - 1
	times := blockTimes(bs, bars)
	v := reflect.New(rt).Elem()
	for c := 0; c < bs.Combos; c++ {
		v.Field(0).SetString(pc.family)
		f := 1
		for k, p := range pc.point(c) {
			a := pc.axes[k]
			if a.leg {
				v.Field(f).SetString(p.Kind)
				f++
			}
			if a.integer {
				v.Field(f).SetInt(int64(p.Value))
			} else {
				v.Field(f).SetFloat(p.Value)
			}
			f++
		}
		for b := 0; b < n; b++ {
			i := c*bs.Blocks + b
			row := blockRow{Block: int64(b),
				FirstTime: times[b][0], LastTime: times[b][1], Bars: int64(bs.Bars[i]), Sum: bs.Sum[i], SumSq: bs.SumSq[i],
				SumDown: bs.SumDown[i], LogGrowth: bs.SumLog[i], Trades: int64(bs.Trades[i]), Wins: int64(bs.Wins[i]),
				Sum3: bs.Sum3[c], Sum4: bs.Sum4[c]}
			rv := reflect.ValueOf(row)
			for j := 2; j < rv.NumField(); j++ {
				v.Field(first + j - 2).Set(rv.Field(j))
			}
			if err := pw.Write(v.Interface()); err != nil {
				return err
			}
		}
	}
	setBlocksMetadata(pw, r, n)
	return pw.Close()
}

// blockTimes are each block's first and last bar times (the bar a return
// ends on: return k runs from bar k to bar k+1; Unix nanoseconds), 0
// without the bars.
func blockTimes(bs *engine.BlockStats, bars *engine.Bars) [][2]int64 {
	out := make([][2]int64, len(bs.Bounds)-1)
	if bars == nil || bars.Len() < bs.Bounds[len(bs.Bounds)-1]+1 {
		return out
	}
	for b := range out {
		out[b] = [2]int64{bars.Time[bs.Bounds[b]+1], bars.Time[bs.Bounds[b+1]]}
	}
	return out
}
