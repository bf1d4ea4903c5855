package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/spf13/pflag"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/reference"
)

// execute runs the CLI in process (cobra), as the binary would, and
// returns its stdout, stderr and error (phrased as main prints it).
func execute(t *testing.T, args ...string) (string, string, string) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), phrase(err)
}

// TestRunFlagDefaultsAreTheSpec: the run flags' defaults are
// engine.DefaultSpec, the one set of defaults (the TUI's form starts from
// it too).
func TestRunFlagDefaultsAreTheSpec(t *testing.T) {
	var sf studyFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	sf.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if sf.spec != engine.DefaultSpec() {
		t.Errorf("flag defaults %+v\nDefaultSpec   %+v", sf.spec, engine.DefaultSpec())
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "data" && f.Name != "hma" && f.Name != "hma3" && f.Name != "fee" && f.Name != "mode" && f.Name != "source" &&
			f.Name != "timeframe" && f.Name != "head" && f.Name != "backend" && f.Name != "precision" && f.Name != "wma" &&
			f.Name != "bars-per-year" && f.Name != "borderline" && f.Name != "tz" && f.Name != "time-column" && f.Name != "lean-asset" &&
			f.Name != "from" && f.Name != "to" {
			t.Errorf("flag --%s is not a Spec field", f.Name)
		}
	})
}

// TestFlagErrorsPhrased: the engine's field errors read as the flags that
// set them, every bad flag at once.
func TestFlagErrorsPhrased(t *testing.T) {
	_, _, err := execute(t, "run", "--hma3", "5:10", "--fee", "2", "--mode", "short", "--no-save")
	want := "--hma3 5:10: length 5 is below the minimum 6 (HMA3 needs floor(floor(L/2)/3) >= 1)\n" +
		"--fee 2: want a fraction per side in [0, 1), e.g. 0.00045\n" +
		"--mode short: want long-short or long-only"
	if err != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if _, _, err := execute(t, "run", "--backend", "quantum", "--no-save"); err != `--backend quantum: unknown (want auto, reference, cuda, metal)` {
		t.Errorf("unknown backend: %s", err)
	}
}

// TestRunCSVInProcess: `run --format csv` prints what the engine's
// RunStudy of the same Spec writes, and `sessions export` of the saved
// session prints the same bytes (show and export read what run saved).
func TestRunCSVInProcess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--format", "csv", "-q", "--db", db}
	out, _, err := execute(t, args...)
	if err != "" {
		t.Fatal(err)
	}
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.Backend = "embedded:btcusdt-1m", 3000, "10:30:10", "12:36:12", "reference"
	reg := &engine.Registry{}
	reg.Register(reference.New())
	st, serr := spec.Build(reg)
	if serr != nil {
		t.Fatal(serr)
	}
	rep, rerr := engine.RunStudy(context.Background(), st, engine.StudyOptions{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var want bytes.Buffer
	if err := output.WriteCSV(&want, rep); err != nil {
		t.Fatal(err)
	}
	if out != want.String() || strings.Count(out, "\n") != 1+2*9 {
		t.Errorf("run's CSV (%d lines) differs from the engine's (%d lines)", strings.Count(out, "\n"), strings.Count(want.String(), "\n"))
	}
	exported, _, err := execute(t, "sessions", "export", "1", "--format", "csv", "--db", db)
	if err != "" {
		t.Fatal(err)
	}
	if exported != out {
		t.Errorf("sessions export differs from run's output:\n%s\nwant:\n%s", exported, out)
	}
}

// TestOutputsCannotDestroyData: --out refuses, before anything is
// computed, the sessions database, the input file and a missing directory
// (exit 1, saying so), and a report replaces an existing file only once it
// is complete.
func TestOutputsCannotDestroyData(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	small := []string{"--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:20:10", "--hma3", "12:24:12",
		"--backend", "reference", "-q", "--format", "csv", "--db", db}
	if _, _, err := execute(t, append([]string{"run"}, small...)...); err != "" {
		t.Fatal(err)
	}
	before, rerr := os.ReadFile(db)
	if rerr != nil {
		t.Fatal(rerr)
	}
	csvIn := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csvIn, []byte("open_time,open,high,low,close,volume\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{append([]string{"run", "--out", db}, small...), "is the sessions database: refusing to overwrite it"},
		{[]string{"run", "--data", csvIn, "--out", csvIn, "--no-save"}, "is the input data: refusing to overwrite it"},
		{append([]string{"run", "--out", filepath.Join(dir, "nope", "r.csv")}, small...), "the directory " + filepath.Join(dir, "nope") + " does not exist"},
		{[]string{"sessions", "export", "1", "--db", db, "--out", db}, "is the sessions database: refusing to overwrite it"},
		{[]string{"run", "--out", dir, "--no-save"}, "is a directory"},
	} {
		out, _, err := execute(t, c.args...)
		if !strings.Contains(err, c.says) || out != "" {
			t.Errorf("%v: err %q, %d bytes on stdout; want a refusal saying %q", c.args, err, len(out), c.says)
		}
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("the sessions database changed")
	}
	if list, _, err := execute(t, "sessions", "ls", "--db", db); err != "" || strings.Count(list, "\n") != 2 {
		t.Errorf("sessions after the refusals: %q %s (want the one saved)", list, err)
	}
	// A report replaces an existing file, whole.
	target := filepath.Join(dir, "r.csv")
	os.WriteFile(target, []byte("old"), 0o644)
	want, _, _ := execute(t, append([]string{"run", "--no-save"}, small...)...)
	if _, _, err := execute(t, append([]string{"run", "--no-save", "--out", target}, small...)...); err != "" {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != want {
		t.Errorf("--out wrote %d bytes, want the %d of stdout", len(got), len(want))
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".r.csv*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestOutUnwritable: a report that cannot be created in --out's directory
// (not writable) goes to stdout, and the command still fails (exit 1), so
// that a script notices. Root writes anywhere: skipped as root.
func TestOutUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root every directory is writable")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	out, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:20:10", "--hma3", "12:24:12",
		"--backend", "reference", "--no-save", "-q", "--format", "csv", "--out", filepath.Join(dir, "r.csv"))
	if !strings.Contains(err, "--out ") || !strings.Contains(err, "the report went to stdout") || strings.Count(out, "\n") != 1+2*4 {
		t.Errorf("err %q; stdout %d lines", err, strings.Count(out, "\n"))
	}
}

// TestRunRowFormatsStreamed: `run --format csv|jsonl|parquet --out FILE`
// writes the rows while the study runs; the file is what `sessions
// export` of the saved session writes in the same format (byte for byte
// for CSV and JSON lines, row for row and key for key for Parquet), and
// the CSV is the engine's WriteCSV of the same study (TestRunCSVInProcess).
func TestRunRowFormatsStreamed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	small := []string{"--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "-q", "--db", db}
	for i, f := range []string{"csv", "jsonl", "parquet"} {
		out := filepath.Join(dir, "run."+f)
		if _, _, err := execute(t, append([]string{"run", "--format", f, "--out", out}, small...)...); err != "" {
			t.Fatalf("%s: %s", f, err)
		}
		exp := filepath.Join(dir, "export."+f)
		id := strconv.Itoa(i + 1)
		if _, _, err := execute(t, "sessions", "export", id, "--format", f, "--out", exp, "--db", db); err != "" {
			t.Fatalf("export %s: %s", f, err)
		}
		got, _ := os.ReadFile(out)
		want, _ := os.ReadFile(exp)
		if len(got) == 0 {
			t.Fatalf("%s: empty", f)
		}
		if f != "parquet" {
			if !bytes.Equal(got, want) {
				t.Errorf("%s: run's file (%d bytes) differs from the export's (%d bytes)", f, len(got), len(want))
			}
			continue
		}
		gr, gm := parquetRows(t, got)
		wr, wm := parquetRows(t, want)
		if len(gr) != 18 || !reflect.DeepEqual(gr, wr) || !reflect.DeepEqual(gm, wm) || gm["parity_verdict"] != "pass" {
			t.Errorf("parquet: run's %d rows %v, the export's %d rows %v", len(gr), gm, len(wr), wm)
		}
	}
}

// parquetRows reads a Parquet file with the module's reader: every row's
// values, and the key/value metadata.
func parquetRows(t *testing.T, b []byte) ([]parquet.Row, map[string]string) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	r := parquet.NewReader(f)
	defer r.Close()
	rows := make([]parquet.Row, f.NumRows())
	n, err := r.ReadRows(rows)
	if n != len(rows) || (err != nil && !errors.Is(err, io.EOF)) {
		t.Fatalf("read %d rows of %d: %v", n, len(rows), err)
	}
	return rows, meta
}

// TestFormatsRefused: an unknown --format is refused naming the formats,
// before anything runs.
func TestFormatsRefused(t *testing.T) {
	if _, _, err := execute(t, "run", "--format", "xml", "--no-save"); err != `--format "xml": want table, json, csv, jsonl or parquet` {
		t.Errorf("run: %s", err)
	}
	if _, _, err := execute(t, "sessions", "export", "1", "--format", "table", "--db", filepath.Join(t.TempDir(), "none.db")); err != `--format "table": want csv, json, jsonl or parquet` {
		t.Errorf("export: %s", err)
	}
}

// TestLargeCPUStudyAsksForYes: a study the CPU reference would take long
// over (a calibration of 20 minutes, injected) is refused without --yes,
// with the engine's estimate, before anything is computed.
func TestLargeCPUStudyAsksForYes(t *testing.T) {
	fixPreflight(t, engine.Rates{Fast: 1e-9, Slow: 1e9, SlowSeries: 1e9}, 20*time.Minute)
	_, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "2:1001", "--hma3", "6:1005",
		"--backend", "reference", "--no-save", "-q")
	if !strings.Contains(err, "1,000,000 combos in 2 precisions on the CPU reference would take ~") || !strings.Contains(err, "pass --yes") {
		t.Errorf("err %q", err)
	}
}

// TestHostileFlags: flags from outside are refused with a message, never a
// panic or a hang: a length near MaxInt64 (warm-up arithmetic), Go number
// syntax, a device as the data, a LEAN file without its security type.
func TestHostileFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--hma", "9223372036854775807"}, "--hma 9223372036854775807: length 9223372036854775807 is above the maximum 1073741824 (a length is a number of bars)"},
		{[]string{"--hma3", "6:9223372036854775807:1"}, "--hma3 6:9223372036854775807:1: length 9223372036854775807 is above the maximum 1073741824"},
		{[]string{"--head", "1_000"}, `invalid argument "1_000" for "--head" flag: want a whole number written in decimal digits, e.g. 5000`},
		{[]string{"--fee", "0x1p-4"}, `invalid argument "0x1p-4" for "--fee" flag: want a decimal number, e.g. 0.00045 or 1e-5`},
		{[]string{"--bars-per-year", "1_764"}, `invalid argument "1_764" for "--bars-per-year" flag: want a decimal number`},
		{[]string{"--lean-asset", "bond"}, `--lean-asset bond: want one of equity, option, crypto, forex, cfd, or nothing to take it from the path`},
		{[]string{"--data", "testdata/data/lean_spy_hour_head.csv.gz"}, "testdata/data/lean_spy_hour_head.csv.gz: LEAN rows, but the path does not say the security type"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		tests = append(tests, struct {
			args []string
			want string
		}{[]string{"--data", "/dev/zero"}, "/dev/zero: a character device, not a regular file"})
	}
	for _, tc := range tests {
		_, _, err := execute(t, append([]string{"run", "--no-save", "-q"}, tc.args...)...)
		if !strings.HasPrefix(err, tc.want) {
			t.Errorf("%v:\n got  %s\n want %s", tc.args, err, tc.want)
		}
	}
	// The LEAN file read as equity says how it was read.
	out, _, err := execute(t, "run", "--no-save", "-q", "--data", "testdata/data/lean_spy_hour_head.csv.gz", "--lean-asset", "equity",
		"--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference")
	if err != "" || !strings.Contains(out, "; LEAN equity/usa (as given): prices / 10,000, local times in America/New_York\n") ||
		!strings.Contains(out, "bars/year, observed over 1.1 years: a session calendar (") {
		t.Errorf("LEAN as equity: %s\n%s", err, out)
	}
}

// TestErrorTextSanitised: what reaches the terminal has its control
// characters escaped, line by line.
func TestErrorTextSanitised(t *testing.T) {
	root := newRoot()
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"run", "--no-save", "--tz", "\x1b]0;pwned\x07", "--fee", "2"})
	err := root.ExecuteContext(context.Background())
	got := errorText(err)
	// The value is quoted (Go's escapes) where a flag shows it, the rest
	// escaped by the sanitiser.
	want := "--fee 2: want a fraction per side in [0, 1), e.g. 0.00045\n--tz \"\\x1b]0;pwned\\a\": unknown time zone \x1b]0;pwned\x07"
	want = strings.ReplaceAll(want, "\x1b", `\x1b`)
	want = strings.ReplaceAll(want, "\x07", `\x07`)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRunRobustness: --blocks adds the Robustness section to run's table
// (PBO over C(8,4) = 70 splits, the DSR of the selected combo, the plateau
// best, the walk-forward folds); the robustness flags are checked before
// anything runs.
func TestRunRobustness(t *testing.T) {
	out, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "--no-save", "-q", "--blocks", "8", "--wf", "rolling:4")
	if err != "" {
		t.Fatalf("run: %s", err)
	}
	for _, want := range []string{"Robustness (fp64 run, 8 blocks of bar returns, objective max sharpe, 25 trials)", "over 70 splits",
		"DSR ", "for the selected combo", "plateau ", "walk-forward  rolling:4, 4 folds"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	// Constraints: the selected combo has the trades asked for.
	out, _, err = execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "--no-save", "-q", "--blocks", "8", "--min-trades", "150", "--max-drawdown", "0.5")
	if err != "" {
		t.Fatalf("run with constraints: %s", err)
	}
	if !strings.Contains(out, "constraints   at least 150 trades, max drawdown at most 50%: ") {
		t.Errorf("the table does not state the constraints:\n%s", out)
	}
	// Constraints no combo meets: the study stands, the section says so.
	out, _, err = execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--no-save", "-q", "--blocks", "8", "--min-trades", "1000000")
	if err != "" || !strings.Contains(out, "constraints   at least 1000000 trades: 0 of 9 combos selectable") ||
		!strings.Contains(out, "PBO           not computed: no combo meets the constraints: nothing to choose") {
		t.Errorf("unsatisfiable constraints: error %q, table:\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--wf", "rolling:4"}, "--wf rolling:4: the walk-forward runs over blocks: set blocks too"},
		{[]string{"--blocks", "8", "--wf", "rolling:8"}, "--wf rolling:8: 8 blocks in sample leave none out of sample of the 8 blocks"},
		{[]string{"--blocks", "65"}, "--blocks 65: want 0 (none) or 2 to 64 blocks"},
		{[]string{"--objective", "sharpness"}, "--objective sharpness: unknown metric"},
		{[]string{"--blocks", "8", "--objective", "max_drawdown"}, "--objective max_drawdown: with blocks, the robustness statistics need a metric they can take over blocks"},
		{[]string{"--blocks", "8", "--max-drawdown", "1.5"}, "--max-drawdown 1.5: want a fraction in [0, 1]"},
	} {
		args := append([]string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--backend", "reference", "--no-save", "-q"}, c.args...)
		if _, _, err := execute(t, args...); !strings.Contains(err, c.want) {
			t.Errorf("%v: error %q, want %q", c.args, err, c.want)
		}
	}
}

// TestRobustnessSavedAndShown: the Robustness section of a saved run is
// kept with its session (sessions show prints it again, the same text),
// the JSON report carries it under "robustness" and a Parquet file in its
// metadata.
func TestRobustnessSavedAndShown(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "5000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "-q", "--blocks", "8", "--wf", "anchored", "--db", db}
	out, _, err := execute(t, args...)
	if err != "" {
		t.Fatalf("run: %s", err)
	}
	section := out[strings.Index(out, "\nRobustness ("):]
	shown, _, err := execute(t, "sessions", "show", "1", "--db", db)
	if err != "" {
		t.Fatalf("show: %s", err)
	}
	if !strings.HasSuffix(shown, section) {
		t.Errorf("show does not end with run's Robustness section:\n%s\nwant:\n%s", shown, section)
	}
	js, _, err := execute(t, append(args[:len(args)-2:len(args)-2], "--no-save", "--format", "json")...)
	if err != "" {
		t.Fatalf("run --format json: %s", err)
	}
	var doc struct {
		Robustness struct {
			Blocks int      `json:"blocks"`
			PBO    *float64 `json:"pbo"`
			Splits int      `json:"splits"`
			DSR    struct {
				DSR float64 `json:"dsr"`
			} `json:"dsr"`
			Histogram struct {
				Edges  []float64 `json:"edges"`
				Counts []int     `json:"counts"`
			} `json:"logit_histogram"`
			WF struct {
				Folds       []any   `json:"folds"`
				TotalReturn float64 `json:"stitched_total_return"`
				Equity      []struct {
					Bar    int     `json:"bar"`
					Equity float64 `json:"equity"`
				} `json:"stitched_equity"`
			} `json:"walk_forward"`
		} `json:"robustness"`
	}
	if e := json.Unmarshal([]byte(js), &doc); e != nil {
		t.Fatal(e)
	}
	if r := doc.Robustness; r.Blocks != 8 || r.PBO == nil || r.Splits != 70 || len(r.WF.Folds) != 7 || r.DSR.DSR < 0 || r.DSR.DSR > 1 {
		t.Errorf("the JSON report's robustness %+v: want 8 blocks, a PBO over 70 splits, 7 anchored folds, a DSR", r)
	}
	// The pane's data: the logit histogram of the 70 splits, and the
	// stitched out-of-sample equity curve (at most 512 points, ending at
	// the stitched total return; engine/robust tests it to 1e-12).
	h, wf := doc.Robustness.Histogram, doc.Robustness.WF
	n := 0
	for _, c := range h.Counts {
		n += c
	}
	if len(h.Edges) != 21 || len(h.Counts) != 20 || n != 70 {
		t.Errorf("the logit histogram: %d edges, %d bins, %d splits", len(h.Edges), len(h.Counts), n)
	}
	if k := len(wf.Equity); k < 2 || k > 512 || math.Abs(wf.Equity[k-1].Equity-(1+wf.TotalReturn)) > 1e-12 {
		t.Errorf("the stitched equity: %d points %v, the stitched total return %v", k, wf.Equity, wf.TotalReturn)
	}
	pq := filepath.Join(dir, "r.parquet")
	if _, _, err := execute(t, append(args[:len(args)-2:len(args)-2], "--no-save", "--format", "parquet", "--out", pq)...); err != "" {
		t.Fatalf("run --format parquet: %s", err)
	}
	b, e := os.ReadFile(pq)
	if e != nil {
		t.Fatal(e)
	}
	f, e := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if e != nil {
		t.Fatal(e)
	}
	if v, ok := f.Lookup("robustness"); !ok || !strings.Contains(v, `"splits":70`) {
		t.Errorf("the Parquet metadata's robustness %q (%v)", v, ok)
	}
}

// TestObjectiveRanksTopList: --objective and the constraints order run's
// top list (the title says by what), with or without --blocks: every row
// meets the constraints and the rows go from best to worst by the metric
// (max_drawdown lowest first).
func TestObjectiveRanksTopList(t *testing.T) {
	base := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "--no-save", "-q", "--precision", "fp64", "--top", "5"}
	rows := func(out string) [][]string {
		var rs [][]string
		in := false
		for _, l := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(l, "Top "):
				in = true
			case in && strings.TrimSpace(l) == "":
				return rs
			case in && !strings.Contains(l, "hma3"):
				rs = append(rs, strings.Fields(l))
			}
		}
		return rs
	}
	out, _, err := execute(t, append(base, "--objective", "total_return", "--min-trades", "110")...)
	if err != "" {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Top 5 combos by fp64 total_return (at least 110 trades) (returns,") {
		t.Errorf("title:\n%s", out)
	}
	// columns: hma hma3 trades return cagr sharpe sortino maxdd ...
	prev := math.Inf(1)
	for _, r := range rows(out) {
		trades, _ := strconv.Atoi(r[2])
		ret, _ := strconv.ParseFloat(r[3], 64)
		if trades < 110 || ret > prev {
			t.Errorf("row %v: trades %d (want >= 110), return %g after %g (want descending)", r, trades, ret, prev)
		}
		prev = ret
	}
	out, _, err = execute(t, append(base, "--objective", "max_drawdown")...)
	if err != "" {
		t.Fatal(err)
	}
	prev = math.Inf(-1)
	for _, r := range rows(out) {
		dd, _ := strconv.ParseFloat(r[7], 64)
		if dd < prev {
			t.Errorf("row %v: max drawdown %g after %g (want ascending)", r, dd, prev)
		}
		prev = dd
	}
	if len(rows(out)) != 5 || !strings.Contains(out, "by fp64 lowest max_drawdown") {
		t.Errorf("max_drawdown top list:\n%s", out)
	}
}

// TestObjectiveSaved: a session keeps its objective and constraints:
// sessions show lists the same top combos, under the same title, as run.
func TestObjectiveSaved(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	out, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "-q", "--top", "4", "--objective", "sortino", "--min-trades", "150", "--db", db)
	if err != "" {
		t.Fatal(err)
	}
	top := func(s string) string {
		a := strings.Index(s, "\nTop ")
		if a < 0 {
			return ""
		}
		b := strings.Index(s[a+1:], "\n\n")
		return s[a+1 : a+1+b]
	}
	shown, _, err := execute(t, "sessions", "show", "1", "--db", db, "--top", "4")
	if err != "" {
		t.Fatal(err)
	}
	if top(out) == "" || top(shown) != top(out) || !strings.Contains(top(out), "by fp64 sortino (at least 150 trades)") {
		t.Errorf("run's top list:\n%s\nshow's:\n%s", top(out), top(shown))
	}
}

// TestBlocksOut: --blocks-out writes the per-block statistics as Parquet,
// one row per combo and block: per combo the blocks' bar returns add up to
// n-1, their trades to the combo's trade count, expm1 of their log growth
// to its total return (from the JSON report of the same study); the first
// block starts on the second bar.
func TestBlocksOut(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(dir, "blocks.parquet")
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--no-save", "-q", "--precision", "fp64", "--blocks", "4"}
	js, _, err := execute(t, append(args, "--format", "json", "--blocks-out", pq)...)
	if err != "" {
		t.Fatal(err)
	}
	type row struct {
		HMA       int64   `parquet:"hma"`
		HMA3      int64   `parquet:"hma3"`
		Block     int64   `parquet:"block"`
		FirstTime int64   `parquet:"first_time"`
		Bars      int64   `parquet:"bars"`
		LogGrowth float64 `parquet:"log_growth"`
		Trades    int64   `parquet:"trades"`
	}
	b, e := os.ReadFile(pq)
	if e != nil {
		t.Fatal(e)
	}
	rd := parquet.NewGenericReader[row](bytes.NewReader(b))
	rows := make([]row, rd.NumRows())
	if n, e := rd.Read(rows); n != len(rows) && e != nil {
		t.Fatal(e)
	}
	var doc struct {
		Runs []struct {
			Combos []struct {
				HMA         int64   `json:"hma"`
				HMA3        int64   `json:"hma3"`
				TotalTrades int64   `json:"total_trades"`
				TotalReturn float64 `json:"total_return"`
			} `json:"combos"`
		} `json:"runs"`
	}
	if e := json.Unmarshal([]byte(js), &doc); e != nil {
		t.Fatal(e)
	}
	combos := doc.Runs[0].Combos
	if len(rows) != 4*len(combos) || len(combos) != 9 {
		t.Fatalf("%d rows for %d combos x 4 blocks", len(rows), len(combos))
	}
	for i, c := range combos {
		var bars, trades int64
		var lg float64
		for b := 0; b < 4; b++ {
			r := rows[4*i+b]
			if r.HMA != c.HMA || r.HMA3 != c.HMA3 || r.Block != int64(b) {
				t.Fatalf("row %d: %+v, want combo %d x %d block %d", 4*i+b, r, c.HMA, c.HMA3, b)
			}
			bars, trades, lg = bars+r.Bars, trades+r.Trades, lg+r.LogGrowth
		}
		if bars != 2999 || trades != c.TotalTrades || math.Abs(math.Expm1(lg)-c.TotalReturn) > 1e-9 {
			t.Errorf("combo %d x %d: %d bar returns, %d trades, growth %.12g; want 2999, %d, %.12g", c.HMA, c.HMA3, bars, trades, math.Expm1(lg), c.TotalTrades, c.TotalReturn)
		}
	}
	if rows[0].FirstTime == 0 {
		t.Error("the first block has no start time")
	}
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--no-save", "-q", "--backend", "reference", "--blocks-out", pq); !strings.Contains(err, "--blocks-out") || !strings.Contains(err, "only with --blocks") {
		t.Errorf("--blocks-out without --blocks: %q", err)
	}
}

// TestSessionsListParity: `sessions ls` says each study's parity verdict:
// pass for the direct sum, collapse for the prefix-sum trap in fp32, "-"
// for a study of one precision (no parity report).
func TestSessionsListParity(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	grid := []string{"--db", db, "--hma", "10:50:20", "--hma3", "12:60:24", "--head", "20000"}
	for _, extra := range [][]string{nil, {"--wma", "prefix"}, {"--precision", "fp32"}} {
		if _, _, err := execute(t, append(append([]string{"run"}, grid...), extra...)...); err != "" {
			t.Fatalf("run %v: %s", extra, err)
		}
	}
	list, _, err := execute(t, "sessions", "ls", "--db", db)
	if err != "" {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	col := strings.Index(lines[0], "PARITY")
	if len(lines) != 4 || col < 0 {
		t.Fatalf("sessions ls:\n%s\nwant a header with PARITY and 3 sessions", list)
	}
	for i, want := range []string{"-", "collapse", "pass"} { // newest first
		if got := strings.Fields(lines[i+1][col:])[0]; got != want {
			t.Errorf("session %d: parity %q, want %q\n%s", 3-i, got, want, list)
		}
	}
}

// TestTilesNoteWithRows: a study that ran in tiles says so on stderr when
// its results go to a rows file (CSV), which carries no note; the CSV is
// the untiled study's byte for byte.
func TestTilesNoteWithRows(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"run", "--no-save", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:60:10", "--hma3", "12:72:12",
			"--backend", "reference", "--format", "csv", "--out", filepath.Join(dir, out)}
	}
	if _, stderr, err := execute(t, args("whole.csv")...); err != "" || strings.Contains(stderr, "tiles") {
		t.Fatalf("untiled: %s %s", err, stderr)
	}
	t.Setenv(engine.SeriesBudgetEnv, "256KiB")
	_, stderr, err := execute(t, args("tiled.csv")...)
	if err != "" || !strings.Contains(stderr, "run in ") || !strings.Contains(stderr, "tiles of the grid") {
		t.Fatalf("tiled: %s; stderr %q: want the tiles named", err, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "whole.csv"))
	b, _ := os.ReadFile(filepath.Join(dir, "tiled.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the tiled CSV (%d bytes) differs from the untiled one (%d bytes)", len(b), len(a))
	}
}
