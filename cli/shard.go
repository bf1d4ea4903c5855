package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"sweepbench/engine/data"
	"sweepbench/engine/robust"
	"sweepbench/engine/shard"
	"sweepbench/engine/text"
)

// runShard computes shard K of N of the study (or suite) the flags
// describe and writes its shard file into dir (shard.ShardName): every
// dataset is loaded (for its hash and bar count, which the plan needs),
// the (dataset x combo) work planned (engine.PlanShards), and this shard's
// slices run (engine.RunSlice). Datasets are named as given (a relative
// path is read from the working folder: every task of a Slurm array and
// its merge run in one, sbatch --chdir), as a single run names them; the
// file records the working folder, where a merge run elsewhere reads them
// (shard.ShardDataPath).
func runShard(cmd *cobra.Command, sf *studyFlags, datasets []string, kn, dir string, o runOutput) error {
	ctx := cmd.Context()
	stderr := newSanitized(cmd.ErrOrStderr())
	k, n, err := shard.ParseShard(kn, nil)
	if err != nil {
		var se *shard.ShardSpecError
		if errors.As(err, &se) {
			return fmt.Errorf("--shard %s: %v", se.Value, se.Err)
		}
		return err
	}
	if o.format != "table" || o.out != "" {
		return errors.New("--shard writes a shard file (into --shard-dir), not a report: `sweepbench merge` writes the report in any --format")
	}
	if _, err := robust.OptionsFor(sf.spec); err != nil {
		return err
	}
	set, err := sf.spec.Parse()
	if err != nil {
		return err
	}
	start := time.Now()
	desc := shard.ShardDescription{Spec: sf.spec, Shards: n, Version: version}
	desc.Spec.Data, desc.Spec.Suite = "", ""
	bars := make([]int, len(datasets))
	for d, path := range datasets {
		sp := sf.spec
		sp.Data = path
		ds, err := sp.LoadContext(ctx)
		if err != nil {
			return fmt.Errorf("dataset %s: %w", data.Sanitize(path), err)
		}
		// Only the hash and the bars are needed of the others: hold one
		// dataset at a time (this shard's are loaded again below, from
		// the parsed-dataset cache).
		bars[d] = ds.Bars.Len()
		desc.Datasets = append(desc.Datasets, shard.ShardDataset{Data: path, SHA256: ds.Info.SHA256, Bars: ds.Bars.Len()})
	}
	plan := shard.PlanShards(bars, set.Grid, n)
	f := &shard.ShardFile{Index: k, Count: n, Description: desc, Slices: plan[k], Created: time.Now()}
	f.Dir, _ = os.Getwd() // the folder relative paths are read from: the merge may run elsewhere
	combos := 0
	var work int64
	for _, sl := range plan[k] {
		sp := sf.spec
		sp.Data = desc.Datasets[sl.Dataset].Data
		ds, err := sp.LoadContext(ctx)
		if err != nil {
			return fmt.Errorf("dataset %s: %w", data.Sanitize(sp.Data), err)
		}
		if ds.Info.SHA256 != desc.Datasets[sl.Dataset].SHA256 {
			return &DatasetChangedError{Data: sp.Data, Want: desc.Datasets[sl.Dataset].SHA256, Got: ds.Info.SHA256,
				WantB: desc.Datasets[sl.Dataset].Bars, GotB: ds.Bars.Len()}
		}
		st, err := sp.Study(ds, backends())
		if err != nil {
			return fmt.Errorf("dataset %s: %w", data.Sanitize(sp.Data), err)
		}
		part, err := shard.RunSlice(ctx, st, sl.Lo, sl.Hi, nil)
		if err != nil && ctx.Err() != nil {
			return &exitError{130, fmt.Errorf("interrupted: shard %d of %d was not written (run it again)", k, n)}
		}
		if err != nil {
			return fmt.Errorf("shard %d of %d, dataset %s, combos [%d, %d): %w", k, n, data.Sanitize(sp.Data), sl.Lo, sl.Hi, err)
		}
		part.Slice = sl
		f.Parts = append(f.Parts, part)
		combos += sl.Hi - sl.Lo
		work += int64(sl.Hi-sl.Lo) * int64(bars[sl.Dataset]) * int64(len(set.Precisions))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--shard-dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, shard.ShardName(k, n))
	out, err := createOutput(path)
	if err != nil {
		return fmt.Errorf("--shard-dir %s: %w", dir, err)
	}
	if err := shard.WriteShard(out, f); err != nil {
		out.Cleanup()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := out.Commit(); err != nil {
		out.Cleanup()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "shard %d of %d (study %s): %s combo-datasets in %s, about %s bar-steps, %.1fs; wrote %s\n",
			k, n, desc.ID(), text.Thousands(combos), text.Plural(len(plan[k]), "slice"), text.Thousands(int(work)),
			time.Since(start).Seconds(), path)
	}
	return nil
}
