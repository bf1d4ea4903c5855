package shard

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/engine/output"
)

// A shard file is Parquet: one row per (dataset, precision, combo) of the
// shard's slices, with the combo's metrics (the IEEE doubles, bit for
// bit) and, on the rows of the lane that emits them, the combo's per-block
// statistics as list columns (block_* in block order, then sum3 and sum4);
// its key/value metadata hold the rest:
//
//	sweepbench.shard  JSON: format, index, count, id, the ShardDescription
//	                  (Spec, every dataset's SHA-256 and bars, the number of
//	                  shards, the version), the slices, when it was written
//	                  and the folder it ran in (dir: an addition format 1
//	                  files written before it lack, and older builds ignore)
//	sweepbench.parts  base64 of a gob stream: per slice, each lane's settings
//	                  and timings, the block edges, the parity report of the
//	                  slice's combos without its per-combo rows (gob keeps
//	                  NaN and Inf, which JSON does not) and the study's note
//	                  (shardwire.go: a hull study's in the types of format 1)
//
// A combo's parity row is its trade counts and PnL in both lanes, which
// the rows hold, and its flips, which the fp32 rows hold (flips,
// non_borderline_flips, max_flip_margin): the footer stays small however
// many combos the shard holds.
//
// pandas, polars and DuckDB read the rows like any Parquet file.

// ShardFormat is the version of the shard file layout this build writes:
// 2, format 1 with SPEC Part 2's metrics (output.ComboColumns from
// profit_factor to max_drawdown_bars) after flat_bars. A format 1 file
// (written before them) is still read, its rows' Part 2 metrics NaN, not
// computed (part2NaN), as a GPU lane leaves the trade metrics.
const ShardFormat = 2

// part2NaN marks r's SPEC Part 2 metrics not computed: a row of a format 1
// file, which has no such columns (Parquet reads them as 0).
func part2NaN(r *engine.ComboResult) {
	for _, name := range engine.MetricNames[14:] {
		r.SetValue(name, math.NaN())
	}
}

// ShardFile is one shard: shard Index of Count of the study Description
// says, its slices and what it computed of each (Parts, one per slice, in
// the same order).
type ShardFile struct {
	Index, Count int
	Description  ShardDescription
	Slices       []ShardSlice
	Parts        []*ShardPart
	Created      time.Time
	// Dir is the working folder the shard ran in (absolute), which its
	// datasets' relative paths are relative to (ShardDataPath); "" in a
	// file written before it was recorded.
	Dir string
	// format is the layout the file was read in (ShardFormat when
	// written by this build; 0 for a ShardFile built in memory).
	format int
}

// shardHeader is sweepbench.shard.
type shardHeader struct {
	Format      int              `json:"format"`
	Index       int              `json:"index"`
	Count       int              `json:"count"`
	ID          string           `json:"id"`
	Description ShardDescription `json:"description"`
	Slices      []ShardSlice     `json:"slices"`
	Created     time.Time        `json:"created"`
	Dir         string           `json:"dir,omitempty"` // absent in files written before it was recorded
}

// partMeta is one slice's entry of sweepbench.parts.
type partMeta struct {
	Slice  ShardSlice
	Runs   []ShardRun // Results left out: they are the rows
	Bounds []int      // the block edges; nil without blocks
	Parity *engine.Parity
	Note   string
}

// shardRow is one row of a shard file: the combo's columns are a results
// file's (output.ComboColumns), in their place between the combo's index and its
// per-block statistics.
type shardRow struct {
	Dataset   int32  `parquet:"dataset"`
	Precision string `parquet:"precision,dict"`
	Index     int64  `parquet:"index"`
	output.ComboColumns
	BlockBars    []int32   `parquet:"block_bars,list"`
	BlockSum     []float64 `parquet:"block_sum,list"`
	BlockSumSq   []float64 `parquet:"block_sum_sq,list"`
	BlockSumDown []float64 `parquet:"block_sum_down,list"`
	BlockSumLog  []float64 `parquet:"block_sum_log,list"`
	BlockTrades  []int32   `parquet:"block_trades,list"`
	BlockWins    []int32   `parquet:"block_wins,list"`
	Sum3         float64   `parquet:"sum3"`
	Sum4         float64   `parquet:"sum4"`
	// The combo's flips against fp64 (parity), on the fp32 lane's rows:
	// the rest of its parity row follows from the two lanes' results.
	Flips         int64   `parquet:"flips"`
	NonBorderline int64   `parquet:"non_borderline_flips"`
	MaxFlipMargin float64 `parquet:"max_flip_margin"`
}

// ShardName is the file name of shard k of n: shard-K-of-N.parquet, K
// zero-padded to N's width so that a listing sorts in order.
func ShardName(k, n int) string {
	w := len(fmt.Sprint(n - 1))
	return fmt.Sprintf("shard-%0*d-of-%d.parquet", w, k, n)
}

// WriteShard writes f as a shard file.
func WriteShard(w io.Writer, f *ShardFile) error {
	if len(f.Parts) != len(f.Slices) {
		return fmt.Errorf("shard %d of %d: %d slices but %d parts", f.Index, f.Count, len(f.Slices), len(f.Parts))
	}
	pw := parquet.NewGenericWriter[shardRow](w, parquet.Compression(output.FastSnappy{}), parquet.MaxRowsPerRowGroup(output.ParquetRowGroup))
	metas := make([]partMeta, len(f.Parts))
	rows := make([]shardRow, 0, 4096)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		_, err := pw.Write(rows)
		rows = rows[:0]
		return err
	}
	for i, part := range f.Parts {
		m := partMeta{Slice: part.Slice, Note: part.Note}
		var pc []engine.ComboParity // the parity rows, in the fp32 lane's order
		if part.Parity != nil {
			q := *part.Parity
			pc, q.Combos = q.Combos, nil
			m.Parity = &q
		}
		bs := part.Blocks
		if bs != nil {
			m.Bounds = bs.Bounds
		}
		blockLane := blockLaneOf(part.Runs)
		for _, run := range part.Runs {
			r := run
			r.Results = nil
			m.Runs = append(m.Runs, r)
			withBlocks := bs != nil && run.Precision == blockLane
			for k := range run.Results {
				res := &run.Results[k]
				row := shardRowOf(part.Slice.Dataset, run.Precision, res)
				if withBlocks {
					c := res.Index - part.Slice.Lo
					s := bs.Blocks
					a := c * s
					row.BlockBars, row.BlockSum, row.BlockSumSq = bs.Bars[a:a+s], bs.Sum[a:a+s], bs.SumSq[a:a+s]
					row.BlockSumDown, row.BlockSumLog = bs.SumDown[a:a+s], bs.SumLog[a:a+s]
					row.BlockTrades, row.BlockWins = bs.Trades[a:a+s], bs.Wins[a:a+s]
					row.Sum3, row.Sum4 = bs.Sum3[c], bs.Sum4[c]
				}
				if pc != nil && run.Precision == engine.FP32 {
					if k >= len(pc) || pc[k].Index != res.Index {
						return fmt.Errorf("shard %d of %d: the parity rows are not the fp32 lane's combos", f.Index, f.Count)
					}
					row.Flips, row.NonBorderline, row.MaxFlipMargin = int64(pc[k].Flips), int64(pc[k].NonBorderline), pc[k].MaxFlipMargin
				}
				rows = append(rows, row)
				if len(rows) == cap(rows) {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		metas[i] = m
	}
	if err := flush(); err != nil {
		return err
	}
	gb, err := encodeParts(metas, f.Description.Spec.IsStrategy())
	if err != nil {
		return fmt.Errorf("shard %d of %d: encode its parts: %w", f.Index, f.Count, err)
	}
	h := shardHeader{Format: ShardFormat, Index: f.Index, Count: f.Count, ID: f.Description.ID(), Description: f.Description,
		Slices: f.Slices, Created: f.Created.UTC(), Dir: f.Dir}
	hj, err := json.Marshal(h)
	if err != nil {
		return err
	}
	pw.SetKeyValueMetadata("sweepbench.shard", string(hj))
	pw.SetKeyValueMetadata("sweepbench.parts", base64.StdEncoding.EncodeToString(gb))
	return pw.Close()
}

// blockLaneOf is the lane that emits the per-block statistics: fp64 when
// the runs hold it, else the first.
func blockLaneOf(runs []ShardRun) engine.Precision {
	for _, r := range runs {
		if r.Precision == engine.FP64 {
			return engine.FP64
		}
	}
	if len(runs) > 0 {
		return runs[0].Precision
	}
	return engine.FP64
}

func shardRowOf(d int, p engine.Precision, r *engine.ComboResult) shardRow {
	return shardRow{Dataset: int32(d), Precision: p.String(), Index: int64(r.Index), ComboColumns: output.ComboColumnsOf(r)}
}

// ShardFileError is a file that is not a shard file this build reads.
type ShardFileError struct {
	File string
	Err  error
}

func (e *ShardFileError) Error() string {
	return fmt.Sprintf("%s: not a sweepbench shard file: %v", e.File, e.Err)
}
func (e *ShardFileError) Unwrap() error { return e.Err }

// ReadShardHeader reads a shard file's index, count, description and
// slices, not its rows (Parts stays nil). name is for errors.
func ReadShardHeader(r io.ReaderAt, size int64, name string) (*ShardFile, error) {
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, &ShardFileError{name, err}
	}
	f, _, err := shardHeaderOf(pf, name)
	return f, err
}

func shardHeaderOf(pf *parquet.File, name string) (*ShardFile, []partMeta, error) {
	hs, ok := pf.Lookup("sweepbench.shard")
	if !ok {
		return nil, nil, &ShardFileError{name, errors.New("no sweepbench.shard metadata")}
	}
	var h shardHeader
	if err := json.Unmarshal([]byte(hs), &h); err != nil {
		return nil, nil, &ShardFileError{name, fmt.Errorf("sweepbench.shard: %w", err)}
	}
	if h.Format < 1 || h.Format > ShardFormat {
		return nil, nil, &ShardFileError{name, fmt.Errorf("format %d; this build reads 1 to %d", h.Format, ShardFormat)}
	}
	ps, ok := pf.Lookup("sweepbench.parts")
	if !ok {
		return nil, nil, &ShardFileError{name, errors.New("no sweepbench.parts metadata")}
	}
	raw, err := base64.StdEncoding.DecodeString(ps)
	if err != nil {
		return nil, nil, &ShardFileError{name, fmt.Errorf("sweepbench.parts: %w", err)}
	}
	var metas []partMeta
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&metas); err != nil {
		return nil, nil, &ShardFileError{name, fmt.Errorf("sweepbench.parts: %w", err)}
	}
	if len(metas) != len(h.Slices) {
		return nil, nil, &ShardFileError{name, fmt.Errorf("%d slices but %d parts", len(h.Slices), len(metas))}
	}
	return &ShardFile{Index: h.Index, Count: h.Count, Description: h.Description, Slices: h.Slices, Created: h.Created, Dir: h.Dir, format: h.Format}, metas, nil
}

// ReadShard reads a whole shard file: its header and every part with its
// results and per-block statistics.
func ReadShard(r io.ReaderAt, size int64, name string) (*ShardFile, error) {
	return ReadShardDataset(r, size, name, -1)
}

// ReadShardDataset is ReadShard keeping only dataset d's part (every part
// when d < 0): a merge holds one dataset's results at a time.
func ReadShardDataset(r io.ReaderAt, size int64, name string, d int) (*ShardFile, error) {
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, &ShardFileError{name, err}
	}
	f, metas, err := shardHeaderOf(pf, name)
	if err != nil {
		return nil, err
	}
	if d >= 0 {
		var keep []partMeta
		for _, m := range metas {
			if m.Slice.Dataset == d {
				keep = append(keep, m)
			}
		}
		metas = keep
	}
	byDataset := map[int]*ShardPart{}
	flips := map[int][]engine.ComboParity{}     // per dataset, the fp32 rows' flips by combo
	lanes := map[int]map[engine.Precision]int{} // part's run index by precision
	for _, m := range metas {
		p := &ShardPart{Slice: m.Slice, Parity: m.Parity, Note: m.Note, Runs: m.Runs}
		if m.Bounds != nil {
			p.Blocks = engine.NewBlockStats(m.Slice.Hi-m.Slice.Lo, m.Bounds)
		}
		lanes[m.Slice.Dataset] = map[engine.Precision]int{}
		for i, run := range p.Runs {
			lanes[m.Slice.Dataset][run.Precision] = i
			p.Runs[i].Results = make([]engine.ComboResult, 0, m.Slice.Hi-m.Slice.Lo)
		}
		byDataset[m.Slice.Dataset] = p
		if m.Parity != nil {
			flips[m.Slice.Dataset] = make([]engine.ComboParity, m.Slice.Hi-m.Slice.Lo)
		}
		f.Parts = append(f.Parts, p)
	}
	rd := parquet.NewGenericReader[shardRow](pf)
	defer rd.Close()
	buf := make([]shardRow, 4096)
	for {
		n, rerr := rd.Read(buf)
		for i := range buf[:n] {
			row := &buf[i]
			if d >= 0 && int(row.Dataset) != d {
				continue
			}
			part := byDataset[int(row.Dataset)]
			prec, perr := engine.ParsePrecisions(row.Precision)
			if part == nil || perr != nil || len(prec) != 1 {
				return nil, &ShardFileError{name, fmt.Errorf("a row of dataset %d, precision %q, which no slice holds", row.Dataset, row.Precision)}
			}
			li, ok := lanes[int(row.Dataset)][prec[0]]
			c := int(row.Index) - part.Slice.Lo
			if !ok || c < 0 || c >= part.Slice.Hi-part.Slice.Lo {
				return nil, &ShardFileError{name, fmt.Errorf("a row of combo %d of dataset %d outside its slice [%d, %d)", row.Index, row.Dataset, part.Slice.Lo, part.Slice.Hi)}
			}
			res := row.Result(int(row.Index))
			if f.format == 1 {
				part2NaN(&res)
			}
			part.Runs[li].Results = append(part.Runs[li].Results, res)
			if fl := flips[int(row.Dataset)]; fl != nil && prec[0] == engine.FP32 {
				fl[c] = engine.ComboParity{Flips: int(row.Flips), NonBorderline: int(row.NonBorderline), MaxFlipMargin: row.MaxFlipMargin}
			}
			if bs := part.Blocks; bs != nil && len(row.BlockSum) > 0 {
				s := bs.Blocks
				if len(row.BlockBars) != s || len(row.BlockSum) != s || len(row.BlockSumSq) != s || len(row.BlockSumDown) != s ||
					len(row.BlockSumLog) != s || len(row.BlockTrades) != s || len(row.BlockWins) != s {
					return nil, &ShardFileError{name, fmt.Errorf("combo %d of dataset %d: per-block statistics of another block count than %d", row.Index, row.Dataset, s)}
				}
				a := c * s
				copy(bs.Bars[a:a+s], row.BlockBars)
				copy(bs.Sum[a:a+s], row.BlockSum)
				copy(bs.SumSq[a:a+s], row.BlockSumSq)
				copy(bs.SumDown[a:a+s], row.BlockSumDown)
				copy(bs.SumLog[a:a+s], row.BlockSumLog)
				copy(bs.Trades[a:a+s], row.BlockTrades)
				copy(bs.Wins[a:a+s], row.BlockWins)
				bs.Sum3[c], bs.Sum4[c] = row.Sum3, row.Sum4
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, &ShardFileError{name, rerr}
		}
	}
	for _, p := range f.Parts {
		for _, run := range p.Runs {
			if len(run.Results) != p.Slice.Hi-p.Slice.Lo {
				return nil, &ShardFileError{name, fmt.Errorf("dataset %d, %s: %d rows for the %d combos of its slice", p.Slice.Dataset, run.Precision, len(run.Results), p.Slice.Hi-p.Slice.Lo)}
			}
		}
		if p.Parity != nil {
			if err := p.parityRows(flips[p.Slice.Dataset]); err != nil {
				return nil, &ShardFileError{name, err}
			}
		}
	}
	return f, nil
}

// parityRows rebuilds the part's per-combo parity rows from its fp64 and
// fp32 results (comboParity) and the flips read from the fp32 rows.
func (p *ShardPart) parityRows(fl []engine.ComboParity) error {
	var ref, test *ShardRun
	for i := range p.Runs {
		switch p.Runs[i].Precision {
		case engine.FP64:
			ref = &p.Runs[i]
		case engine.FP32:
			test = &p.Runs[i]
		}
	}
	if ref == nil || test == nil {
		return fmt.Errorf("dataset %d: a parity report without both lanes", p.Slice.Dataset)
	}
	p.Parity.Combos = make([]engine.ComboParity, len(ref.Results))
	for k := range ref.Results {
		cp := engine.ComboParityOf(&ref.Results[k], &test.Results[k])
		cp.Flips, cp.NonBorderline, cp.MaxFlipMargin = fl[k].Flips, fl[k].NonBorderline, fl[k].MaxFlipMargin
		p.Parity.Combos[k] = cp
	}
	return nil
}
