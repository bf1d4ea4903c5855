package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/shard"
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
func readHeaders(names []string) ([]*shard.ShardFile, error) {
	var fs []*shard.ShardFile
	for _, name := range names {
		sf, err := readShardFile(name, func(f *os.File, size int64) (*shard.ShardFile, error) {
			return shard.ReadShardHeader(f, size, name)
		})
		if err != nil {
			return nil, err
		}
		fs = append(fs, sf)
	}
	return fs, nil
}

// readDataset reads dataset d's parts from the files whose slices hold it.
func readDataset(names []string, heads []*shard.ShardFile, d int) ([]*shard.ShardPart, error) {
	var parts []*shard.ShardPart
	for i, h := range heads {
		if !slices.ContainsFunc(h.Slices, func(s shard.ShardSlice) bool { return s.Dataset == d }) {
			continue
		}
		sf, err := readShardFile(names[i], func(f *os.File, size int64) (*shard.ShardFile, error) {
			return shard.ReadShardDataset(f, size, names[i], d)
		})
		if err != nil {
			return nil, err
		}
		parts = append(parts, sf.Parts...)
	}
	return parts, nil
}

// shardDirs are the folders the shards ran in (ShardFile.Dir), each
// once, in the order of the files; none for shards written before they
// recorded it.
func shardDirs(heads []*shard.ShardFile) []string {
	var dirs []string
	for _, h := range heads {
		if h.Dir != "" && !slices.Contains(dirs, h.Dir) {
			dirs = append(dirs, h.Dir)
		}
	}
	return dirs
}

// mergeDataError is the error of loading dataset name (as the shards name
// it) in a merge: for a relative path that is not found
// (engine.ShardDataError), where it was looked for and what to do.
func mergeDataError(name string, ranIn []string, err error) error {
	err = shard.ShardDataMissing(name, ranIn, err)
	var se *shard.ShardDataError
	if !errors.As(err, &se) {
		return fmt.Errorf("dataset %s: %w", data.Sanitize(name), err)
	}
	where := "the shard files do not say which folder they ran in (written before sweepbench recorded it)"
	if len(se.RanIn) > 0 {
		where = "nor is it in the folder the shards ran in, " + strings.Join(se.RanIn, ", ")
	}
	return fmt.Errorf("dataset %s: %w: the shards name it by a relative path, resolved from this merge's working folder %s; %s: "+
		"run merge from the folder the shards were computed in, or give --data absolute paths when computing them",
		data.Sanitize(name), se.Err, data.Sanitize(se.WorkDir), data.Sanitize(where))
}

func readShardFile(name string, read func(*os.File, int64) (*shard.ShardFile, error)) (*shard.ShardFile, error) {
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
again and checks its hash (a relative path from the folder the shards ran
in, where the dataset is there, else from the working folder), and builds the report a single run gives, every
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
			db, _ := dbPath(cmd)
			keep := []protected{sessionsDB(db)}
			for _, n := range names {
				keep = append(keep, protected{path: n, what: "a shard file this merge reads"})
			}
			if err := checkOutput(o.out, forced(cmd), keep...); err != nil {
				return err
			}
			heads, err := readHeaders(names)
			if err != nil {
				return err
			}
			if err := shard.CheckShards(heads, names); err != nil {
				var cov *shard.ShardCoverageError
				if errors.As(err, &cov) && cov.Missing {
					return fmt.Errorf("%w: compute it with the study's run flags and --shard %d/%d (on Slurm: sweepbench slurm resubmit DIR)", err, cov.Index, cov.Count)
				}
				return err
			}
			desc := heads[0].Description
			ranIn := shardDirs(heads)
			var datas []string                          // as the shards name them: the suite's identity
			paths := make([]string, len(desc.Datasets)) // where this merge reads them
			for d, dd := range desc.Datasets {
				datas = append(datas, dd.Data)
				paths[d] = shard.ShardDataPath(dd.Data, ranIn)
			}
			// Every dataset is read and checked before anything is
			// written: a refused merge saves nothing (a dataset found
			// changed after an earlier one was saved left half a suite,
			// and a second merge doubled it).
			for d, dd := range desc.Datasets {
				sp := desc.Spec
				sp.Data, sp.Backend = paths[d], "reference" // only the data is checked here
				st, err := (&studyFlags{spec: sp}).study(ctx, backends())
				if err != nil {
					return mergeDataError(dd.Data, ranIn, err)
				}
				if got := st.Dataset.Info.SHA256; got != dd.SHA256 || st.Dataset.Bars.Len() != dd.Bars {
					return &DatasetChangedError{Data: dd.Data, Want: dd.SHA256, Got: got, WantB: dd.Bars, GotB: st.Dataset.Bars.Len()}
				}
			}
			// A Slurm job folder merged by hand (its status's advice) is
			// left as its merge job leaves it: the report in merged.json
			// and the sessions saved in sessions.json, which slurm status
			// reads.
			jobDir := slurmJobDir(args)
			if jobDir != "" && sessionsJSON == "" {
				sessionsJSON = filepath.Join(jobDir, slurm.SessionsFile)
			}
			mergedJSON := ""
			if jobDir != "" && !(o.format == "json" && samePath(o.out, filepath.Join(jobDir, slurm.MergedFile))) {
				mergedJSON = filepath.Join(jobDir, slurm.MergedFile)
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
			lane := engine.ReferenceLane(set.Precisions)
			suiteID, run := engine.SuiteID(desc.Spec, datas), engine.NewSuiteRun()
			agg := engine.NewAggregator(set.Grid, datas, set.Objective, lane)
			res := &suiteResult{id: suiteID, lane: lane}
			reg := backends()
			var saved []int64
			for d, dd := range desc.Datasets {
				sp := desc.Spec
				sp.Data = paths[d]
				if len(datas) > 1 {
					sp.Suite = engine.SuiteRef{ID: suiteID, D: d + 1, N: len(datas), Run: run}.String()
				}
				if _, _, err := reg.Lookup(sp.Backend); err != nil {
					// The shards ran on a GPU this node has not: the merge
					// computes only the robustness statistics, on what
					// auto finds here (the report keeps the shards' backend).
					sp.Backend = "auto"
				}
				st, err := (&studyFlags{spec: sp}).study(ctx, reg)
				if err != nil {
					return mergeDataError(dd.Data, ranIn, err)
				}
				if got := st.Dataset.Info.SHA256; got != dd.SHA256 || st.Dataset.Bars.Len() != dd.Bars {
					return &DatasetChangedError{Data: dd.Data, Want: dd.SHA256, Got: got, WantB: dd.Bars, GotB: st.Dataset.Bars.Len()}
				}
				agg.Name(d, st.Dataset.Info.Name)
				if !o.quiet && len(datas) > 1 {
					fmt.Fprintf(stderr, "dataset %d of %d: %s\n", d+1, len(datas), dd.Data)
				}
				// This dataset's parts only: one dataset's results in memory.
				parts, err := readDataset(names, heads, d)
				if err != nil {
					return err
				}
				rep, err := shard.MergeParts(st, parts)
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
				warnRobustness(stderr, rep, sessions.AnalyseReport(ctx, store, id, st, rep))
				if r := rep.Run(lane); r != nil {
					agg.Add(d, lane, r.Results)
				}
				if o.format == "table" && mergedJSON == "" {
					rep.Keep(o.top) // the table needs the best; the session has them all
				}
				res.reports = append(res.reports, rep)
			}
			res.agg = agg.Aggregate()
			writeAs := func(format string) func(io.Writer) error {
				if len(res.reports) == 1 {
					return func(w io.Writer) error { return writeReport(w, res.reports[0], format, o.top) }
				}
				return func(w io.Writer) error { return writeSuite(w, res, format, o.top) }
			}
			write := writeAs(o.format)
			if !o.quiet {
				fmt.Fprintf(stderr, "merged %d shards of study %s (%s)\n", len(heads), desc.ID(), engine.Plural(len(datas), "dataset"))
			}
			if mergedJSON != "" {
				// The whole report, as the merge job writes it.
				if err := writeFile(mergedJSON, writeAs("json")); err != nil {
					return err
				}
				if !o.quiet {
					fmt.Fprintf(stderr, "wrote %s\n", mergedJSON)
				}
				if o.format == "table" {
					for _, rep := range res.reports {
						rep.Keep(o.top)
					}
				}
			}
			if err := emit(cmd.OutOrStdout(), stderr, o.out, o.quiet, write); err != nil {
				return err
			}
			if len(saved) > 0 && !o.quiet {
				suite := ""
				if len(datas) > 1 {
					suite = fmt.Sprintf(" (suite %s, run %s: the same suite as `run` with these flags gives, another run of it)", suiteID, run)
				}
				fmt.Fprintf(stderr, "saved as %s in %s%s\n", sessionList(saved), store.Path(), suite)
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
	forceFlag(cmd)
	cmd.Flags().IntVar(&o.top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no notes on stderr")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the merged study as a session")
	cmd.Flags().StringVar(&sessionsJSON, "sessions-json", "", "write the sessions saved and their database to FILE as JSON (the Slurm merge job: the workbench opens them)")
	cmd.Flags().BoolVar(&o.failOnCollapse, "fail-on-collapse", false, "exit with status 3 when the parity verdict is collapse")
	return cmd
}

// slurmJobDir is the Slurm job folder (sweepbench slurm --out DIR: it
// holds slurm.StateFile) that merge's arguments name, as the one argument;
// "" when they name something else.
func slurmJobDir(args []string) string {
	if len(args) != 1 {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(args[0], slurm.StateFile)); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return args[0]
}

// writeFile writes path whole through write, or leaves it as it was.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := createOutput(path)
	if err == nil {
		if err = write(f); err == nil {
			err = f.Commit()
		}
		if err != nil {
			f.Cleanup()
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// samePath reports whether a and b name one file (as given: cleaned and
// made absolute, links not followed).
func samePath(a, b string) bool {
	if a == "" || a == "-" {
		return false
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// sessionList names the sessions saved: sessions.IDList, with how to
// show one.
func sessionList(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("session %d (sweepbench sessions show %d)", ids[0], ids[0])
	}
	return sessions.IDList(ids)
}
