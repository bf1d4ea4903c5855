package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSessionsReportAndPlot: `sessions report` writes one HTML page with
// the session's figures inline and `sessions plot` one figure as SVG or
// PNG, atomically; bad input is refused naming what is wrong, before
// anything is written.
func TestSessionsReportAndPlot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	grid := []string{"--head", "20000", "--hma", "10:50:20", "--hma3", "12:60:24", "--backend", "reference", "-q", "--db", db}
	if _, _, err := execute(t, append([]string{"run", "--blocks", "4"}, grid...)...); err != "" {
		t.Fatal(err)
	}
	if _, _, err := execute(t, append([]string{"run", "--precision", "fp64"}, grid...)...); err != "" {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "r.html")
	if _, stderr, err := execute(t, "sessions", "report", "1", "--db", db, "--out", page); err != "" || !strings.Contains(stderr, "wrote "+page) {
		t.Fatalf("report: %q, stderr %q", err, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `<svg class="figure"`, "Parity fp32 vs fp64", `id="robustness"`, "PBO"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("the page has no %q", want)
		}
	}
	for _, bad := range []string{"<script", `src="http`, `href="http`, "url(http", "@import"} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("the page has %q: it must need nothing but itself", bad)
		}
	}

	svg := filepath.Join(dir, "h.svg")
	if _, _, err := execute(t, "sessions", "plot", "1", "--db", db, "--figure", "heatmap", "--of", "diff", "--out", svg); err != "" {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(svg); !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("sharpe, fp32 - fp64")) {
		t.Errorf("the SVG: %.200s", b)
	}
	png := filepath.Join(dir, "p.png")
	if _, _, err := execute(t, "sessions", "plot", "1", "--db", db, "--figure", "pbo-logits", "--out", png); err != "" {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("--out p.png is not a PNG: %.16q", b)
	}

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown session", []string{"sessions", "plot", "7", "--figure", "heatmap"}, "session 7: no such session (sweepbench sessions ls lists them)"},
		{"unknown session, report", []string{"sessions", "report", "7", "--out", filepath.Join(dir, "x.html")}, "session 7: no such session"},
		{"unknown figure", []string{"sessions", "plot", "1", "--figure", "pie"}, `--figure: unknown figure "pie": want one of heatmap, parity-dn`},
		{"no figure", []string{"sessions", "plot", "1"}, "--figure: name one of heatmap"},
		{"robustness without --blocks", []string{"sessions", "plot", "2", "--figure", "pbo-logits", "--out", filepath.Join(dir, "x.svg")},
			"figure pbo-logits: session 2 has no robustness section: its study ran without --blocks"},
		{"walk-forward without --wf", []string{"sessions", "plot", "1", "--figure", "wf-equity", "--out", filepath.Join(dir, "x.svg")},
			"figure wf-equity: session 1 has no walk-forward: its study ran without --wf"},
		{"parity with one precision", []string{"sessions", "plot", "2", "--figure", "parity-dn", "--out", filepath.Join(dir, "x.svg")},
			"figure parity-dn: session 2 has no parity report"},
		{"unknown metric", []string{"sessions", "plot", "1", "--figure", "heatmap", "--metric", "alpha", "--out", filepath.Join(dir, "x.svg")},
			`figure heatmap: session 1 has no metric "alpha"`},
		{"combo outside the grid", []string{"sessions", "plot", "1", "--figure", "equity", "--combo", "11:12", "--out", filepath.Join(dir, "x.svg")},
			"figure equity: session 1 has no combo hma 11, hma3 12: its grid is hma 10:50:20 x hma3 12:60:24"},
		{"bad combo", []string{"sessions", "plot", "1", "--figure", "equity", "--combo", "eleven"}, `--combo "eleven": want HMA:HMA3 lengths`},
		{"bad format", []string{"sessions", "plot", "1", "--figure", "heatmap", "--format", "pdf"}, `--format "pdf": want svg or png`},
		{"unknown extension", []string{"sessions", "plot", "1", "--figure", "heatmap", "--out", filepath.Join(dir, "x.gif")},
			"--out " + filepath.Join(dir, "x.gif") + ": a figure is written as .svg or .png, not .gif"},
		{"unknown extension with --format", []string{"sessions", "plot", "1", "--figure", "heatmap", "--format", "svg", "--out", filepath.Join(dir, "x.gif")},
			"a figure is written as .svg or .png, not .gif"},
		{"--format png, --out .svg", []string{"sessions", "plot", "1", "--figure", "heatmap", "--format", "png", "--out", filepath.Join(dir, "x.svg")},
			"--format png contradicts --out " + filepath.Join(dir, "x.svg") + ": name the file .png, or leave --format out to write SVG"},
		{"--format svg, --out .png", []string{"sessions", "plot", "1", "--figure", "heatmap", "--format", "svg", "--out", filepath.Join(dir, "x.png")},
			"--format svg contradicts --out " + filepath.Join(dir, "x.png")},
		{"bench", []string{"sessions", "plot", "1", "--figure", "bench"},
			"--figure bench: sessions hold no bench ladder: `sweepbench bench` saves none with a session, and its --json output cannot be plotted from a session"},
		{"missing directory", []string{"sessions", "plot", "1", "--figure", "heatmap", "--out", filepath.Join(dir, "no", "x.svg")}, "the directory " + filepath.Join(dir, "no") + " does not exist"},
		{"the database", []string{"sessions", "report", "1", "--out", db}, "is the sessions database: refusing to overwrite it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := execute(t, append(c.args, "--db", db)...)
			if !strings.Contains(err, c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
		})
	}
	for _, name := range []string{"x.svg", "x.png", "x.gif"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused plot left %s", name)
		}
	}
	// bench is offered nowhere: not in --figure's list, not in the help.
	bench := regexp.MustCompile(`\bbench\b`) // not sweepbench
	if _, _, err := execute(t, "sessions", "plot", "1", "--db", db, "--figure", "pie"); bench.MatchString(err) {
		t.Errorf("the unknown-figure error offers bench: %q", err)
	}
	if help, _, _ := execute(t, "sessions", "plot", "--help"); bench.MatchString(help) {
		t.Errorf("plot --help offers bench:\n%s", help)
	}

	// The format is the --out file's extension's, whatever the case; an
	// --out without one (or stdout) is SVG unless --format says otherwise.
	for _, c := range []struct {
		args []string
		out  string
		png  bool
	}{
		{nil, "e.PNG", true},
		{nil, "e.Svg", false},
		{[]string{"--format", "png"}, "e2.png", true},
		{[]string{"--format", "PNG"}, "e3", true},
		{nil, "e4", false},
	} {
		out := filepath.Join(dir, c.out)
		args := append([]string{"sessions", "plot", "1", "--db", db, "--figure", "pbo-logits", "--out", out}, c.args...)
		if _, _, err := execute(t, args...); err != "" {
			t.Errorf("%q: %s", args, err)
			continue
		}
		b, _ := os.ReadFile(out)
		if isPNG := bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")); isPNG != c.png {
			t.Errorf("%q wrote %.16q, want PNG %v", args, b, c.png)
		}
		if !c.png && !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%q wrote %.16q, want SVG", args, b)
		}
	}

	// A directory that cannot be written: named before anything is drawn.
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 { // root writes anywhere but in sysfs
		if _, err := os.Stat("/sys/kernel"); err != nil {
			t.Skip("running as root without /sys: no unwritable directory to try")
		}
		ro = "/sys"
	}
	out := filepath.Join(ro, "x.svg")
	if _, _, err := execute(t, "sessions", "plot", "1", "--db", db, "--figure", "heatmap", "--out", out); !strings.Contains(err, "--out "+out+": cannot be written") {
		t.Errorf("error %q, want --out %s: cannot be written", err, out)
	}
}
