package cli

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

	"sweepbench/engine/data"
	"sweepbench/engine/shard"
	"sweepbench/engine/suite"
	"sweepbench/engine/text"
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
// (shard.ShardDataError), where it was looked for and what to do.
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

// mergeFlags are merge's flags.
type mergeFlags struct {
	o            runOutput
	noSave       bool
	sessionsJSON string
}

func newMergeCmd() *cobra.Command {
	var f mergeFlags
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
		RunE: func(cmd *cobra.Command, args []string) error { return f.merge(cmd, args) },
	}
	f.register(cmd)
	return cmd
}

// register binds merge's flags to f.
func (f *mergeFlags) register(cmd *cobra.Command) {
	o := &f.o
	cmd.Flags().StringVar(&o.format, "format", "table", "output format: table, json (the whole report), or one row per combo and precision: csv, jsonl or parquet")
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "write the report to FILE instead of stdout")
	forceFlag(cmd)
	cmd.Flags().IntVar(&o.top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no notes on stderr")
	cmd.Flags().BoolVar(&f.noSave, "no-save", false, "do not save the merged study as a session")
	cmd.Flags().StringVar(&f.sessionsJSON, "sessions-json", "", "write the sessions saved and their database to FILE as JSON (the Slurm merge job: the workbench opens them)")
	cmd.Flags().BoolVar(&o.failOnCollapse, "fail-on-collapse", false, "exit with status 3 when the parity verdict is collapse")
}

// merging is one merge as it goes: the shards it reads, the study they
// describe, the datasets, the store it saves into and the result.
type merging struct {
	*mergeFlags
	cmd    *cobra.Command
	stderr io.Writer

	names []string           // the shard files
	heads []*shard.ShardFile // their headers (no parts)
	ranIn []string           // the folders the shards ran in
	datas []string           // the datasets as the shards name them: the suite's identity
	paths []string           // where this merge reads them

	mergedJSON string          // the Slurm job folder's merged.json, or ""
	store      *sessions.Store // nil: not saved
	saved      []int64         // the sessions saved
	suiteID    string
	run        string
	res        *suiteResult
}

// merge is `sweepbench merge`, in named steps: read and check the shards,
// read and check every dataset, merge each dataset's parts (saving each),
// then write the report.
func (f *mergeFlags) merge(cmd *cobra.Command, args []string) error {
	m := &merging{mergeFlags: f, cmd: cmd, stderr: newSanitized(cmd.ErrOrStderr())}
	if err := checkFormat(f.o.format, f.o.out, cmd.OutOrStdout()); err != nil {
		return err
	}
	if err := m.readShards(args); err != nil {
		return err
	}
	if err := m.checkDatasets(); err != nil {
		return err
	}
	m.jobFiles(args)
	f.o.save = !f.noSave
	if f.o.save {
		if m.store = openStoreToSave(cmd, m.stderr); m.store != nil {
			defer m.store.Close()
		}
	}
	if err := m.mergeDatasets(); err != nil {
		return err
	}
	if err := m.write(); err != nil {
		return err
	}
	if f.o.failOnCollapse {
		return collapseExit(m.res, true)
	}
	return nil
}

// desc is the study the shards describe (CheckShards: all the same).
func (m *merging) desc() *shard.ShardDescription { return &m.heads[0].Description }

// readShards names the shard files of args, refuses an --out that would
// destroy one of them or the sessions database, reads their headers and
// checks that they are one study's and cover it once.
func (m *merging) readShards(args []string) error {
	names, err := shardFiles(args)
	if err != nil {
		return err
	}
	db, _ := dbPath(m.cmd)
	keep := []protected{sessionsDB(db)}
	for _, n := range names {
		keep = append(keep, protected{path: n, what: "a shard file this merge reads"})
	}
	if err := checkOutput(m.o.out, forced(m.cmd), keep...); err != nil {
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
	m.names, m.heads = names, heads
	desc := m.desc()
	m.ranIn = shardDirs(heads)
	m.paths = make([]string, len(desc.Datasets))
	for d, dd := range desc.Datasets {
		m.datas = append(m.datas, dd.Data)
		m.paths[d] = shard.ShardDataPath(dd.Data, m.ranIn)
	}
	return nil
}

// checkDatasets reads every dataset and checks it before anything is
// written: a refused merge saves nothing (a dataset found changed after
// an earlier one was saved left half a suite, and a second merge doubled
// it).
func (m *merging) checkDatasets() error {
	desc := m.desc()
	for d, dd := range desc.Datasets {
		sp := desc.Spec
		sp.Data, sp.Backend = m.paths[d], "reference" // only the data is checked here
		st, err := (&studyFlags{spec: sp}).study(m.cmd.Context(), backends())
		if err != nil {
			return mergeDataError(dd.Data, m.ranIn, err)
		}
		if got := st.Dataset.Info.SHA256; got != dd.SHA256 || st.Dataset.Bars.Len() != dd.Bars {
			return &DatasetChangedError{Data: dd.Data, Want: dd.SHA256, Got: got, WantB: dd.Bars, GotB: st.Dataset.Bars.Len()}
		}
	}
	return nil
}

// jobFiles: a Slurm job folder merged by hand (its status's advice) is
// left as its merge job leaves it: the report in merged.json and the
// sessions saved in sessions.json, which slurm status reads.
func (m *merging) jobFiles(args []string) {
	jobDir := slurmJobDir(args)
	if jobDir != "" && m.sessionsJSON == "" {
		m.sessionsJSON = filepath.Join(jobDir, slurm.SessionsFile)
	}
	if jobDir != "" && !(m.o.format == "json" && samePath(m.o.out, filepath.Join(jobDir, slurm.MergedFile))) {
		m.mergedJSON = filepath.Join(jobDir, slurm.MergedFile)
	}
}

// mergeDatasets builds each dataset's report from its parts (one
// dataset's results in memory at a time), saves it, analyses its
// robustness and adds it to the suite's aggregate.
func (m *merging) mergeDatasets() error {
	ctx, desc, o := m.cmd.Context(), m.desc(), &m.o
	set, err := desc.Spec.Parse()
	if err != nil {
		return err
	}
	lane := suite.ReferenceLane(set.Precisions)
	m.suiteID, m.run = suite.SuiteID(desc.Spec, m.datas), suite.NewSuiteRun()
	agg := suite.NewAggregator(set.Grid, m.datas, set.Objective, lane)
	m.res = &suiteResult{id: m.suiteID, lane: lane}
	reg := backends()
	for d, dd := range desc.Datasets {
		sp := desc.Spec
		sp.Data = m.paths[d]
		if len(m.datas) > 1 {
			sp.Suite = suite.SuiteRef{ID: m.suiteID, D: d + 1, N: len(m.datas), Run: m.run}.String()
		}
		if _, _, err := reg.Lookup(sp.Backend); err != nil {
			// The shards ran on a GPU this node has not: the merge
			// computes only the robustness statistics, on what
			// auto finds here (the report keeps the shards' backend).
			sp.Backend = "auto"
		}
		st, err := (&studyFlags{spec: sp}).study(ctx, reg)
		if err != nil {
			return mergeDataError(dd.Data, m.ranIn, err)
		}
		if got := st.Dataset.Info.SHA256; got != dd.SHA256 || st.Dataset.Bars.Len() != dd.Bars {
			return &DatasetChangedError{Data: dd.Data, Want: dd.SHA256, Got: got, WantB: dd.Bars, GotB: st.Dataset.Bars.Len()}
		}
		agg.Name(d, st.Dataset.Info.Name)
		if !o.quiet && len(m.datas) > 1 {
			fmt.Fprintf(m.stderr, "dataset %d of %d: %s\n", d+1, len(m.datas), dd.Data)
		}
		// This dataset's parts only: one dataset's results in memory.
		parts, err := readDataset(m.names, m.heads, d)
		if err != nil {
			return err
		}
		rep, err := shard.MergeParts(st, parts)
		if err != nil {
			return err
		}
		var id int64
		if m.store != nil {
			if id, err = m.store.SaveReport(ctx, st, rep); err != nil {
				warnNotSaved(m.stderr, &sessions.SaveError{Stage: sessions.SaveSave, ID: id, Err: err})
				id = 0
			} else {
				m.saved = append(m.saved, id)
			}
		}
		warnRobustness(m.stderr, rep, sessions.AnalyseReport(ctx, m.store, id, st, rep))
		if r := rep.Run(lane); r != nil {
			agg.Add(d, lane, r.Results)
		}
		if o.format == "table" && m.mergedJSON == "" {
			rep.Keep(o.top) // the table needs the best; the session has them all
		}
		m.res.reports = append(m.res.reports, rep)
	}
	m.res.agg = agg.Aggregate()
	return nil
}

// write writes the merged report (and the job folder's merged.json), says
// where it was saved, and writes --sessions-json.
func (m *merging) write() error {
	o, res := &m.o, m.res
	writeAs := func(format string) func(io.Writer) error {
		if len(res.reports) == 1 {
			return func(w io.Writer) error { return writeReport(w, res.reports[0], format, o.top) }
		}
		return func(w io.Writer) error { return writeSuite(w, res, format, o.top) }
	}
	write := writeAs(o.format)
	if !o.quiet {
		fmt.Fprintf(m.stderr, "merged %d shards of study %s (%s)\n", len(m.heads), m.desc().ID(), text.Plural(len(m.datas), "dataset"))
	}
	if m.mergedJSON != "" {
		// The whole report, as the merge job writes it.
		if err := writeFile(m.mergedJSON, writeAs("json")); err != nil {
			return err
		}
		if !o.quiet {
			fmt.Fprintf(m.stderr, "wrote %s\n", m.mergedJSON)
		}
		if o.format == "table" {
			for _, rep := range res.reports {
				rep.Keep(o.top)
			}
		}
	}
	if err := emit(m.cmd.OutOrStdout(), m.stderr, o.out, o.quiet, write); err != nil {
		return err
	}
	if len(m.saved) > 0 && !o.quiet {
		suite := ""
		if len(m.datas) > 1 {
			suite = fmt.Sprintf(" (suite %s, run %s: the same suite as `run` with these flags gives, another run of it)", m.suiteID, m.run)
		}
		fmt.Fprintf(m.stderr, "saved as %s in %s%s\n", sessionList(m.saved), m.store.Path(), suite)
	}
	if len(m.saved) > 0 && m.sessionsJSON != "" {
		db, err := filepath.Abs(m.store.Path())
		if err != nil {
			return fmt.Errorf("--sessions-json: %w", err)
		}
		if err := slurm.WriteMerged(m.sessionsJSON, &slurm.Merged{DB: db, Sessions: m.saved}); err != nil {
			return fmt.Errorf("--sessions-json: %w", err)
		}
	}
	return nil
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
