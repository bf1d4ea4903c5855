package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/sessions"
	"sweepbench/slurm"
)

// DatasetChangedError: a dataset read at merge time is not the one the
// shards computed (another SHA-256 or bar count).
type DatasetChangedError struct {
	Data        string
	Want, Got   string
	WantB, GotB int
}

func (e *DatasetChangedError) Error() string {
	return fmt.Sprintf("dataset %s changed since the shards were computed: SHA-256 %s with %d bars, the shards' %s with %d bars",
		e.Data, e.Got, e.GotB, e.Want, e.WantB)
}

// shardFiles lists the shard files args name: a folder means every
// shard-*-of-*.parquet in it.
func shardFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(a, "shard-*-of-*.parquet"))
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no shard file (shard-K-of-N.parquet) in this folder", a)
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// readHeaders reads the shard files' headers (their description and
// slices, not their rows).
func readHeaders(names []string) ([]*engine.ShardFile, error) {
	var fs []*engine.ShardFile
	for _, name := range names {
		sf, err := readShardFile(name, func(f *os.File, size int64) (*engine.ShardFile, error) {
			return engine.ReadShardHeader(f, size, name)
		})
		if err != nil {
			return nil, err
		}
		fs = append(fs, sf)
	}
	return fs, nil
}

// readDataset reads dataset d's parts from the files whose slices hold it.
func readDataset(names []string, heads []*engine.ShardFile, d int) ([]*engine.ShardPart, error) {
	var parts []*engine.ShardPart
	for i, h := range heads {
		if !slices.ContainsFunc(h.Slices, func(s engine.ShardSlice) bool { return s.Dataset == d }) {
			continue
		}
		sf, err := readShardFile(names[i], func(f *os.File, size int64) (*engine.ShardFile, error) {
			return engine.ReadShardDataset(f, size, names[i], d)
		})
		if err != nil {
			return nil, err
		}
		parts = append(parts, sf.Parts...)
	}
	return parts, nil
}

func readShardFile(name string, read func(*os.File, int64) (*engine.ShardFile, error)) (*engine.ShardFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return read(f, fi.Size())
}

func newMergeCmd() *cobra.Command {
	var (
		o            runOutput
		noSave       bool
		sessionsJSON string
	)
	cmd := &cobra.Command{
		Use:   "merge DIR|SHARD...",
		Short: "Join the shard files of a study (run --shard K/N) into the report and session a single run gives",
		Long: `merge reads the shard files (a folder means every shard-K-of-N.parquet in
it), checks that they belong to one study (the same description, datasets
with the same SHA-256, the same program version) and cover every shard once
(a missing or doubled shard is refused by its index), reads every dataset
again and checks its hash, and builds the report a single run gives, every
metric of every combo bit for bit, the parity report joined from the
shards' partial ones and the robustness statistics from their per-block
statistics; it is saved as a session (one per dataset) unless --no-save.`,
		Example: `  sweepbench merge shards/
  sweepbench merge shards/ --format json --out merged.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			stderr := newSanitized(cmd.ErrOrStderr())
			if err := checkFormat(o.format, o.out, cmd.OutOrStdout()); err != nil {
				return err
			}
			names, err := shardFiles(args)
			if err != nil {
				return err
			}
			heads, err := readHeaders(names)
			if err != nil {
				return err
			}
			if err := engine.CheckShards(heads, names); err != nil {
				var cov *engine.ShardCoverageError
				if errors.As(err, &cov) && cov.Missing {
					return fmt.Errorf("%w: compute it with the study's run flags and --shard %d/%d (on Slurm: sweepbench slurm resubmit DIR)", err, cov.Index, cov.Count)
				}
				return err
			}
			desc := heads[0].Description
			var datas []string
			for _, d := range desc.Datasets {
				datas = append(datas, d.Data)
			}
			// Every dataset is read and checked before anything is
			// written: a refused merge saves nothing (a dataset found
			// changed after an earlier one was saved left half a suite,
			// and a second merge doubled it).
			for _, dd := range desc.Datasets {
				sp := desc.Spec
				sp.Data, sp.Backend = dd.Data, "reference" // only the data is checked here
				st, err := (&studyFlags{spec: sp}).study(ctx, backends())
				if err != nil {
					return fmt.Errorf("dataset %s: %w", data.Sanitize(dd.Data), err)
				}
				if got := st.Dataset.Info.SHA256; got != dd.SHA256 || st.Dataset.Bars.Len() != dd.Bars {
					return &DatasetChangedError{Data: dd.Data, Want: dd.SHA256, Got: got, WantB: dd.Bars, GotB: st.Dataset.Bars.Len()}
				}
			}
			o.save = !noSave
			var store *sessions.Store
			if o.save {
				if store = openStoreToSave(cmd, stderr); store != nil {
					defer store.Close()
				}
			}
			set, err := desc.Spec.Parse()
			if err != nil {
				return err
			}
			lane := referenceLane(set.Precisions)
			suiteID := engine.SuiteID(desc.Spec, datas)
			agg := engine.NewAggregator(set.Grid, datas, set.Objective, lane)
			res := &suiteResult{id: suiteID, lane: lane}
			reg := backends()
			var saved []int64
			for d, dd := range desc.Datasets {
				sp := desc.Spec
				sp.Data = dd.Data
				if len(datas) > 1 {
					sp.Suite = fmt.Sprintf("%s %d/%d", suiteID, d+1, len(datas))
				}
				if _, _, err := reg.Lookup(sp.Backend); err != nil {
					// The shards ran on a GPU this node has not: the merge
					// computes only the robustness statistics, on what
					// auto finds here (the report keeps the shards' backend).
					sp.Backend = "auto"
				}
				st, err := (&studyFlags{spec: sp}).study(ctx, reg)
				if err != nil {
					return fmt.Errorf("dataset %s: %w", data.Sanitize(dd.Data), err)
				}
				if got := st.Dataset.Info.SHA256; got != dd.SHA256 || st.Dataset.Bars.Len() != dd.Bars {
					return &DatasetChangedError{Data: dd.Data, Want: dd.SHA256, Got: got, WantB: dd.Bars, GotB: st.Dataset.Bars.Len()}
				}
				if !o.quiet && len(datas) > 1 {
					fmt.Fprintf(stderr, "dataset %d of %d: %s\n", d+1, len(datas), dd.Data)
				}
				// This dataset's parts only: one dataset's results in memory.
				parts, err := readDataset(names, heads, d)
				if err != nil {
					return err
				}
				rep, err := engine.MergeParts(st, parts)
				if err != nil {
					return err
				}
				var id int64
				if store != nil {
					if id, err = store.SaveReport(ctx, st, rep); err != nil {
						warnNotSaved(stderr, &sessions.SaveError{Stage: sessions.SaveSave, ID: id, Err: err})
						id = 0
					} else {
						saved = append(saved, id)
					}
				}
				analyse(ctx, st, rep, store, id, stderr)
				if r := rep.Run(lane); r != nil {
					agg.Add(d, lane, r.Results)
				}
				if o.format == "table" {
					rep.Keep(o.top) // the table needs the best; the session has them all
				}
				res.reports = append(res.reports, rep)
			}
			res.agg = agg.Aggregate()
			var write func(io.Writer) error
			if len(res.reports) == 1 {
				write = func(w io.Writer) error { return writeReport(w, res.reports[0], o.format, o.top) }
			} else {
				write = func(w io.Writer) error { return writeSuite(w, res, o.format, o.top) }
			}
			if !o.quiet {
				fmt.Fprintf(stderr, "merged %d shards of study %s (%s)\n", len(heads), desc.ID(), engine.Plural(len(datas), "dataset"))
			}
			if err := emit(cmd.OutOrStdout(), stderr, o.out, o.quiet, write); err != nil {
				return err
			}
			if len(saved) > 0 && !o.quiet {
				fmt.Fprintf(stderr, "saved as %s in %s\n", sessionList(saved), store.Path())
			}
			if len(saved) > 0 && sessionsJSON != "" {
				db, err := filepath.Abs(store.Path())
				if err != nil {
					return fmt.Errorf("--sessions-json: %w", err)
				}
				if err := slurm.WriteMerged(sessionsJSON, &slurm.Merged{DB: db, Sessions: saved}); err != nil {
					return fmt.Errorf("--sessions-json: %w", err)
				}
			}
			if o.failOnCollapse {
				return collapseExit(res, true)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "table", "output format: table, json (the whole report), or one row per combo and precision: csv, jsonl or parquet")
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "write the report to FILE instead of stdout")
	cmd.Flags().IntVar(&o.top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no notes on stderr")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the merged study as a session")
	cmd.Flags().StringVar(&sessionsJSON, "sessions-json", "", "write the sessions saved and their database to FILE as JSON (the Slurm merge job: the workbench opens them)")
	cmd.Flags().BoolVar(&o.failOnCollapse, "fail-on-collapse", false, "exit with status 3 when the parity verdict is collapse")
	return cmd
}

func sessionList(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("session %d (sweepbench sessions show %d)", ids[0], ids[0])
	}
	s := "sessions"
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d", id)
	}
	return s
}
