package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"sweepbench/engine"
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
			f.Name != "bars-per-year" && f.Name != "borderline" && f.Name != "tz" && f.Name != "time-column" && f.Name != "lean-asset" {
			t.Errorf("flag --%s is not a Spec field", f.Name)
		}
	})
}

// TestFlagErrorsPhrased: the engine's field errors read as the flags that
// set them, every bad flag at once.
func TestFlagErrorsPhrased(t *testing.T) {
	_, _, err := execute(t, "run", "--hma3", "5:10", "--fee", "2", "--mode", "short", "--no-save")
	want := "--hma3 5:10:1: length 5 is below the minimum 6 (HMA3 needs floor(floor(L/2)/3) >= 1)\n" +
		"--fee 2: want a fraction per side in [0, 1), e.g. 0.00045\n" +
		"--mode short: want long-short or long-only"
	if err != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if _, _, err := execute(t, "run", "--backend", "quantum", "--no-save"); err != `--backend "quantum": unknown (want auto, reference, cuda, metal)` {
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
	if err := rep.WriteCSV(&want); err != nil {
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

// TestHostileFlags: flags from outside are refused with a message, never a
// panic or a hang: a length near MaxInt64 (warm-up arithmetic), Go number
// syntax, a device as the data, a LEAN file without its security type.
func TestHostileFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--hma", "9223372036854775807"}, "--hma 9223372036854775807:9223372036854775807:1: length 9223372036854775807 is above the maximum 1073741824 (a length is a number of bars)"},
		{[]string{"--hma3", "6:9223372036854775807:1"}, "--hma3 6:9223372036854775807:1: length 9223372036854775807 is above the maximum 1073741824"},
		{[]string{"--head", "1_000"}, `invalid argument "1_000" for "--head" flag: want a whole number written in decimal digits, e.g. 5000`},
		{[]string{"--fee", "0x1p-4"}, `invalid argument "0x1p-4" for "--fee" flag: want a decimal number, e.g. 0.00045 or 1e-5`},
		{[]string{"--bars-per-year", "1_764"}, `invalid argument "1_764" for "--bars-per-year" flag: want a decimal number`},
		{[]string{"--lean-asset", "bond"}, `--lean-asset "bond": want one of equity, option, crypto, forex, cfd, or nothing to take it from the path`},
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
	want := "--fee 2: want a fraction per side in [0, 1), e.g. 0.00045\n--tz \x1b]0;pwned\x07: unknown time zone \x1b]0;pwned\x07"
	want = strings.ReplaceAll(want, "\x1b", `\x1b`)
	want = strings.ReplaceAll(want, "\x07", `\x07`)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestSessionsKeepHowDataWasRead: a session of a LEAN file read as equity
// shows the same data line (scale, zone, the bars/year rule) from the
// database; a session on a folder of files resumes while the files are
// unchanged and is refused once a file is added (the manifest's hash).
func TestSessionsKeepHowDataWasRead(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	run := cli(t, dir, "run", "--db", db, "-q", "--data", "testdata/data/lean_spy_hour_head.csv.gz", "--lean-asset", "equity",
		"--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference")
	if run.code != 0 {
		t.Fatalf("run: %+v", run)
	}
	dataLine := strings.SplitN(run.stdout, "\n", 3)
	show := cli(t, dir, "sessions", "show", "1", "--db", db)
	if show.code != 0 || !strings.Contains(show.stdout, dataLine[0]+"\n"+dataLine[1]+"\n") ||
		!strings.Contains(dataLine[0], "LEAN equity/usa (as given): prices / 10,000, local times in America/New_York") ||
		!strings.Contains(dataLine[1], "observed over 1.1 years: a session calendar") {
		t.Errorf("show:\n%s\nrun:\n%s", show.stdout, run.stdout)
	}

	folder := filepath.Join(dir, "months")
	os.Mkdir(folder, 0o755)
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 2000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	for part, lo := range []int{0, 1000} {
		var b strings.Builder
		for i := lo; i < lo+1000; i++ {
			fmt.Fprintf(&b, "%d,%g,%g,%g,%g,%g,%d,0,1,0,0,0\n", ds.Bars.Time[i]/1e6, ds.Bars.Open[i], ds.Bars.High[i], ds.Bars.Low[i],
				ds.Bars.Close[i], ds.Bars.Volume[i], ds.Bars.Time[i]/1e6+59999)
		}
		os.WriteFile(filepath.Join(folder, fmt.Sprintf("BTCUSDT-1m-part%d.csv", part)), []byte(b.String()), 0o644)
	}
	spec = engine.DefaultSpec()
	spec.Data, spec.HMA, spec.HMA3, spec.Backend = folder, "10:30:10", "12:36:12", "reference"
	st, err := spec.Build(backends())
	if err != nil {
		t.Fatal(err)
	}
	if st.Dataset.Info.Files != 2 || st.Dataset.Bars.Len() != 2000 || st.Dataset.Bars.Close[1999] != ds.Bars.Close[1999] {
		t.Fatalf("folder: %+v", st.Dataset.Info)
	}
	s := openTestStore(t, db)
	var ids []string
	for range 2 {
		w, err := s.Begin(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}})
		if err := w.Finish(nil, context.Canceled); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(w.ID(), 10))
	}
	if r := cli(t, dir, "sessions", "resume", ids[0], "--db", db, "-q"); r.code != 0 || !strings.Contains(r.stdout, "2 files") {
		t.Fatalf("resume of an unchanged folder: %+v", r)
	}
	os.WriteFile(filepath.Join(folder, "BTCUSDT-1m-part2.csv"), []byte(fmt.Sprintf("%d,1,1,1,1,1,%d,0,1,0,0,0\n",
		ds.Bars.Time[1999]/1e6+60000, ds.Bars.Time[1999]/1e6+119999)), 0o644)
	if r := cli(t, dir, "sessions", "resume", ids[1], "--db", db); r.code == 0 || !strings.Contains(r.stderr, "changed since the session was saved") {
		t.Errorf("resume after a file was added: %+v", r)
	}
}
