package shard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/shard"
)

// sameResults reports the first combo whose result differs, bit for bit
// (NaN included), between a and b; "" when none does.
func sameResults(a, b []engine.ComboResult) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d results vs %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Index != y.Index || x.Combo != y.Combo {
			return fmt.Sprintf("result %d: combo %d %v vs %d %v", i, x.Index, x.Combo, y.Index, y.Combo)
		}
		for _, name := range engine.MetricNames {
			u, _ := x.Metrics.Value(name)
			v, _ := y.Metrics.Value(name)
			if math.Float64bits(u) != math.Float64bits(v) {
				return fmt.Sprintf("combo %d (%d, %d): %s %v vs %v", x.Index, x.HMA, x.HMA3, name, u, v)
			}
		}
	}
	return ""
}

// TestShardsMergeBitIdentical cuts a study (prefix fp32, so that the
// parity report has flips and a collapse; HMA3 step 1, so that aliases
// fall on both sides of a slice's edge; per-block statistics) into N
// shards for several N, runs each slice, writes and reads back its shard
// file, and merges them: every metric of every combo, the per-block
// statistics and the parity report are those of the single run.
func TestShardsMergeBitIdentical(t *testing.T) {
	ctx := context.Background()
	ds := head(openDataset(t, "embedded:filusdt-1m"), 12000)
	s := study(t, ds, "10:40:6", "10:17", engine.Prefix)
	s.Blocks = 8
	single, err := engine.RunStudy(ctx, s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if single.Parity == nil || single.Parity.FlipCount == 0 || single.Blocks == nil {
		t.Fatal("the single run has no flips or no block statistics: the test proves nothing")
	}
	desc := shard.ShardDescription{Spec: engine.Spec{HMA: "10:40:6", HMA3: "10:17"}, Shards: 0, Version: "test",
		Datasets: []shard.ShardDataset{{Data: "d", SHA256: ds.Info.SHA256, Bars: ds.Bars.Len()}}}
	for _, n := range []int{1, 2, 3, 7, 17} {
		t.Run(fmt.Sprintf("N%d", n), func(t *testing.T) {
			plan := shard.PlanShards([]int{ds.Bars.Len()}, s.Grid, n)
			desc.Shards = n
			var parts []*shard.ShardPart
			for k, slices := range plan {
				f := &shard.ShardFile{Index: k, Count: n, Description: desc, Slices: slices}
				for _, sl := range slices {
					p, err := shard.RunSlice(ctx, s, sl.Lo, sl.Hi, nil)
					if err != nil {
						t.Fatal(err)
					}
					p.Slice = sl
					f.Parts = append(f.Parts, p)
				}
				var b bytes.Buffer
				if err := shard.WriteShard(&b, f); err != nil {
					t.Fatal(err)
				}
				back, err := shard.ReadShard(bytes.NewReader(b.Bytes()), int64(b.Len()), "shard")
				if err != nil {
					t.Fatal(err)
				}
				if back.Index != k || back.Count != n || !reflect.DeepEqual(back.Slices, f.Slices) {
					t.Fatalf("header read back: %d/%d %v", back.Index, back.Count, back.Slices)
				}
				parts = append(parts, back.Parts...)
			}
			rep, err := shard.MergeParts(s, parts)
			if err != nil {
				t.Fatal(err)
			}
			for i, run := range single.Runs {
				if d := sameResults(run.Results, rep.Runs[i].Results); d != "" {
					t.Fatalf("%s: %s", run.Precision, d)
				}
			}
			if !reflect.DeepEqual(single.Blocks, rep.Blocks) {
				t.Error("the per-block statistics differ")
			}
			if !reflect.DeepEqual(single.Parity, rep.Parity) {
				t.Errorf("the parity reports differ:\nsingle %+v\nmerged %+v", *single.Parity, *rep.Parity)
			}
			if single.Note != rep.Note {
				t.Errorf("note %q, want %q", rep.Note, single.Note)
			}
		})
	}
}

// planNaive is PlanShards' rule applied unit by unit.
func planNaive(bars []int, g engine.Grid, n int) [][]shard.ShardSlice {
	out := make([][]shard.ShardSlice, n)
	cost := func(i int) float64 { // 1 for a computed combo, 0 for an alias
		j := i % g.HMA3.Len()
		if g.Distinct().Len() != g.Len() && j > 0 && g.HMA3.At(j-1)/2 == g.HMA3.At(j)/2 {
			return 0
		}
		return 1
	}
	var total float64
	for _, b := range bars {
		for i := 0; i < g.Len(); i++ {
			total += cost(i) * float64(b)
		}
	}
	var pos float64
	for d, b := range bars {
		cur, lo := -1, 0
		for i := 0; i < g.Len(); i++ {
			k := min(int(pos*float64(n)/total), n-1)
			if k != cur {
				if cur >= 0 {
					out[cur] = append(out[cur], shard.ShardSlice{Dataset: d, Lo: lo, Hi: i})
				}
				cur, lo = k, i
			}
			pos += cost(i) * float64(b)
		}
		out[cur] = append(out[cur], shard.ShardSlice{Dataset: d, Lo: lo, Hi: g.Len()})
	}
	return out
}

// TestPlanShardsBalancesBarSteps: every combo of every dataset in exactly
// one slice, in order, and the shards' bar-steps within one combo's cost
// of the mean.
func TestPlanShardsBalancesBarSteps(t *testing.T) {
	g := engine.Grid{HMA: mustRange(t, "--hma", "10:100:10"), HMA3: mustRange(t, "--hma3", "10:40")}
	bars := []int{1000, 50000, 7, 20000}
	for _, n := range []int{1, 2, 5, 13, 400} {
		plan := shard.PlanShards(bars, g, n)
		if naive := planNaive(bars, g, n); !reflect.DeepEqual(plan, naive) {
			t.Fatalf("N=%d: the plan is not the unit-by-unit rule's", n)
		}
		if len(plan) != n {
			t.Fatalf("%d shards planned, want %d", len(plan), n)
		}
		next := map[int]int{}
		var total int64
		work := make([]int64, n)
		for k, slices := range plan {
			for _, sl := range slices {
				if sl.Lo != next[sl.Dataset] || sl.Hi <= sl.Lo {
					t.Fatalf("N=%d shard %d: slice %+v after %d", n, k, sl, next[sl.Dataset])
				}
				next[sl.Dataset] = sl.Hi
				for i := sl.Lo; i < sl.Hi; i++ {
					if c := g.At(i); c.HMA3%2 == 0 || c.HMA3 == 10 {
						work[k] += int64(bars[sl.Dataset])
					}
				}
			}
			total += work[k]
		}
		for d := range bars {
			if next[d] != g.Len() {
				t.Fatalf("N=%d dataset %d covered up to %d of %d", n, d, next[d], g.Len())
			}
		}
		for k := range work {
			if dev := math.Abs(float64(work[k]) - float64(total)/float64(n)); dev > 50000+1 {
				t.Errorf("N=%d shard %d: %d bar-steps, mean %d", n, k, work[k], total/int64(n))
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		name, v string
		env     map[string]string
		k, n    int
		bad     bool
	}{
		{"plain", "2/5", nil, 2, 5, false},
		{"first", "0/1", nil, 0, 1, false},
		{"K too large", "5/5", nil, 0, 0, true},
		{"negative", "-1/5", nil, 0, 0, true},
		{"no slash", "3", nil, 0, 0, true},
		{"hex", "0x1/4", nil, 0, 0, true},
		{"slurm", "auto", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, 3, 4, false},
		{"slurm without count", "auto", map[string]string{"SLURM_ARRAY_TASK_ID": "3"}, 0, 0, true},
		{"k8s", "auto", map[string]string{"JOB_COMPLETION_INDEX": "1", "SHARD_COUNT": "8"}, 1, 8, false},
		{"auto without env", "auto", nil, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, n, err := shard.ParseShard(c.v, env(c.env))
			var se *shard.ShardSpecError
			if c.bad != (err != nil) || (err != nil && !errors.As(err, &se)) {
				t.Fatalf("ParseShard(%q) = %d, %d, %v", c.v, k, n, err)
			}
			if !c.bad && (k != c.k || n != c.n) {
				t.Fatalf("ParseShard(%q) = %d/%d, want %d/%d", c.v, k, n, c.k, c.n)
			}
		})
	}
}

// TestCheckShards: a missing and a doubled shard are named by index, a
// shard of another dataset by the hash that differs.
func TestCheckShards(t *testing.T) {
	desc := shard.ShardDescription{Spec: engine.DefaultSpec(), Shards: 3, Version: "v",
		Datasets: []shard.ShardDataset{{Data: "a.csv", SHA256: "aa", Bars: 10}}}
	f := func(k int, d shard.ShardDescription) *shard.ShardFile {
		return &shard.ShardFile{Index: k, Count: d.Shards, Description: d}
	}
	var cov *shard.ShardCoverageError
	err := shard.CheckShards([]*shard.ShardFile{f(0, desc), f(2, desc)}, []string{"s0", "s2"})
	if !errors.As(err, &cov) || !cov.Missing || cov.Index != 1 {
		t.Errorf("missing shard 1: %v", err)
	}
	err = shard.CheckShards([]*shard.ShardFile{f(0, desc), f(1, desc), f(1, desc), f(2, desc)}, []string{"s0", "s1", "s1b", "s2"})
	if !errors.As(err, &cov) || cov.Missing || cov.Index != 1 || len(cov.Files) != 2 {
		t.Errorf("doubled shard 1: %v", err)
	}
	other := desc
	other.Datasets = []shard.ShardDataset{{Data: "a.csv", SHA256: "bb", Bars: 10}}
	var mis *shard.ShardMismatchError
	err = shard.CheckShards([]*shard.ShardFile{f(0, desc), f(1, other), f(2, desc)}, []string{"s0", "s1", "s2"})
	if !errors.As(err, &mis) || mis.File != "s1" || mis.Got != "bb" {
		t.Errorf("another dataset's shard: %v", err)
	}
	if err := shard.CheckShards([]*shard.ShardFile{f(0, desc), f(1, desc), f(2, desc)}, []string{"s0", "s1", "s2"}); err != nil {
		t.Errorf("a whole set: %v", err)
	}
}

// BenchmarkPlanShards plans 10^8 combo-datasets (1000 x 1000 combos, HMA3
// step 1, over 100 datasets) into 64 shards: what every task of such a
// study spends before it computes.
func BenchmarkPlanShards(b *testing.B) {
	g := engine.Grid{HMA: mustRange(b, "--hma", "10:1009"), HMA3: mustRange(b, "--hma3", "12:1011")}
	bars := make([]int, 100)
	for i := range bars {
		bars[i] = 150000 + i
	}
	for b.Loop() {
		shard.PlanShards(bars, g, 64)
	}
}

// BenchmarkWriteShard writes a shard of 250,000 combos in both precisions
// (no blocks, no parity): the rate at which a task writes its file.
func BenchmarkWriteShard(b *testing.B) {
	const n = 250000
	g := engine.Grid{HMA: mustRange(b, "--hma", "10:509"), HMA3: mustRange(b, "--hma3", "12:511")}
	part := &shard.ShardPart{Slice: shard.ShardSlice{Lo: 0, Hi: n}}
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		run := shard.ShardRun{Precision: p, Backend: "reference"}
		for i := 0; i < n; i++ {
			x := float64(i)
			run.Results = append(run.Results, engine.ComboResult{Index: i, Combo: g.At(i), Metrics: engine.Metrics{
				TotalReturn: math.Sin(x), CAGR: math.Cos(x), Sharpe: x / 7, Sortino: x / 11, MaxDrawdown: 1 / (x + 1),
				Calmar: x / 13, WinRate: 0.5, TotalTrades: i % 1000, VaR95: -x / 1e6, CVaR95: -x / 1e5, Omega: 1.1,
				LongBars: i, ShortBars: i / 2, FlatBars: 7}})
		}
		part.Runs = append(part.Runs, run)
	}
	f := &shard.ShardFile{Count: 1, Slices: []shard.ShardSlice{part.Slice}, Parts: []*shard.ShardPart{part}}
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := shard.WriteShard(&buf, f); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/float64(n), "B/combo")
	b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestShardDataPath: a relative dataset is read from the first folder the
// shards ran in that holds it, as given when that folder is the working
// one or none holds it; absolute paths and embedded datasets as given.
// A relative file or glob not found is a ShardDataError; other errors and
// other datasets are left as they are.
func TestShardDataPath(t *testing.T) {
	ran, wd := t.TempDir(), t.TempDir()
	t.Chdir(wd)
	if err := os.WriteFile(filepath.Join(ran, "x.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data  string
		ranIn []string
		want  string
	}{
		{"x.csv", []string{ran}, filepath.Join(ran, "x.csv")},
		{"*.csv", []string{wd, ran}, "*.csv"},
		{"*.csv", []string{t.TempDir(), ran}, filepath.Join(ran, "*.csv")},
		{"y.csv", []string{ran}, "y.csv"},
		{"x.csv", nil, "x.csv"},
		{filepath.Join(wd, "x.csv"), []string{ran}, filepath.Join(wd, "x.csv")},
		{"embedded:btcusdt-1m", []string{ran}, "embedded:btcusdt-1m"},
	} {
		if got := shard.ShardDataPath(c.data, c.ranIn); got != c.want {
			t.Errorf("ShardDataPath(%q, %q) = %q, want %q", c.data, c.ranIn, got, c.want)
		}
	}
	for _, c := range []struct {
		data    string
		missing bool
	}{{"y.csv", true}, {"none/*.csv", true}, {filepath.Join(wd, "y.csv"), false}, {"embedded:none", false}} {
		_, err := data.Open(c.data, data.Options{})
		var se *shard.ShardDataError
		got := shard.ShardDataMissing(c.data, []string{ran}, err)
		if errors.As(got, &se) != c.missing || (c.missing && (se.Data != c.data || se.WorkDir != wd || !errors.Is(got, fs.ErrNotExist))) {
			t.Errorf("%s: %#v from %v", c.data, got, err)
		}
	}
}
