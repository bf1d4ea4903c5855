package shard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// Shards: the (dataset x combo) work of a suite (one study is a suite of
// one dataset) cut into N slices balanced by bar-steps, each computed on
// its own (another process, another node) and joined again by
// MergeShards into the reports a single run gives, combo for combo, bit
// for bit. A slice of one dataset is a contiguous range of grid indices;
// it runs as at most three rectangles of the grid (a partial HMA row, whole
// rows, a partial row), each an ordinary Study on a sub-grid run by
// RunStudy, as runTiled runs its tiles: every combo's metrics and
// per-block statistics depend only on its own lengths and the bars, and
// the parity report is joined from the rectangles' (mergeParity). A
// strategy family's grid (Grid.Strategy) has no HMA rows: its slice runs as
// one study of that range of combo indices (Study.Slice), computed by the
// whole grid's arithmetic.

// ShardSpecError is a --shard value that is not K/N with 0 <= K < N, or
// auto without the variables that say it.
type ShardSpecError struct {
	Value string
	Err   error
}

func (e *ShardSpecError) Error() string { return fmt.Sprintf("shard %q: %v", e.Value, e.Err) }
func (e *ShardSpecError) Unwrap() error { return e.Err }

// Shard environment variables --shard auto reads: Slurm's job arrays, and
// Kubernetes' indexed Jobs (whose count the Job's spec must pass, as
// SHARD_COUNT, from its completions).
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
	EnvShardCount     = "SHARD_COUNT"
)

// MaxShards bounds N.
const MaxShards = 1 << 20

// ParseShard reads "K/N" (0 <= K < N <= MaxShards), or "auto": K and N
// from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, else from
// JOB_COMPLETION_INDEX and SHARD_COUNT (getenv reads them; nil:
// os.Getenv). Errors are *ShardSpecError.
func ParseShard(v string, getenv func(string) string) (k, n int, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	bad := func(format string, args ...any) (int, int, error) {
		return 0, 0, &ShardSpecError{Value: v, Err: fmt.Errorf(format, args...)}
	}
	if v == "auto" {
		switch {
		case getenv(EnvSlurmTaskID) != "":
			if getenv(EnvSlurmTaskCount) == "" {
				return bad("%s is set but %s is not (an array of --array=0-(N-1))", EnvSlurmTaskID, EnvSlurmTaskCount)
			}
			v = getenv(EnvSlurmTaskID) + "/" + getenv(EnvSlurmTaskCount)
		case getenv(EnvK8sIndex) != "":
			if getenv(EnvShardCount) == "" {
				return bad("%s is set but %s is not (set it to the Job's completions)", EnvK8sIndex, EnvShardCount)
			}
			v = getenv(EnvK8sIndex) + "/" + getenv(EnvShardCount)
		default:
			return bad("auto needs %s and %s (a Slurm job array) or %s and %s (a Kubernetes indexed Job)",
				EnvSlurmTaskID, EnvSlurmTaskCount, EnvK8sIndex, EnvShardCount)
		}
	}
	ks, ns, ok := strings.Cut(v, "/")
	if !ok {
		return bad("want K/N, e.g. 0/4 (the first of 4 shards), or auto")
	}
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case err1 != nil || err2 != nil:
		return bad("want K/N in decimal digits, e.g. 0/4")
	case n < 1 || n > MaxShards:
		return bad("N = %d: want 1 to %d shards", n, MaxShards)
	case k < 0 || k >= n:
		return bad("K = %d: want 0 <= K < N = %d (shards are counted from 0)", k, n)
	}
	return k, n, nil
}

// ShardSlice is the combos [Lo, Hi) of dataset Dataset's grid.
type ShardSlice struct {
	Dataset int `json:"dataset"`
	Lo      int `json:"lo"`
	Hi      int `json:"hi"`
}

// ShardDataset identifies one dataset of a sharded study: as given, its
// SHA-256 (data.Info.SHA256) and its bars after the Spec's resampling and
// window.
type ShardDataset struct {
	Data   string `json:"data"`
	SHA256 string `json:"sha256"`
	Bars   int    `json:"bars"`
}

// ShardDataPath is the path a merge reads a dataset of the shards from:
// data as the shards name it (ShardDataset.Data), or for a relative path
// that path in the first folder of ranIn (the folders the shards ran in,
// ShardFile.Dir) that holds it: the merge may run elsewhere. Where the
// folder is the working folder, or none holds it (shards written before
// they recorded their folder have none), data as given, read from the
// working folder as a single run reads it. Embedded datasets and absolute
// paths are data.
func ShardDataPath(data string, ranIn []string) string {
	if !relativeData(data) {
		return data
	}
	wd, _ := os.Getwd()
	for _, dir := range ranIn {
		if sameFolder(dir, wd) {
			return data
		}
		if p := filepath.Join(dir, data); dataExists(p) {
			return p
		}
	}
	return data
}

// relativeData reports a dataset named by a relative path.
func relativeData(d string) bool {
	return d != "" && !strings.HasPrefix(d, "embedded:") && !filepath.IsAbs(d)
}

// sameFolder reports whether a and b are one folder.
func sameFolder(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// dataExists reports whether spec names a file, or a folder or glob that
// takes in one (data.Sources).
func dataExists(spec string) bool {
	src := data.Sources(spec)
	if len(src.Files) == 0 {
		return false
	}
	_, err := os.Stat(src.Files[0])
	return err == nil
}

// ShardDataError is a dataset the shards name by a relative path that a
// merge does not find (ShardDataPath): not in a folder the shards ran in,
// nor in the merge's working folder.
type ShardDataError struct {
	Data    string   // as the shards name it
	RanIn   []string // the folders the shards ran in; none in shards written before they recorded it
	WorkDir string   // the working folder Data was read from
	Err     error    // the load's error
}

func (e *ShardDataError) Error() string { return fmt.Sprintf("dataset %s: %v", e.Data, e.Err) }
func (e *ShardDataError) Unwrap() error { return e.Err }

// ShardDataMissing is err, the error of loading dataset data of shards
// that ran in the folders ranIn, as a *ShardDataError when data is a
// relative path that is not found (fs.ErrNotExist); else err itself.
func ShardDataMissing(data string, ranIn []string, err error) error {
	if err == nil || !relativeData(data) || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	wd, _ := os.Getwd()
	return &ShardDataError{Data: data, RanIn: ranIn, WorkDir: wd, Err: err}
}

// ShardDescription is what every shard of one study holds alike: the
// Spec (Data and Suite cleared), the datasets, the number of shards and
// the program's version. Two shards belong to one study when their
// descriptions are equal.
type ShardDescription struct {
	Spec     engine.Spec    `json:"spec"`
	Datasets []ShardDataset `json:"datasets"`
	Shards   int            `json:"shards"`
	Version  string         `json:"version"`
}

// ID is the first 12 hex digits of the SHA-256 of the description's JSON.
func (d *ShardDescription) ID() string {
	js, _ := json.Marshal(d) // plain data always marshals
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:6])
}

// Work is the description's bar-steps: every dataset's bars x the grid's
// distinct combos x the lanes.
func (d *ShardDescription) Work() (int64, error) {
	set, err := d.Spec.Parse()
	if err != nil {
		return 0, err
	}
	var w int64
	for _, ds := range d.Datasets {
		w += set.Work(ds.Bars)
	}
	return w, nil
}

// PlanShards cuts the (dataset x combo) work of grid g over datasets of
// bars[d] bars into n slices of about equal bar-steps: combo i of dataset
// d costs bars[d] when it is computed (an HMA3 alias, computed with its
// twin, costs nothing: Grid.Distinct), and a unit whose work starts at
// offset P of the total C goes to shard floor(P*n/C). Shard k's slices
// are in (dataset, combo) order, at most one per dataset; a shard may be
// empty when n exceeds the combos. Each slice's end is found by binary
// search (the shard of a unit never decreases along the order):
// O((datasets + n) log combos) steps, whatever the grid's size.
//
// A strategy grid (Grid.Strategy) has no aliases: every combo costs its
// dataset's bars, and a slice is a range of its combo indices.
func PlanShards(bars []int, g engine.Grid, n int) [][]ShardSlice {
	out := make([][]ShardSlice, n)
	prefix := func(u int) uint64 { return uint64(u) } // computed combos before combo u
	per := uint64(g.Len())                            // computed combos of the grid
	if g.Strategy == nil {
		n3 := g.HMA3.Len()
		colPre := make([]uint64, n3+1) // computed combos before each HMA3 column, in a row
		distinct := g.Distinct().Len() != g.Len()
		for j := 0; j < n3; j++ {
			c := uint64(1)
			if distinct && j > 0 && g.HMA3.At(j-1)/2 == g.HMA3.At(j)/2 {
				c = 0
			}
			colPre[j+1] = colPre[j] + c
		}
		rowCost := colPre[n3]
		prefix = func(u int) uint64 { return uint64(u/n3)*rowCost + colPre[u%n3] }
		per = rowCost * uint64(g.HMA.Len())
	}
	var total uint64
	for _, b := range bars {
		total += per * uint64(b)
	}
	if total == 0 {
		total = 1
	}
	shardOf := func(p uint64) int {
		if p >= total { // aliases after the last computed combo
			return n - 1
		}
		hi, lo := bits.Mul64(p, uint64(n))
		k, _ := bits.Div64(hi, lo, total) // p < total: no overflow
		return int(k)
	}
	var pos uint64
	G := g.Len()
	for d, b := range bars {
		at := func(u int) int { return shardOf(pos + uint64(b)*prefix(u)) }
		for u := 0; u < G; {
			k := at(u)
			lo, hi := u+1, G // the first unit of a later shard, or G
			for lo < hi {
				mid := int(uint(lo+hi) / 2)
				if at(mid) > k {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			out[k] = append(out[k], ShardSlice{d, u, lo})
			u = lo
		}
		pos += per * uint64(b)
	}
	return out
}

// ShardRun is one precision's part of a slice (engine.ShardRun).
type ShardRun = engine.ShardRun

// ShardPart is what a shard computed of one slice: each precision's
// results, the reference lane's per-block statistics over the slice's
// combos (combo c is the grid's Lo+c; nil without blocks), the parity
// report of its combos (nil with one precision) and the study's note.
type ShardPart struct {
	Slice  ShardSlice
	Runs   []ShardRun
	Blocks *engine.BlockStats
	Parity *engine.Parity
	Note   string
}

// rect is one rectangle of a study's grid: rows [r0, r1) by columns
// [c0, c1) of the whole grid's HMA and HMA3 ranges.
type rect struct{ r0, r1, c0, c1 int }

// global is the whole grid's index of the rectangle's combo local.
func (t rect) global(whole engine.Grid, local int) int {
	n3 := t.c1 - t.c0
	return whole.Index(t.r0+local/n3, t.c0+local%n3)
}

// sliceTiles are the rectangles of g that hold combos [lo, hi), in grid
// order: a partial first row, whole rows, a partial last row.
func sliceTiles(g engine.Grid, lo, hi int) []rect {
	n3 := g.HMA3.Len()
	var out []rect
	add := func(r0, r1, c0, c1 int) {
		if r1 > r0 && c1 > c0 {
			out = append(out, rect{r0, r1, c0, c1})
		}
	}
	r, c := lo/n3, lo%n3
	if c > 0 {
		end := min(n3, c+(hi-lo))
		add(r, r+1, c, end)
		lo += end - c
		r++
	}
	if whole := (hi - lo) / n3; whole > 0 {
		add(r, r+whole, 0, n3)
		lo += whole * n3
		r += whole
	}
	if hi > lo {
		add(r, r+1, 0, hi-lo)
	}
	return out
}

// RunSlice computes combos [lo, hi) of study s (every precision, the
// per-block statistics when s asks for them, the parity report of those
// combos) through RunStudy, one rectangle of the grid at a time. A lane
// that does not complete is an error.
func RunSlice(ctx context.Context, s *engine.Study, lo, hi int, progress chan<- engine.Progress) (*ShardPart, error) {
	if lo < 0 || hi > s.Grid.Len() || lo > hi {
		return nil, fmt.Errorf("slice [%d, %d) of a grid of %d combos", lo, hi, s.Grid.Len())
	}
	part := &ShardPart{Slice: ShardSlice{Lo: lo, Hi: hi}, Note: s.Note}
	runs := map[engine.Precision]*ShardRun{}
	var parities []*engine.Parity
	whole := s.Grid
	type piece struct {
		study  *engine.Study
		global func(local int) int // the whole grid's index of the piece's combo local
	}
	var pieces []piece
	if whole.Strategy != nil {
		// A strategy grid's slice is one study of its combos [lo, hi)
		// (Study.Slice): its combos are ordered by the family's axes, not
		// in HMA rows.
		if hi > lo {
			pieces = append(pieces, piece{s.Slice(lo, hi), func(l int) int { return lo + l }})
		}
	} else {
		for _, t := range sliceTiles(whole, lo, hi) {
			// The whole study's size picks each backend's method (a GPU's
			// kernel: Job.StudyCombos), so a shard computes its combos bit
			// for bit as the single run does (Study.Rect).
			pieces = append(pieces, piece{s.Rect(t.r0, t.r1, t.c0, t.c1), func(l int) int { return t.global(whole, l) }})
		}
	}
	for _, pc := range pieces {
		rep, err := engine.RunStudy(ctx, pc.study, engine.StudyOptions{Progress: progress})
		if err != nil {
			return nil, err
		}
		for _, run := range rep.Runs {
			if !run.Complete() {
				return nil, fmt.Errorf("%s lane: %s", run.Precision, run.Status)
			}
			sr := runs[run.Precision]
			if sr == nil {
				sr = &ShardRun{Precision: run.Precision, Backend: run.Backend, Device: run.Device, WMA: run.WMA}
				runs[run.Precision] = sr
			}
			sr.Prepare += run.Prepare
			sr.Indicators += run.Indicators
			sr.Saving += run.Saving
			sr.Elapsed += run.Elapsed
			for _, r := range run.Results {
				r.Index = pc.global(r.Index)
				sr.Results = append(sr.Results, r)
			}
		}
		if rep.Blocks != nil {
			if part.Blocks == nil {
				part.Blocks = engine.NewBlockStats(hi-lo, rep.Blocks.Bounds)
			}
			for l := 0; l < rep.Blocks.Combos; l++ {
				part.Blocks.CopyCombo(pc.global(l)-lo, rep.Blocks, l)
			}
		} else if s.Blocks > 0 {
			return nil, errors.New("the per-block statistics were not computed")
		}
		if p := rep.Parity; p != nil {
			for k := range p.Combos {
				p.Combos[k].Index = pc.global(p.Combos[k].Index)
			}
			for k := range p.Flips {
				p.Flips[k].Index = pc.global(p.Flips[k].Index)
			}
			parities = append(parities, p)
		}
	}
	for _, p := range s.Precisions {
		if sr := runs[p]; sr != nil {
			slices.SortFunc(sr.Results, func(a, b engine.ComboResult) int { return a.Index - b.Index })
			part.Runs = append(part.Runs, *sr)
		}
	}
	part.Parity = engine.MergeParity(parities)
	return part, nil
}

// ShardCoverageError is a set of shards that does not cover a study once:
// shard Index of Count is missing, or given twice (Files name both).
type ShardCoverageError struct {
	Index, Count int
	Missing      bool
	Files        []string
}

func (e *ShardCoverageError) Error() string {
	if e.Missing {
		return fmt.Sprintf("shard %d of %d is missing", e.Index, e.Count)
	}
	return fmt.Sprintf("shard %d of %d is given twice: %s", e.Index, e.Count, strings.Join(e.Files, " and "))
}

// ShardMismatchError is a shard that belongs to another study than the
// first one given: Field says what differs (the description, a dataset's
// hash, the version, the number of shards).
type ShardMismatchError struct {
	File, First string
	Field       string
	Want, Got   string
}

func (e *ShardMismatchError) Error() string {
	return fmt.Sprintf("%s belongs to another study than %s: its %s is %s, not %s", e.File, e.First, e.Field, e.Got, e.Want)
}

// MergeParts joins the parts that cover every combo of study s (one
// dataset's slices, from every shard) into the report a single RunStudy
// gives: the runs with every result (bit for bit those of a single run),
// the per-block statistics, the parity report joined from the parts'
// (mergeParity), the study's note (which says so when the shards ran a
// lane on different backends: auto on a cluster of GPU and CPU nodes).
// Timings are summed over the parts.
// Parts that leave a combo out, or hold one twice, are an error.
func MergeParts(s *engine.Study, parts []*ShardPart) (*engine.Report, error) {
	slices.SortFunc(parts, func(a, b *ShardPart) int { return a.Slice.Lo - b.Slice.Lo })
	next := 0
	for _, p := range parts {
		if p.Slice.Lo != next {
			return nil, fmt.Errorf("%s: combos [%d, %d) are in no shard (or in two)", s.Dataset.Info.Name, min(next, p.Slice.Lo), max(next, p.Slice.Lo))
		}
		next = p.Slice.Hi
	}
	if next != s.Grid.Len() {
		return nil, fmt.Errorf("%s: combos [%d, %d) are in no shard", s.Dataset.Info.Name, next, s.Grid.Len())
	}
	rep := engine.NewReport(s)
	if len(parts) > 0 {
		rep.Note = parts[0].Note
	}
	var ps []*engine.Parity
	var mixed string // lanes whose shards ran on different backends
	for _, prec := range s.Precisions {
		var run *engine.Run
		var ran []string
		for _, part := range parts {
			for i := range part.Runs {
				sr := &part.Runs[i]
				if sr.Precision != prec {
					continue
				}
				if run == nil {
					run = &engine.Run{Backend: sr.Backend, Device: sr.Device, Precision: prec, WMA: sr.WMA, Grid: s.Grid,
						Status: engine.StatusComplete, Results: make([]engine.ComboResult, 0, s.Grid.Len())}
					rep.Backend = sr.Backend
				}
				if on := sr.Backend; !slices.Contains(ran, on) {
					ran = append(ran, on)
				}
				run.Prepare += sr.Prepare
				run.Indicators += sr.Indicators
				run.Saving += sr.Saving
				run.Elapsed += sr.Elapsed
				run.Results = append(run.Results, sr.Results...)
			}
		}
		if run == nil || len(run.Results) != s.Grid.Len() {
			return nil, fmt.Errorf("%s: the %s lane's results do not cover the grid", s.Dataset.Info.Name, prec)
		}
		if len(ran) > 1 {
			mixed = engine.JoinNote(mixed, fmt.Sprintf("the shards ran the %s lane on %s", prec, strings.Join(ran, ", ")))
		}
		rep.Runs = append(rep.Runs, run)
	}
	if s.Blocks > 0 {
		for _, part := range parts {
			if part.Blocks == nil {
				return nil, fmt.Errorf("%s: combos [%d, %d) have no per-block statistics", s.Dataset.Info.Name, part.Slice.Lo, part.Slice.Hi)
			}
			if rep.Blocks == nil {
				rep.Blocks, rep.BlocksOf = engine.NewBlockStats(s.Grid.Len(), part.Blocks.Bounds), s.Precisions[0]
				if slices.Contains(s.Precisions, engine.FP64) {
					rep.BlocksOf = engine.FP64
				}
			}
			for c := 0; c < part.Blocks.Combos; c++ {
				rep.Blocks.CopyCombo(part.Slice.Lo+c, part.Blocks, c)
			}
		}
	}
	for _, part := range parts {
		if part.Parity != nil {
			// Read back from a file: judged by the grid's family again,
			// and a strategy combo named by its parameters (the file's
			// parity rows keep its index only), as a single run names it.
			part.Parity.JudgeAsFamily(s.Grid)
			nameCombos(s.Grid, part.Parity)
			ps = append(ps, part.Parity)
		}
	}
	if rep.Run(engine.FP64) != nil && rep.Run(engine.FP32) != nil {
		rep.Parity, rep.ParityOf = engine.MergeParity(ps), "fp32 vs fp64"
	}
	rep.Note = engine.JoinNote(engine.JoinNote(rep.Note, rep.RunNotes()), mixed)
	return rep, nil
}

// nameCombos names p's combos and flips of a strategy grid g by their
// parameters (Grid.Label) where they have no name.
func nameCombos(g engine.Grid, p *engine.Parity) {
	if g.Strategy == nil {
		return
	}
	for k := range p.Combos {
		if c := &p.Combos[k]; c.Name == "" && c.Index >= 0 && c.Index < g.Len() {
			c.Name = g.Label(c.Index)
		}
	}
	for k := range p.Flips {
		if f := &p.Flips[k]; f.Name == "" && f.Index >= 0 && f.Index < g.Len() {
			f.Name = g.Label(f.Index)
		}
	}
}

// CheckShards checks that files (their headers; names[i] is files[i]'s
// path) are the shards of one study, each slice once: the same description
// as the first (Spec, datasets and their hashes, number of shards, version:
// *ShardMismatchError naming what differs), every index of 0..N-1 present
// once (*ShardCoverageError naming the first missing or doubled index,
// missing ones first), and each shard's slices those PlanShards gives its
// index.
func CheckShards(files []*ShardFile, names []string) error {
	if len(files) == 0 {
		return errors.New("no shard file")
	}
	first := files[0]
	want, _ := json.Marshal(first.Description)
	for i, f := range files[1:] {
		d, n := f.Description, names[i+1]
		mis := func(field, w, g string) error {
			return &ShardMismatchError{File: n, First: names[0], Field: field, Want: w, Got: g}
		}
		switch {
		case d.Version != first.Description.Version:
			return mis("program version", first.Description.Version, d.Version)
		case d.Shards != first.Description.Shards:
			return mis("shard count", strconv.Itoa(first.Description.Shards), strconv.Itoa(d.Shards))
		case len(d.Datasets) != len(first.Description.Datasets):
			return mis("dataset count", strconv.Itoa(len(first.Description.Datasets)), strconv.Itoa(len(d.Datasets)))
		}
		for k, ds := range d.Datasets {
			w := first.Description.Datasets[k]
			if ds.Data != w.Data {
				return mis(fmt.Sprintf("dataset %d", k+1), w.Data, ds.Data)
			}
			if ds.SHA256 != w.SHA256 {
				return mis(fmt.Sprintf("SHA-256 of %s", ds.Data), w.SHA256, ds.SHA256)
			}
			if ds.Bars != w.Bars {
				return mis(fmt.Sprintf("bars of %s", ds.Data), strconv.Itoa(w.Bars), strconv.Itoa(ds.Bars))
			}
		}
		if got, _ := json.Marshal(d); !bytes.Equal(got, want) {
			// Name the settings that differ (the Spec's JSON keys, the
			// flags' names), not two whole descriptions.
			var wm, gm map[string]any
			w, _ := json.Marshal(first.Description.Spec)
			g, _ := json.Marshal(d.Spec)
			if json.Unmarshal(w, &wm) == nil && json.Unmarshal(g, &gm) == nil {
				keys := map[string]bool{}
				for k := range wm {
					keys[k] = true
				}
				for k := range gm {
					keys[k] = true
				}
				var fields, ws, gs []string
				for _, k := range slices.Sorted(maps.Keys(keys)) {
					a, _ := json.Marshal(wm[k])
					b, _ := json.Marshal(gm[k])
					if !bytes.Equal(a, b) {
						fields, ws, gs = append(fields, k), append(ws, string(a)), append(gs, string(b))
					}
				}
				if len(fields) > 0 {
					return mis(strings.Join(fields, ", "), strings.Join(ws, ", "), strings.Join(gs, ", "))
				}
			}
			return mis("study description", string(w), string(g))
		}
	}
	n := first.Description.Shards
	seen := make([][]string, n)
	for i, f := range files {
		if f.Index < 0 || f.Index >= n || f.Count != n {
			return &ShardFileError{names[i], fmt.Errorf("shard %d of %d in a study of %d shards", f.Index, f.Count, n)}
		}
		seen[f.Index] = append(seen[f.Index], names[i])
	}
	for k := range seen {
		if len(seen[k]) == 0 {
			return &ShardCoverageError{Index: k, Count: n, Missing: true}
		}
	}
	for k := range seen {
		if len(seen[k]) > 1 {
			return &ShardCoverageError{Index: k, Count: n, Files: seen[k]}
		}
	}
	return nil
}
