package cli

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"sweepbench/engine"
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
	if !reflect.DeepEqual(sf.spec, engine.DefaultSpec()) {
		t.Errorf("flag defaults %+v\nDefaultSpec   %+v", sf.spec, engine.DefaultSpec())
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "data" && f.Name != "hma" && f.Name != "hma3" && f.Name != "fee" && f.Name != "mode" && f.Name != "source" &&
			f.Name != "timeframe" && f.Name != "head" && f.Name != "backend" && f.Name != "precision" && f.Name != "wma" &&
			f.Name != "bars-per-year" && f.Name != "borderline" && f.Name != "tz" && f.Name != "time-column" && f.Name != "lean-asset" &&
			f.Name != "from" && f.Name != "to" && f.Name != "strategy" && f.Name != "param" && f.Name != "fast" && f.Name != "slow" &&
			f.Name != "fast-below-slow" && f.Name != "formulation" && f.Name != "fill" && f.Name != "slippage" && f.Name != "risk-free" {
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
		{[]string{"--data", "../testdata/data/lean_spy_hour_head.csv.gz"}, "../testdata/data/lean_spy_hour_head.csv.gz: LEAN rows, but the path does not say the security type"},
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
	out, _, err := execute(t, "run", "--no-save", "-q", "--data", "../testdata/data/lean_spy_hour_head.csv.gz", "--lean-asset", "equity",
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
