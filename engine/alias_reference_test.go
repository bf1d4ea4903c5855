package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/data/datatest"
	"sweepbench/engine/output"
	"sweepbench/reference"
)

// aliasSweep runs job on the reference backend, with Sweep computing each
// HMA3 twin pair once (merge) or every combo on its own.
func aliasSweep(t *testing.T, job *engine.Job, merge bool, skip func(int) bool) *engine.Run {
	t.Helper()
	defer engine.SetMergeAliases(engine.SetMergeAliases(merge))
	run, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{Skip: skip})
	if err != nil || run.Status != engine.StatusComplete {
		t.Fatalf("sweep (merge %v): err %v, status %s", merge, err, run.Status)
	}
	return run
}

// TestSweepAliasesReference: on the reference backend, a grid whose HMA3
// range has step 1 gives every combo the bits of the sweep of every combo
// and of the per-length, per-combo recomputation (conformance.Reference:
// reference.HMA3 of each length on its own, then reference.Backtest), in
// fp64 and fp32, for even and odd starts and ends and HMA3 ranges of one
// and two values; resumed with some combos done (one of a twin pair, both
// of another), it returns exactly the others, with the same bits.
func TestSweepAliasesReference(t *testing.T) {
	bars := datatest.TickWalk(datatest.Rand(t), 2000, 100, 0.01)
	params := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
	hma := engine.Range{Start: 4, Stop: 40, Step: 12}
	for _, c := range []struct {
		name string
		hma3 engine.Range
	}{
		{"even start, odd end", engine.Range{Start: 6, Stop: 17, Step: 1}},
		{"odd start, even end", engine.Range{Start: 7, Stop: 18, Step: 1}},
		{"even start, even end", engine.Range{Start: 8, Stop: 18, Step: 1}},
		{"odd start, odd end", engine.Range{Start: 9, Stop: 19, Step: 1}},
		{"one value", engine.Range{Start: 11, Stop: 11, Step: 1}},
		{"two values, one p", engine.Range{Start: 12, Stop: 13, Step: 1}},
		{"two values, two p", engine.Range{Start: 13, Stop: 14, Step: 1}},
	} {
		for _, prec := range []engine.Precision{engine.FP64, engine.FP32} {
			t.Run(fmt.Sprintf("%s/%s", c.name, prec), func(t *testing.T) {
				g := engine.Grid{HMA: hma, HMA3: c.hma3}
				job := &engine.Job{Bars: bars, Grid: g, Params: params, Precision: prec, WMA: engine.Direct}
				merged, plain := aliasSweep(t, job, true, nil), aliasSweep(t, job, false, nil)
				want := conformance.Reference(t, job)
				trades := 0
				for i := range g.Len() {
					m, p := merged.Results[i], plain.Results[i]
					if m.Index != i || m.Combo != g.At(i) || p.Index != i || p.Combo != g.At(i) {
						t.Fatalf("result %d: merged %d %+v, plain %d %+v, want %+v", i, m.Index, m.Combo, p.Index, p.Combo, g.At(i))
					}
					if name, same := conformance.SameMetrics(m.Metrics, p.Metrics); !same {
						t.Errorf("combo %+v: %s %v merged, %v computed on its own", m.Combo, name, m.Metrics, p.Metrics)
					}
					if name, same := conformance.SameMetrics(m.Metrics, want[i]); !same {
						t.Errorf("combo %+v: %s differs from the per-length recomputation", m.Combo, name)
					}
					trades += m.TotalTrades
				}
				if trades == 0 {
					t.Fatal("no trade: the case proves nothing")
				}

				// Resumed: hma3 index 1 done alone (in 6:17 its twin is
				// index 0; in 7:18, index 2), indices 3 and 4 both, and
				// the whole last HMA row.
				n3 := g.HMA3.Len()
				skip := func(i int) bool { col := i % n3; return col == 1 || col == 3 || col == 4 || i >= g.Len()-n3 }
				resumed := aliasSweep(t, job, true, skip)
				k := 0
				for i := range g.Len() {
					if skip(i) {
						continue
					}
					if k >= len(resumed.Results) || resumed.Results[k].Index != i {
						t.Fatalf("resumed: result %d is not combo %d (%d results)", k, i, len(resumed.Results))
					}
					if name, same := conformance.SameMetrics(resumed.Results[k].Metrics, plain.Results[i].Metrics); !same || resumed.Results[k].Combo != g.At(i) {
						t.Errorf("resumed combo %d: %s differs", i, name)
					}
					k++
				}
				if k != len(resumed.Results) {
					t.Errorf("resumed: %d results, want %d", len(resumed.Results), k)
				}
			})
		}
	}
}

// unshared is ind with every h3 series a copy of its own (no twin shares
// a slice), as an Arithmetic that does not merge aliases would give it.
func unshared[F engine.Float](ind *engine.Indicators[F]) *engine.Indicators[F] {
	out := *ind
	out.H3 = map[int][]F{}
	for L, s := range ind.H3 {
		out.H3[L] = append([]F(nil), s...)
	}
	return &out
}

// TestParityAliases: a study on an HMA3 range of step 1 (fp32 through
// prefix sums at FIL-like prices: thousands of flips, more than the list
// keeps, twins tied on margin) gives the parity report of the study that
// computes every combo on its own; and the report whose twin flips are
// copied (the series shared per p) is the one that walks every combo's
// positions (each series a copy of its own): same counts, same worst
// flips in the same order (ties by grid index, then bar).
func TestParityAliases(t *testing.T) {
	bars := datatest.RandomWalk(datatest.Rand(t), 3000, 30000, 0.002)
	ds := &data.Dataset{Bars: *bars, Info: data.Info{Name: "aliases", Bars: bars.Len(), MedianSpacing: datatest.Spacing}}
	params := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600}
	g := engine.Grid{HMA: engine.Range{Start: 5, Stop: 45, Step: 10}, HMA3: engine.Range{Start: 7, Stop: 22, Step: 1}}
	study := func(merge bool) *engine.Report {
		defer engine.SetMergeAliases(engine.SetMergeAliases(merge))
		s := &engine.Study{Dataset: ds, Grid: g, Params: params, Precisions: []engine.Precision{engine.FP64, engine.FP32},
			WMA: engine.Prefix, Backend: reference.New()}
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
		if err != nil || rep.Parity == nil {
			t.Fatalf("merge %v: err %v, parity %v", merge, err, rep.Parity)
		}
		return rep
	}
	rep, plain := study(true), study(false)
	p := rep.Parity
	if p.FlipCount <= engine.MaxFlipsListed || p.CombosCompared != g.Len() {
		t.Fatalf("%d flips over %d combos: want more than the %d listed, over all %d", p.FlipCount, p.CombosCompared, engine.MaxFlipsListed, g.Len())
	}
	if !reflect.DeepEqual(p, plain.Parity) {
		t.Errorf("parity of the merged study differs from the study of every combo:\n got %+v\nwant %+v", p, plain.Parity)
	}
	twins := 0
	for i := 1; i < len(p.Flips); i++ {
		a, b := p.Flips[i-1], p.Flips[i]
		if b.Index == a.Index+1 && b.Bar == a.Bar && b.HMA3 == engine.HMA3Twin(a.HMA3) && b.Margin == a.Margin {
			twins++
		}
	}
	if twins == 0 {
		t.Error("no twin flips side by side in the list: the case does not test the tie order")
	}

	ctx := context.Background()
	ind64, err := reference.BuildIndicators[float64](ctx, bars, g, params.Source, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	ind32, err := reference.BuildIndicators[float32](ctx, bars, g, params.Source, engine.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	in := engine.ParityInput[float64, float32]{Bars: bars, Grid: g, Params: params, Ref: rep.Run(engine.FP64), Test: rep.Run(engine.FP32),
		RefInd: ind64, TestInd: ind32}
	shared, err := engine.Compare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	in.RefInd, in.TestInd = unshared(ind64), unshared(ind32)
	each, err := engine.Compare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shared, each) || !reflect.DeepEqual(shared, p) {
		t.Errorf("twin flips copied differ from every combo's own:\n got %+v\nwant %+v", shared, each)
	}
}

// TestReportAliases: the table's grid line, the JSON report's params and
// the Parquet metadata say how many combos were aliases (hma 10:40 x hma3
// 10:49: p 5..24, 20 of each HMA length's 40 combos, 620 of 1,240); a grid
// without any says nothing in the table and the JSON, 0 in the metadata.
func TestReportAliases(t *testing.T) {
	for _, c := range []struct {
		grid    engine.Grid
		aliases int
		line    string
	}{
		{engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 1}, HMA3: engine.Range{Start: 10, Stop: 49, Step: 1}}, 620,
			"= 1,240 combos (620 hma3 aliases, computed with their twin (L and L+1 share p = floor(L/2))); fee"},
		{engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 1}, HMA3: engine.Range{Start: 10, Stop: 49, Step: 3}}, 0,
			"= 434 combos; fee"},
	} {
		g := c.grid
		rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "reference",
			Requested: []engine.Precision{engine.FP64},
			Runs: []*engine.Run{{Backend: "reference", Precision: engine.FP64, Grid: g, Status: engine.StatusComplete,
				Results: []engine.ComboResult{{Index: 0, Combo: g.At(0)}, {Index: 1, Combo: g.At(1)}}}}}
		var tab bytes.Buffer
		if err := output.WriteTable(&tab, rep, 5); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(tab.String(), c.line) {
			t.Errorf("table lacks %q:\n%s", c.line, tab.String())
		}
		var js bytes.Buffer
		if err := output.WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Params map[string]json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		got, ok := doc.Params["aliases"]
		if (c.aliases > 0) != ok || (ok && string(got) != fmt.Sprint(c.aliases)) {
			t.Errorf("JSON params.aliases = %s (present %v), want %d", got, ok, c.aliases)
		}
		var pq bytes.Buffer
		if err := output.WriteParquet(&pq, rep); err != nil {
			t.Fatal(err)
		}
		if meta := parquetMeta(t, pq.Bytes()); meta["aliases"] != fmt.Sprint(c.aliases) {
			t.Errorf("Parquet metadata aliases = %q, want %d", meta["aliases"], c.aliases)
		}
	}
}

// BenchmarkSweepAliases: the reference backend in fp64 on an HMA3 range of
// step 1 (hma 10:40:3 x hma3 10:49 = 440 combos, p 5..24: 220 aliases)
// over the first 150,000 FIL bars, end to end (series built in Prepare
// every time), computing every combo on its own and each twin pair once;
// combos/s counts the grid's combos either way.
func BenchmarkSweepAliases(b *testing.B) {
	job := &engine.Job{Bars: datatest.FIL(b, 150000),
		Grid:   engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 3}, HMA3: engine.Range{Start: 10, Stop: 49, Step: 1}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precision: engine.FP64, WMA: engine.Direct}
	for _, c := range []struct {
		name  string
		merge bool
	}{{"every", false}, {"distinct", true}} {
		b.Run(c.name, func(b *testing.B) {
			defer engine.SetMergeAliases(engine.SetMergeAliases(c.merge))
			combos := 0
			for b.Loop() {
				run, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{})
				if err != nil {
					b.Fatal(err)
				}
				combos += len(run.Results)
			}
			b.ReportMetric(float64(combos)/b.Elapsed().Seconds(), "combos/s")
		})
	}
}

// parquetMeta is a Parquet file's key/value metadata.
func parquetMeta(t *testing.T, b []byte) map[string]string {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	return meta
}
