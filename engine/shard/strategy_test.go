package shard_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/shard"
	"sweepbench/reference"
	_ "sweepbench/strategy" // engine.NewStrategy
)

// TestShardsMergeStrategy cuts a strategy study into N shards (a cross
// grid with --fast-below-slow, so that the combo indices skip the pairs it
// drops; a zscore grid, a family with memory whose parity passes with
// sensitive combos), runs each slice (one study of its range of indices),
// writes and reads back its shard file and merges them: every metric of
// every combo, the per-block statistics and the parity report (its combos
// named by their parameters, its verdict the family's) are the single
// run's. The shards' description rebuilds the same grid.
func TestShardsMergeStrategy(t *testing.T) {
	ctx := context.Background()
	ds := head(openDataset(t, "embedded:btcusdt-1m"), 6000)
	for _, c := range []struct {
		family string
		params map[string]string
		below  bool
	}{
		{"cross", map[string]string{"fast": "ema:5:30:5", "slow": "sma:20:100:20"}, true},
		{"zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}, false},
	} {
		t.Run(c.family, func(t *testing.T) {
			spec := engine.Spec{Strategy: c.family, Params: c.params, FastBelowSlow: c.below, Blocks: 4,
				Fee: engine.DefaultFee, Mode: "long-short", Source: "close", Backend: "reference", Precision: "both", WMA: "prefix"}
			set, err := spec.Parse()
			if err != nil {
				t.Fatal(err)
			}
			s := &engine.Study{Dataset: ds, Grid: set.Grid, Blocks: 4, WMA: engine.Prefix, Backend: reference.New(),
				Params:     engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: 525600},
				Precisions: []engine.Precision{engine.FP64, engine.FP32}}
			single, err := engine.RunStudy(ctx, s, engine.StudyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if single.Blocks == nil || single.Parity == nil || single.Parity.FlipCount == 0 {
				t.Fatal("the single run has no block statistics or no flips: the test proves nothing")
			}
			desc := shard.ShardDescription{Spec: spec, Version: "test",
				Datasets: []shard.ShardDataset{{Data: "d", SHA256: ds.Info.SHA256, Bars: ds.Bars.Len()}}}
			for _, n := range []int{2, 3} {
				t.Run(fmt.Sprintf("N%d", n), func(t *testing.T) {
					desc.Shards = n
					plan := shard.PlanShards([]int{ds.Bars.Len()}, s.Grid, n)
					var parts []*shard.ShardPart
					covered := 0
					for k, slices := range plan {
						f := &shard.ShardFile{Index: k, Count: n, Description: desc, Slices: slices}
						for _, sl := range slices {
							covered += sl.Hi - sl.Lo
							p, err := shard.RunSlice(ctx, s, sl.Lo, sl.Hi, nil)
							if err != nil {
								t.Fatal(err)
							}
							if len(p.Runs) != 2 || len(p.Runs[0].Results) != sl.Hi-sl.Lo || p.Runs[0].Results[0].Index != sl.Lo {
								t.Fatalf("slice [%d, %d): %d runs, results %v", sl.Lo, sl.Hi, len(p.Runs), p.Runs[0].Results[:1])
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
						// The file's Spec rebuilds the grid the shards computed.
						bs, err := back.Description.Spec.Parse()
						if err != nil || bs.Grid.Text() != s.Grid.Text() || bs.Grid.Len() != s.Grid.Len() || bs.Grid.Label(3) != s.Grid.Label(3) {
							t.Fatalf("the shard's Spec gives %v %v, want %s", bs, err, s.Grid.Text())
						}
						parts = append(parts, back.Parts...)
					}
					if covered != s.Grid.Len() || len(plan[0]) != 1 || len(plan[n-1]) != 1 {
						t.Fatalf("plan %v covers %d of %d combos", plan, covered, s.Grid.Len())
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
					if w := rep.Parity.Flips[0]; w.Name != s.Grid.Label(w.Index) || w.Name == "" {
						t.Errorf("worst flip named %q, combo %d is %q", w.Name, w.Index, s.Grid.Label(w.Index))
					}
				})
			}
		})
	}
}

// TestPlanShardsStrategy: a strategy grid's combos each cost the bars of
// their dataset (no aliases), so N shards of two datasets split the
// (dataset x combo) units evenly by bars, in order.
func TestPlanShardsStrategy(t *testing.T) {
	spec := engine.Spec{Strategy: "rsi", Params: map[string]string{"length": "7:28:7", "lower": "20:35:5", "upper": "65:80:5"},
		Fee: engine.DefaultFee, Mode: "long-short", Source: "close", Backend: "reference", Precision: "both", WMA: "prefix"}
	set, err := spec.Parse()
	if err != nil {
		t.Fatal(err)
	}
	g := set.Grid // 4 x 4 x 4 = 64 combos
	plan := shard.PlanShards([]int{1000, 3000}, g, 4)
	// 64 x 4000 = 256,000 bar-steps, 64,000 a shard: dataset 0's 64
	// combos (64,000), then dataset 1's combos of 3,000 each, 64/3 a shard.
	want := [][]shard.ShardSlice{
		{{Dataset: 0, Lo: 0, Hi: 64}},
		{{Dataset: 1, Lo: 0, Hi: 22}},
		{{Dataset: 1, Lo: 22, Hi: 43}},
		{{Dataset: 1, Lo: 43, Hi: 64}},
	}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan %v, want %v", plan, want)
	}
}
