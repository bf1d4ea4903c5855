package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/shard"
	"sweepbench/reference"
	"sweepbench/slurm"
)

// suiteFlags is a small study over two embedded datasets.
var suiteFlags = []string{"--data", "embedded:filusdt-1m", "--data", "embedded:btcusdt-1m", "--head", "4000",
	"--hma", "10:30:10", "--hma3", "12:17", "--backend", "reference", "--blocks", "4", "-q"}

// decodeJSON reads a JSON document with its numbers as written, leaving
// out the fields two processes cannot share (times, speeds).
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	var strip func(any)
	strip = func(v any) {
		switch u := v.(type) {
		case map[string]any:
			for _, k := range []string{"created", "prepare_s", "elapsed_s", "combos_per_s"} {
				delete(u, k)
			}
			for _, x := range u {
				strip(x)
			}
		case []any:
			for _, x := range u {
				strip(x)
			}
		}
	}
	strip(v)
	return v
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	case string: // "nan", "inf"
		switch x {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

// TestSuiteAggregatesAndShards runs a suite of two datasets, checks its
// aggregate against the datasets' own fp64 results (median and minimum
// Sharpe, datasets in profit, recomputed here), then computes the same
// suite as 3 shards and merges them: the JSON reports are equal, value for
// value, and the merge saved one session per dataset, each naming the
// suite.
func TestSuiteAggregatesAndShards(t *testing.T) {
	dir := t.TempDir()
	single := filepath.Join(dir, "single.json")
	args := append([]string{"run", "--format", "json", "--out", single, "--db", filepath.Join(dir, "single.db")}, suiteFlags...)
	if _, stderr, err := execute(t, args...); err != "" {
		t.Fatalf("%s\n%s", err, stderr)
	}
	raw, _ := os.ReadFile(single)
	var doc struct {
		Datasets []struct {
			Runs []struct {
				Precision string `json:"precision"`
				Combos    []struct {
					HMA         int         `json:"hma"`
					HMA3        int         `json:"hma3"`
					Sharpe      json.Number `json:"sharpe"`
					TotalReturn json.Number `json:"total_return"`
				} `json:"combos"`
			} `json:"runs"`
		} `json:"datasets"`
		Aggregate struct {
			Objective string `json:"objective"`
			Combos    []struct {
				HMA        int `json:"hma"`
				HMA3       int `json:"hma3"`
				Median     any `json:"median"`
				Worst      any `json:"worst"`
				Profitable int `json:"profitable"`
			} `json:"combos"`
			Heatmap struct {
				Values [][]any `json:"values"`
			} `json:"heatmap"`
		} `json:"aggregate"`
		Parity struct {
			PerDataset []struct{ Verdict string } `json:"per_dataset"`
			Overall    struct{ Verdict string }   `json:"overall"`
		} `json:"parity"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Datasets) != 2 || doc.Aggregate.Objective != "sharpe" || len(doc.Parity.PerDataset) != 2 || doc.Parity.Overall.Verdict == "" {
		t.Fatalf("suite report: %d datasets, objective %q, parity %+v", len(doc.Datasets), doc.Aggregate.Objective, doc.Parity)
	}
	combos := doc.Aggregate.Combos
	if len(combos) != 3*6 || len(doc.Aggregate.Heatmap.Values) != 3 || len(doc.Aggregate.Heatmap.Values[0]) != 6 {
		t.Fatalf("%d aggregate combos, heatmap %d rows", len(combos), len(doc.Aggregate.Heatmap.Values))
	}
	for i, c := range combos {
		var vals []float64
		profit := 0
		for _, ds := range doc.Datasets {
			r := ds.Runs[0].Combos[i]
			if ds.Runs[0].Precision != "fp64" || r.HMA != c.HMA || r.HMA3 != c.HMA3 {
				t.Fatalf("combo %d: %s (%d, %d) vs (%d, %d)", i, ds.Runs[0].Precision, r.HMA, r.HMA3, c.HMA, c.HMA3)
			}
			vals = append(vals, num(t, r.Sharpe))
			if num(t, r.TotalReturn) > 0 {
				profit++
			}
		}
		slices.Sort(vals)
		if med := (vals[0] + vals[1]) / 2; math.Abs(num(t, c.Median)-med) > 1e-12*math.Abs(med) {
			t.Errorf("combo (%d, %d): median %v, want %v", c.HMA, c.HMA3, c.Median, med)
		}
		if num(t, c.Worst) != vals[0] || c.Profitable != profit {
			t.Errorf("combo (%d, %d): worst %v profitable %d, want %v, %d", c.HMA, c.HMA3, c.Worst, c.Profitable, vals[0], profit)
		}
		if num(t, doc.Aggregate.Heatmap.Values[i/6][i%6]) != num(t, c.Median) {
			t.Errorf("heatmap cell %d is not the median", i)
		}
	}

	// The same suite in 3 shards, merged.
	shards := filepath.Join(dir, "shards")
	for k := 0; k < 3; k++ {
		args := append([]string{"run", "--shard", fmt.Sprintf("%d/3", k), "--shard-dir", shards}, suiteFlags...)
		if _, stderr, err := execute(t, args...); err != "" {
			t.Fatalf("shard %d: %s\n%s", k, err, stderr)
		}
	}
	merged := filepath.Join(dir, "merged.json")
	db := filepath.Join(dir, "merged.db")
	record := filepath.Join(dir, "sessions.json")
	if _, stderr, err := execute(t, "merge", shards, "--format", "json", "--out", merged, "--db", db, "-q", "--sessions-json", record); err != "" {
		t.Fatalf("merge: %s\n%s", err, stderr)
	}
	mraw, _ := os.ReadFile(merged)
	if a, b := decodeJSON(t, raw), decodeJSON(t, mraw); !reflect.DeepEqual(a, b) {
		t.Fatal("the merged suite report differs from the single run's")
	}
	// The sessions it saved, one per dataset, recorded for the workbench.
	if saved, err := slurm.ReadMerged(dir); err != nil || saved == nil || saved.DB != db || !reflect.DeepEqual(saved.Sessions, []int64{1, 2}) {
		t.Errorf("--sessions-json recorded %+v (%v), want sessions [1 2] in %s", saved, err, db)
	}
	// The tables too (the merge keeps each dataset's best once saved, as
	// run keeps them), but for the lanes' timings.
	lanes := regexp.MustCompile(`(?m)^ +reference +fp(64|32) .*\n`)
	runTable, _, rerr := execute(t, append([]string{"run", "--no-save"}, suiteFlags...)...)
	mergeTable, _, merr := execute(t, "merge", shards, "--no-save", "-q")
	if rerr != "" || merr != "" {
		t.Fatalf("tables: %s %s", rerr, merr)
	}
	if a, b := lanes.ReplaceAllString(runTable, ""), lanes.ReplaceAllString(mergeTable, ""); a != b || !strings.Contains(a, "Across 2 datasets") {
		t.Errorf("the merged table differs from run's:\n%s\n----\n%s", a, b)
	}
	out, _, err := execute(t, "sessions", "ls", "--db", db)
	if err != "" || strings.Count(out, " 1/2") != 1 || strings.Count(out, " 2/2") != 1 || !strings.Contains(out, "suite ") {
		t.Fatalf("sessions ls: %s%s", out, err)
	}
	// Merged again: the same suite, another run of it, said so.
	first := regexp.MustCompile(`suite ([0-9a-f]{12}) 1/2 (r[0-9a-f]{8})`).FindStringSubmatch(out)
	_, mstderr, merr2 := execute(t, "merge", shards, "--db", db)
	again := regexp.MustCompile(`saved as sessions 3, 4 in .*\(suite ([0-9a-f]{12}), run (r[0-9a-f]{8}): `).FindStringSubmatch(mstderr)
	if merr2 != "" || first == nil || again == nil || again[1] != first[1] || again[2] == first[2] {
		t.Errorf("merged again: %v vs %v (%s)\n%s", again, first, merr2, mstderr)
	}
}

// writeBars writes n one-minute bars of a sine-modulated walk (frequency
// f per bar) as a CSV file at path and returns its text.
func writeBars(t *testing.T, path string, n int, f float64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,open,high,low,close\n")
	p := 100.0
	for i := 0; i < n; i++ {
		p *= 1 + 0.001*math.Sin(float64(i)*f)
		fmt.Fprintf(&b, "%d,%g,%g,%g,%g\n", 1700000000+60*i, p, p*1.001, p*0.999, p)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMergeRefusals: each way a set of shards is not one whole study is
// refused with what is wrong and which shard.
func TestMergeRefusals(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "bars.csv")
	body := writeBars(t, csv, 2000, 0.37)
	flags := []string{"--data", csv, "--hma", "10:30:10", "--hma3", "12:20:4", "--backend", "reference", "-q"}
	shard := func(dir string, k, n int, extra ...string) {
		t.Helper()
		args := append(append([]string{"run", "--shard", fmt.Sprintf("%d/%d", k, n), "--shard-dir", dir}, flags...), extra...)
		if _, stderr, err := execute(t, args...); err != "" {
			t.Fatalf("shard %d/%d: %s\n%s", k, n, err, stderr)
		}
	}
	a := filepath.Join(dir, "a")
	for _, k := range []int{0, 2} {
		shard(a, k, 3)
	}
	merge := func(args ...string) string {
		t.Helper()
		_, _, err := execute(t, append([]string{"merge", "--no-save", "-q"}, args...)...)
		return err
	}
	if err := merge(a); !strings.Contains(err, "shard 1 of 3 is missing") {
		t.Errorf("missing shard: %q", err)
	}
	shard(a, 1, 3)
	dup := filepath.Join(dir, "dup.parquet")
	one, _ := os.ReadFile(filepath.Join(a, "shard-1-of-3.parquet"))
	if err := os.WriteFile(dup, one, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := merge(a, dup); !strings.Contains(err, "shard 1 of 3 is given twice") {
		t.Errorf("doubled shard: %q", err)
	}
	other := filepath.Join(dir, "other")
	shard(other, 1, 3, "--fee", "0.001")
	if err := merge(filepath.Join(a, "shard-0-of-3.parquet"), filepath.Join(other, "shard-1-of-3.parquet"), filepath.Join(a, "shard-2-of-3.parquet")); !strings.Contains(err, "belongs to another study") || !strings.Contains(err, "other") || !strings.Contains(err, "its fee is 0.001, not 0.00045") {
		t.Errorf("another study's shard: %q", err)
	}
	if err := merge(a); err != "" {
		t.Fatalf("a whole set: %q", err)
	}
	// The data changed after the shards were computed.
	if err := os.WriteFile(csv, []byte(strings.Replace(body, "\n1700000060,", "\n1700000060,1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := merge(a); !strings.Contains(err, "changed since the shards were computed") {
		t.Errorf("changed data: %q", err)
	}
	if err := merge(csv); !strings.Contains(err, "not a sweepbench shard file") {
		t.Errorf("not a shard: %q", err)
	}
	for _, c := range []struct{ v, want string }{
		{"3/3", "K = 3: want 0 <= K < N = 3"},
		{"1", "want K/N"},
		{"auto", "auto needs SLURM_ARRAY_TASK_ID"},
	} {
		_, _, err := execute(t, append([]string{"run", "--shard", c.v}, flags...)...)
		if !strings.Contains(err, "--shard "+c.v) || !strings.Contains(err, c.want) {
			t.Errorf("--shard %s: %q", c.v, err)
		}
	}
}

// TestMergeChecksEveryDatasetFirst: a suite whose second dataset changed
// after the shards were computed is refused before anything is saved (found
// by a fresh-user trial: the first dataset's session was saved, and a
// second merge after the fix doubled it); once the data is restored the
// merge saves each dataset once.
func TestMergeChecksEveryDatasetFirst(t *testing.T) {
	dir := t.TempDir()
	var files []string
	var bodies []string
	for d, name := range []string{"aaa.csv", "bbb.csv"} {
		f := filepath.Join(dir, name)
		files, bodies = append(files, f), append(bodies, writeBars(t, f, 1500, 0.37+0.1*float64(d)))
	}
	shards := filepath.Join(dir, "shards")
	for k := 0; k < 2; k++ {
		args := []string{"run", "--shard", fmt.Sprintf("%d/2", k), "--shard-dir", shards, "--data", files[0], "--data", files[1],
			"--hma", "10:30:10", "--hma3", "12:20:4", "--backend", "reference", "-q"}
		if _, stderr, err := execute(t, args...); err != "" {
			t.Fatalf("shard %d: %s\n%s", k, err, stderr)
		}
	}
	db := filepath.Join(dir, "s.db")
	if err := os.WriteFile(files[1], []byte(strings.Replace(bodies[1], "\n1700000060,", "\n1700000060,1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute(t, "merge", shards, "--db", db, "-q"); !strings.Contains(err, "bbb.csv changed since the shards were computed") {
		t.Fatalf("changed second dataset: %q", err)
	}
	if _, err := os.Stat(db); err == nil {
		out, _, _ := execute(t, "sessions", "ls", "--db", db)
		if strings.Contains(out, "aaa.csv") {
			t.Fatalf("a refused merge saved a session:\n%s", out)
		}
	}
	if err := os.WriteFile(files[1], []byte(bodies[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute(t, "merge", shards, "--db", db, "-q"); err != "" {
		t.Fatalf("restored data: %q", err)
	}
	out, _, err := execute(t, "sessions", "ls", "--db", db)
	if err != "" || strings.Count(out, "aaa.csv") != 1 || strings.Count(out, "bbb.csv") != 1 {
		t.Fatalf("sessions after the merge, want each dataset once:\n%s%s", out, err)
	}
}

// TestSuiteDatasetErrorsNameTheFlag: a --data-each pattern that matches
// nothing is named as --data-each; one dataset given twice under two
// spellings (or through a link, a list, an each match) is refused naming
// both.
func TestSuiteDatasetErrorsNameTheFlag(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("x.csv", []byte("timestamp,open,high,low,close\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("list.lst", []byte("x.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("twice.lst", []byte("x.csv\n\n./x.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"each matches nothing", []string{"--data-each", "none/*.csv"}, "--data-each none/*.csv: matches no file"},
		{"two spellings", []string{"--data", "./x.csv", "--data", "x.csv"}, "--data x.csv: the same dataset as --data ./x.csv: each dataset runs once"},
		{"an each match", []string{"--data", "x.csv", "--data-each", "*.csv"}, "--data-each *.csv (its match x.csv): the same dataset as --data x.csv"},
		{"a list's line", []string{"--data", "@list.lst", "--data", "./x.csv"}, "--data ./x.csv: the same dataset as --data @list.lst line 1 (x.csv)"},
		{"two lines of a list", []string{"--data", "@twice.lst"}, "--data @twice.lst line 3 (./x.csv): the same dataset as --data @twice.lst line 1 (x.csv): each dataset runs once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := execute(t, append([]string{"run", "--no-save", "-q"}, c.args...)...)
			if !strings.Contains(err, c.want) {
				t.Errorf("got %q\nwant %q", err, c.want)
			}
		})
	}
}

// TestMergeShardsOfFormat1: the shard files in testdata/shards-format1,
// written by the code of 06fd35c (before a combo's columns were declared
// once for the results and the shard files, and before SPEC Part 2's
// metrics), still merge into the report a single run of their flags
// gives, but for Part 2's metrics: "nan" (not computed) in every merged
// combo, and left out of the comparison.
func TestMergeShardsOfFormat1(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--data", "embedded:btcusdt-1m", "--head", "600", "--hma", "10:20:10", "--hma3", "12:16:4", "--backend", "reference", "--blocks", "2", "-q"}
	single, merged := filepath.Join(dir, "single.json"), filepath.Join(dir, "merged.json")
	if _, stderr, err := execute(t, append([]string{"run", "--no-save", "--format", "json", "--out", single}, flags...)...); err != "" {
		t.Fatalf("%s\n%s", err, stderr)
	}
	if _, stderr, err := execute(t, "merge", filepath.Join("..", "testdata", "shards-format1"), "--no-save", "-q", "--format", "json", "--out", merged); err != "" {
		t.Fatalf("merge: %s\n%s", err, stderr)
	}
	a, _ := os.ReadFile(single)
	b, _ := os.ReadFile(merged)
	// The shards ran on a 2-thread AMD EPYC and say so; the single run
	// names this host's CPU and threads. Those fields are checked for what
	// each must say, then left out of the comparison, so that the test
	// holds on any CPU model and core count.
	hostDevice := fmt.Sprintf("%s (%d threads)", reference.CPUModel(), runtime.GOMAXPROCS(0))
	va, vb := decodeJSON(t, a), decodeJSON(t, b)
	if got := takeDevices(va); !allEqual(got, hostDevice) {
		t.Errorf("the single run's devices %q, want each %q", got, hostDevice)
	}
	if got := takeDevices(vb); !allEqual(got, "AMD EPYC (2 threads)") {
		t.Errorf("the merged shards' devices %q, want each the shards' own %q", got, "AMD EPYC (2 threads)")
	}
	part2 := engine.MetricNames[14:]
	takeKeys(va, part2)
	if got := takeKeys(vb, part2); !allEqual(got, "nan") {
		t.Errorf("the merged format-1 shards' Part 2 metrics %q, want each \"nan\"", got)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("the merged report of the format-1 shards differs from a single run's:\n%s\n----\n%s", a, b)
	}
}

// takeKeys removes every field named one of keys from a decoded JSON
// document and returns their values as text, in no particular order.
func takeKeys(v any, keys []string) []string {
	var out []string
	switch u := v.(type) {
	case map[string]any:
		for _, k := range keys {
			if x, ok := u[k]; ok {
				out = append(out, fmt.Sprint(x))
				delete(u, k)
			}
		}
		for _, x := range u {
			out = append(out, takeKeys(x, keys)...)
		}
	case []any:
		for _, x := range u {
			out = append(out, takeKeys(x, keys)...)
		}
	}
	return out
}

// takeDevices removes every "device" field from a decoded JSON document
// and returns their values, in no particular order.
func takeDevices(v any) []string {
	var out []string
	switch u := v.(type) {
	case map[string]any:
		if d, ok := u["device"]; ok {
			s, _ := d.(string)
			out = append(out, s)
			delete(u, "device")
		}
		for _, x := range u {
			out = append(out, takeDevices(x)...)
		}
	case []any:
		for _, x := range u {
			out = append(out, takeDevices(x)...)
		}
	}
	return out
}

// allEqual reports whether ss is non-empty and each of its strings is want.
func allEqual(ss []string, want string) bool {
	for _, s := range ss {
		if s != want {
			return false
		}
	}
	return len(ss) > 0
}

// TestMergeReadsRelativeDataWhereTheShardsRan: shards of a dataset named
// by a relative path record the folder they ran in, and a merge run from
// another folder reads the dataset there. Shards without the folder (as
// written before it was recorded) merge from their folder; from elsewhere
// they are refused naming the relative path, the folder it was resolved
// from and what to do, and so are shards whose folder lost the dataset.
func TestMergeReadsRelativeDataWhereTheShardsRan(t *testing.T) {
	root := t.TempDir()
	work, other, old := filepath.Join(root, "work"), filepath.Join(root, "other"), filepath.Join(root, "old")
	for _, d := range []string{work, other, old} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeBars(t, filepath.Join(work, "bars.csv"), 1500, 0.37)
	t.Chdir(work)
	for k := 0; k < 2; k++ {
		args := []string{"run", "--shard", fmt.Sprintf("%d/2", k), "--shard-dir", "shards", "--data", "bars.csv",
			"--hma", "10:30:10", "--hma3", "12:20:4", "--backend", "reference", "-q"}
		if _, stderr, err := execute(t, args...); err != "" {
			t.Fatalf("shard %d: %s\n%s", k, err, stderr)
		}
	}
	shards := filepath.Join(work, "shards")
	// The same shards as written before the folder was recorded.
	names, _ := filepath.Glob(filepath.Join(shards, "*.parquet"))
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := shard.ReadShard(bytes.NewReader(raw), int64(len(raw)), name)
		if err != nil {
			t.Fatal(err)
		}
		if f.Dir != work {
			t.Errorf("%s: ran in %q, want %q", name, f.Dir, work)
		}
		f.Dir = ""
		var buf bytes.Buffer
		if err := shard.WriteShard(&buf, f); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, filepath.Base(name)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merge := func(dir string) string {
		t.Helper()
		_, _, err := execute(t, "merge", dir, "--no-save", "-q")
		return err
	}
	if err := merge(old); err != "" {
		t.Errorf("shards without their folder, merged where they ran: %q", err)
	}
	t.Chdir(other)
	if err := merge(shards); err != "" {
		t.Errorf("merged from another folder: %q", err)
	}
	err := merge(old)
	for _, want := range []string{"dataset bars.csv", "no such file", "relative path, resolved from this merge's working folder " + other,
		"do not say which folder they ran in", "run merge from the folder the shards were computed in, or give --data absolute paths"} {
		if !strings.Contains(err, want) {
			t.Errorf("shards without their folder, merged elsewhere: %q\nlacks %q", err, want)
		}
	}
	if err := os.Rename(filepath.Join(work, "bars.csv"), filepath.Join(root, "bars.csv")); err != nil {
		t.Fatal(err)
	}
	if err := merge(shards); !strings.Contains(err, "nor is it in the folder the shards ran in, "+work) || !strings.Contains(err, other) {
		t.Errorf("the dataset gone from the folder the shards ran in: %q", err)
	}
}
