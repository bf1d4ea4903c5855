package tui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
	"sweepbench/tui/screens/results"
)

func TestSetupKeys(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	if m.ctx.Raw == nil || m.setup.Pane() != 1 {
		t.Fatalf("--data should load at start and focus the form (raw %v, focus %d)", m.ctx.Raw != nil, m.setup.Pane())
	}
	cases := []struct {
		name  string
		keys  []string
		check func(t *testing.T)
	}{
		{"tab moves to the dataset pane", []string{"tab"}, func(t *testing.T) {
			if m.setup.Pane() != 0 {
				t.Fatalf("focus %d, want the dataset pane", m.setup.Pane())
			}
		}},
		{"shift+tab comes back to the form", []string{"shift+tab"}, func(t *testing.T) {
			if m.setup.Pane() != 1 || !m.setup.Form().Typing() {
				t.Fatalf("focus %d typing %v, want the form's first field", m.setup.Pane(), m.setup.Form().Typing())
			}
		}},
		// Issue 15, defect 4: in a text field every character is text, q
		// and S and ? too (a letter in a range is the range's error).
		{"q, S and ? are typed into a range", []string{"q", "S", "?"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.HMA]; v != "10:30:10qS?" {
				t.Fatalf("hma %q, want the keys typed", v)
			}
			if m.quitting || m.showHelp || m.screen != common.SetupScreen || m.setup.Form().Valid() {
				t.Fatalf("quitting %v, help %v, screen %d, valid %v: want the keys in the field and its error shown", m.quitting, m.showHelp, m.screen, m.setup.Form().Valid())
			}
		}},
		{"backspace takes them back", []string{"backspace", "backspace", "backspace"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.HMA]; v != "10:30:10" || !m.setup.Form().Valid() {
				t.Fatalf("hma %q valid %v", v, m.setup.Form().Valid())
			}
		}},
		{"a bad range shows the engine's error inline", []string{"backspace", "x"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.HMA]; v != "10:30:1x" || m.setup.Form().Valid() || !strings.Contains(m.View(), `"1x" is not an integer`) {
				t.Fatalf("hma %q valid %v:\n%s", v, m.setup.Form().Valid(), m.View())
			}
			d.key("backspace")
		}},
		{"a range the bars cannot hold names the combo", []string{"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "10:6000:10"}, func(t *testing.T) {
			if m.setup.Form().Valid() {
				t.Fatal("hma 10:6000:10 on 5,000 bars should not validate")
			}
			if v := m.View(); !strings.Contains(v, "needs") || !strings.Contains(v, "the data has 5000") {
				t.Fatalf("the engine's Grid.Validate error is not shown:\n%s", v)
			}
			d.key("enter")
			if m.screen != common.SetupScreen || !strings.Contains(m.ctx.LastErr, "the data has 5000") {
				t.Fatalf("enter on an invalid form: screen %d, last error %q", m.screen, m.ctx.LastErr)
			}
		}},
		{"a field's parse error", []string{"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "10:5:1"}, func(t *testing.T) {
			if v := m.View(); !strings.Contains(v, `HMA range 10:5:1: empty range (stop 5 < start 10;`) {
				t.Fatalf("ParseRange's error is not shown:\n%s", v)
			}
		}},
		{"a length below the minimum is marked on its field", []string{"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "1:10"}, func(t *testing.T) {
			v := m.View()
			if !strings.Contains(v, "length 1 is below the minimum 2") {
				t.Fatalf("Grid.Validate's error is not shown:\n%s", v)
			}
			if !regexp.MustCompile(`!\s*HMA range`).MatchString(v) {
				t.Fatalf("the HMA field is not marked with !:\n%s", v)
			}
			d.key("backspace", "backspace", "backspace", "backspace", "10:5:1")
		}},
		{"down and choices cycle, skipping the unavailable backend", []string{"down", "down", "down", "down", "down", "down", "down", "right"}, func(t *testing.T) {
			if v := m.setup.Form().Values()[form.Backend]; v != "auto" {
				t.Fatalf("backend %q: right from reference should skip cuda (unavailable) and wrap to auto", v)
			}
			if !strings.Contains(m.View(), "cuda unavailable: no NVIDIA driver found") {
				t.Fatal("the unavailable backend's reason is not shown")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d.key(c.keys...)
			c.check(t)
		})
	}
	// q on a choice field quits.
	_, cmd := m.Update(keyMsg("q"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q did not quit")
	}
}

func TestPaneFocusAndBack(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after the run, want results (last error %q)", m.screen, m.ctx.LastErr)
	}
	want := []results.Pane{results.ParityPane, results.HeatmapPane, results.CrossoverPane, results.ComboPane, results.RobustnessPane, results.MetricsPane}
	for i, p := range want {
		d.key("tab")
		if m.results.Focus() != p {
			t.Fatalf("tab %d: focus %s, want %s", i+1, results.PaneNames[m.results.Focus()], results.PaneNames[p])
		}
		if !strings.Contains(strings.SplitN(m.View(), "\n", 2)[0], "["+results.PaneNames[p]+"]") {
			t.Fatalf("tab %d: the header does not mark %s", i+1, results.PaneNames[p])
		}
	}
	d.key("shift+tab")
	if m.results.Focus() != results.RobustnessPane {
		t.Fatalf("shift+tab: focus %s", results.PaneNames[m.results.Focus()])
	}
	// The heatmap cursor selects a combo for every pane.
	d.key("tab", "tab", "tab") // metrics, parity, heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("focus %s, want Heatmap", results.PaneNames[m.results.Focus()])
	}
	d.key("g")
	d.settle()
	if m.ctx.Selected != 0 || m.ctx.Inspect == nil || m.ctx.Inspect.Index != 0 {
		t.Fatalf("g on the heatmap: selected %d", m.ctx.Selected)
	}
	d.key("l", "j")
	d.settle()
	if got := m.ctx.Results.Grid.At(m.ctx.Selected); got != (engine.Combo{HMA: 20, HMA3: 24}) {
		t.Fatalf("after l, j: combo %+v, want hma 20 x hma3 24", got)
	}
	// enter opens the crossover of the selected combo; n steps its flips.
	d.key("enter")
	if m.results.Focus() != results.CrossoverPane {
		t.Fatalf("enter: focus %s", results.PaneNames[m.results.Focus()])
	}
	first := m.results.Crossover().Title()
	d.key("n")
	if m.results.Crossover().Title() == first {
		t.Fatalf("n did not move to the next flip (%s)", first)
	}
	// Metric keys change the heatmap and the table together.
	d.key("m")
	if m.ctx.Metric != "sortino" || !strings.Contains(m.results.Heatmap().Title(), "sortino") {
		t.Fatalf("m: metric %q, heatmap %q", m.ctx.Metric, m.results.Heatmap().Title())
	}
	// Filter and sort in the table.
	d.key("tab", "tab") // combo, metrics
	d.key("/", "h", "m", "a", "=", "2", "0", "enter")
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("filter hma=20: %q, want 3 of 9 combos", got)
	}
	d.key("b")
	if m.ctx.Results.Grid.At(m.ctx.Selected).HMA != 20 {
		t.Fatalf("b jumped outside the filter: %+v", m.ctx.Results.Grid.At(m.ctx.Selected))
	}
	// esc goes back to the form, esc again back to the results.
	d.key("esc")
	if m.screen != common.SetupScreen {
		t.Fatalf("esc: screen %d, want setup", m.screen)
	}
	d.key("esc")
	if m.screen != common.ResultsScreen {
		t.Fatalf("esc from setup with results: screen %d", m.screen)
	}
	// r reruns the same study.
	before := m.ctx.Results
	d.key("r")
	if m.ctx.Results == before || m.screen != common.ResultsScreen {
		t.Fatal("r did not rerun")
	}
}

func TestResize(t *testing.T) {
	d := newDriver(t, smallFlags(), 80, 24)
	d.key("enter")
	d.settle()
	for _, sz := range [][2]int{{80, 24}, {200, 60}, {120, 40}, {100, 30}, {60, 16}, {81, 25}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for p := range results.NumPanes {
			d.m.results.SetFocus(p)
			checkSize(t, d.m.View(), sz[0], sz[1])
		}
		d.key("?")
		checkSize(t, d.m.View(), sz[0], sz[1])
		d.key("?")
	}
	// A terminal too small says so whole (wrapped, issue 15 defect 9), at
	// 50x14 and at 40x10.
	for _, sz := range [][2]int{{50, 14}, {40, 10}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := strings.Join(strings.Fields(d.m.View()), " ")
		if want := fmt.Sprintf("sweepbench needs at least 60x16 (this terminal is %dx%d); q quits", sz[0], sz[1]); !strings.Contains(v, want) {
			t.Fatalf("a tiny terminal should say %q:\n%s", want, d.m.View())
		}
		checkSize(t, d.m.View(), sz[0], sz[1])
	}
}

// TestEverySize draws every pane at sizes from the minimum to 200x60, in
// colour, and checks each screen fills the terminal exactly (a resize
// through them once found a table drawing old rows against new columns).
func TestEverySize(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: testRegistry(), Flags: smallFlags()}, termenv.TrueColor, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.key("enter")
	d.settle()
	for w := minW; w <= 200; w += 7 {
		for h := minH; h <= 60; h += 4 {
			d.send(tea.WindowSizeMsg{Width: w, Height: h})
			for p := range results.NumPanes {
				m.results.SetFocus(p)
				v := m.View()
				if strings.Contains(v, "internal error") {
					t.Fatalf("%dx%d, %s:\n%s", w, h, results.PaneNames[p], v)
				}
				checkSize(t, v, w, h)
			}
		}
	}
}

// TestColour renders every screen with colour: the same sizes, and the
// unicode frame (the plain one is ASCII).
func TestColour(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: testRegistry(), Flags: smallFlags()}, termenv.TrueColor, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	if !strings.Contains(m.View(), "╭") && !strings.Contains(m.View(), "┏") {
		t.Fatal("no unicode frame in colour mode")
	}
	d.key("enter")
	d.settle()
	for _, sz := range [][2]int{{80, 24}, {160, 48}, {200, 60}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for p := range results.NumPanes {
			m.results.SetFocus(p)
			checkSize(t, m.View(), sz[0], sz[1])
		}
	}
}

// TestCancelMidRun starts a sweep that cannot finish before esc (the slow
// backend computes a few chunks, then holds until cancelled, so a fast
// machine cannot finish it first), cancels it with esc through the real
// program loop, and checks the UI kept running and shows what completed,
// marked incomplete.
func TestCancelMidRun(t *testing.T) {
	m0 := newModel(context.Background(), Config{Registry: slowRegistry(), Flags: slowFlags()}, termenv.Ascii, true, true)
	tm := teatest.NewTestModel(t, m0, teatest.WithInitialTermSize(100, 30))
	waitOutput(t, tm, "5,000 bars, ") // the summary, not the list
	tm.Send(keyMsg("enter"))
	waitOutput(t, tm, "compute") // a lane past its first chunk
	tm.Send(keyMsg("esc"))
	waitOutput(t, tm, "cancelled")
	tm.Send(keyMsg("tab")) // the UI still answers
	waitOutput(t, tm, "[Parity]")
	tm.Send(keyMsg("q"))
	m := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
	r := m.ctx.Results
	if r == nil {
		t.Fatalf("no results after cancel (last error %q)", m.ctx.LastErr)
	}
	if r.Complete() {
		t.Fatal("a cancelled study reports complete")
	}
	if r.R64.Status != engine.StatusCancelled && (r.R32 == nil || r.R32.Status != engine.StatusCancelled) {
		t.Fatalf("no run marked cancelled: %s", r.R64.Status)
	}
	// A cancel the user asked for is a note, not an error.
	if m.ctx.LastErr != "" || !strings.Contains(m.ctx.Info, "cancelled: showing the") {
		t.Fatalf("status line: error %q, info %q", m.ctx.LastErr, m.ctx.Info)
	}
}

// TestCancelHeld does the same on the synchronous driver, pressing esc
// between two progress updates.
func TestCancelHeld(t *testing.T) {
	m := newModel(context.Background(), Config{Registry: slowRegistry(), Flags: slowFlags()}, termenv.Ascii, true, true)
	d := &driver{t: t, m: m}
	d.run(m.Init())
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.hold = true
	d.key("enter")
	if d.m.screen != common.RunScreen || d.pending == nil {
		t.Fatalf("screen %d: the run did not start (last error %q)", d.m.screen, d.m.ctx.LastErr)
	}
	if v := d.m.View(); !strings.Contains(v, "Sweeping hma 2:100:2 x hma3 6:300:6") || !strings.Contains(v, "esc cancels") {
		t.Fatalf("run screen:\n%s", v)
	}
	d.key("esc")
	if !strings.Contains(d.m.View(), "cancelling") {
		t.Fatal("esc did not show the cancel")
	}
	d.drain()
	if d.m.screen == common.RunScreen {
		t.Fatal("still on the run screen after the study ended")
	}
	if d.m.ctx.Results != nil && d.m.ctx.Results.Complete() {
		t.Fatal("a cancelled study reports complete")
	}
}

func TestErrorsShown(t *testing.T) {
	t.Run("a missing file", func(t *testing.T) {
		f := smallFlags()
		f.Data = "/nonexistent/bars.csv"
		d := newDriver(t, f, 80, 24)
		if !strings.Contains(d.m.ctx.LastErr, "/nonexistent/bars.csv") || !strings.Contains(d.m.View(), "error:") {
			t.Fatalf("last error %q", d.m.ctx.LastErr)
		}
	})
	t.Run("an unavailable backend on the command line", func(t *testing.T) {
		f := smallFlags()
		f.Backend = "cuda"
		d := newDriver(t, f, 80, 24)
		if !strings.Contains(d.m.ctx.LastErr, "backend cuda: not available here: no NVIDIA driver found") {
			t.Fatalf("last error %q", d.m.ctx.LastErr)
		}
	})
	t.Run("a timeframe finer than the data", func(t *testing.T) {
		f := smallFlags()
		f.Data, f.Timeframe = "../testdata/data/binance_klines_BTCUSDT-1h-2023-03.json.gz", "5m"
		d := newDriver(t, f, 100, 30)
		if d.m.setup.Form().Valid() || !strings.Contains(d.m.View(), "timeframe 5m: ") {
			t.Fatalf("resampling 1h bars to 5m should fail with the engine's error:\n%s", d.m.View())
		}
	})
	t.Run("a panic in a component", func(t *testing.T) {
		d := newDriver(t, smallFlags(), 80, 24)
		d.key("enter")
		d.m.screens[common.ResultsScreen] = (*results.Model)(nil) // the next key to the results dereferences it
		d.key("j")
		if !strings.Contains(d.m.ctx.LastErr, "internal error") {
			t.Fatalf("last error %q", d.m.ctx.LastErr)
		}
	})
	t.Run("a panic in a command", func(t *testing.T) {
		msg := common.Guard(func() tea.Msg { panic("boom") }, func(err error) tea.Msg { return err })()
		if err, ok := msg.(error); !ok || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("guard returned %v", msg)
		}
	})
}

// TestFilePicker opens a file through the picker: only the formats the
// loaders read are offered, and the chosen one is loaded and summarised.
func TestFilePicker(t *testing.T) {
	t.Chdir("../testdata/data")
	f := DefaultFlags()
	f.Backend = "reference"
	d := newDriver(t, f, 100, 30)
	m := d.m
	if m.setup.Pane() != 0 || m.ctx.Raw != nil {
		t.Fatal("without --data the dataset pane has the focus and nothing is loaded")
	}
	d.key("down", "down", "enter") // "Open a file..."
	if !m.setup.Datasets().Picking() {
		t.Fatal("enter on Open a file did not open the picker")
	}
	v := m.View()
	if !strings.Contains(v, "binance_archive_FILUSDT-1m-2023-08_head.csv") {
		t.Fatalf("the picker does not list the data files:\n%s", v)
	}
	// The first entry is the folder lean/; the next, README.md: shown,
	// but refused with the reason.
	d.key("down", "enter")
	if !strings.Contains(m.ctx.LastErr, "README.md: not a supported file name") {
		t.Fatalf("last error %q", m.ctx.LastErr)
	}
	// The whole refusal under the picker, every supported extension
	// named (the status bar has room for its start only).
	if v := strings.Join(strings.Fields(m.setup.Datasets().View()), " "); !strings.Contains(v, "README.md: not a supported file name: want "+strings.Join(data.SupportedExtensions(), ", ")) {
		t.Fatalf("the picker does not show the whole refusal:\n%s", m.setup.Datasets().View())
	}
	d.key("down", "enter")
	if m.setup.Datasets().Picking() || m.ctx.Raw == nil {
		t.Fatalf("the file was not loaded (last error %q)", m.ctx.LastErr)
	}
	if v := m.View(); !strings.Contains(v, "binance_archive_FILUSDT-1m-2023-08_head.csv") || !strings.Contains(v, "layout binance-archive") {
		t.Fatalf("no summary of the loaded file:\n%s", v)
	}
	if m.setup.Pane() != 1 {
		t.Fatal("after loading, the form should have the focus")
	}
}

// TestEscAndFilterFromPanes: esc from the crossover opened with enter goes
// back to the pane enter came from, not to the form (so what is typed next
// edits nothing); / from any pane opens the table's filter, and the text
// typed after it is the filter, not a string of commands (r would rerun).
func TestEscAndFilterFromPanes(t *testing.T) {
	d := newDriver(t, smallFlags(), 120, 40)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after the run (last error %q)", m.screen, m.ctx.LastErr)
	}
	d.key("enter") // on the metrics table: the selected combo's crossover
	if m.results.Focus() != results.CrossoverPane {
		t.Fatalf("enter: focus %s, want Crossover", results.PaneNames[m.results.Focus()])
	}
	d.key("esc")
	if m.screen != common.ResultsScreen || m.results.Focus() != results.MetricsPane {
		t.Fatalf("esc from the crossover: screen %d focus %s, want the results' Metrics pane", m.screen, results.PaneNames[m.results.Focus()])
	}
	d.key("tab", "tab", "enter", "esc") // heatmap -> crossover -> back to the heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("esc from a crossover opened on the heatmap: focus %s", results.PaneNames[m.results.Focus()])
	}
	d.key("esc") // from a pane enter did not open: the table
	if m.results.Focus() != results.MetricsPane || m.screen != common.ResultsScreen {
		t.Fatalf("esc from the heatmap: focus %s", results.PaneNames[m.results.Focus()])
	}

	before := m.ctx.Results
	d.key("tab") // parity
	d.key("/", "h", "m", "a", "=", "2", "0", "enter")
	if m.results.Focus() != results.MetricsPane {
		t.Fatalf("/ from the parity pane: focus %s, want Metrics", results.PaneNames[m.results.Focus()])
	}
	if got := m.results.Metrics().Title(); !strings.HasPrefix(got, "Metrics: 3 of 9") {
		t.Fatalf("filter hma=20 typed after / on the parity pane: %q, want 3 of 9 combos", got)
	}
	d.key("tab", "/", "r", "esc") // r inside the filter is text, not a rerun
	d.settle()
	if m.screen != common.ResultsScreen || m.ctx.Results != before {
		t.Fatal("the r typed after / reran the study")
	}
}

// TestHeatmapSaysWhatItShows: a grid larger than the pane scrolls with the
// cursor, and the legend says which rows and columns are in view.
func TestHeatmapSaysWhatItShows(t *testing.T) {
	f := smallFlags()
	f.Head = 1500
	f.HMA, f.HMA3 = "10:70:2", "12:120:2" // 31 x 55 combos
	d := newDriver(t, f, 80, 24)
	m := d.m
	d.key("enter")
	d.settle()
	if m.screen != common.ResultsScreen {
		t.Fatalf("screen %d after the run (last error %q)", m.screen, m.ctx.LastErr)
	}
	d.key("tab", "tab") // the heatmap
	if m.results.Focus() != results.HeatmapPane {
		t.Fatalf("focus %s", results.PaneNames[m.results.Focus()])
	}
	v := m.View()
	re := regexp.MustCompile(`shown: hma (\d+)\.\.(\d+) of 10\.\.70, hma3 (\d+)\.\.(\d+) of 12\.\.120`)
	if !re.MatchString(v) {
		t.Fatalf("the clipped heatmap does not say what it shows:\n%s", v)
	}
	d.key("G") // the last combo: the view follows it
	if got := re.FindStringSubmatch(m.View()); got == nil || got[2] != "70" || got[4] != "120" {
		t.Fatalf("after G the view should end at hma 70, hma3 120: %v\n%s", got, m.View())
	}
}

// fixedPreflight is a workbench preflight that does not depend on the
// host: rates r, 2 cores and a calibration that says total (it counts its
// calls); the memory limit is the host's, so the grids below keep little.
func fixedPreflight(r engine.Rates, total time.Duration, calls *int) engine.PreflightOptions {
	return engine.PreflightOptions{Rates: r, Workers: 2,
		Calibrate: func(_ context.Context, s *engine.Study) (engine.Estimate, error) {
			*calls++
			d := s.Grid.Distinct()
			return engine.Estimate{Combos: s.Grid.Len(), Computed: d.Len(), Series: d.HMA.Len() + d.HMA3.Len(), Tiles: 1, Workers: 2, Total: total}, nil
		}}
}

// preflightDriver is a driver whose workbench checks studies with
// fixedPreflight.
func preflightDriver(t *testing.T, f Flags, r engine.Rates, total time.Duration) (*driver, *int) {
	calls := new(int)
	cfg := Config{Registry: testRegistry(), Flags: f, Preflight: fixedPreflight(r, total, calls)}
	d := &driver{t: t, m: newModel(context.Background(), cfg, termenv.Ascii, true, true)}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	return d, calls
}

// TestLongCPUStudyAsksOnItsEstimate: 999,000 combos in fp64 (under the
// million combos x precisions the workbench used to ask on) that the
// calibration says take 15 minutes do not start on enter: the run screen
// says the estimate and asks, as run asks for --yes; n goes back to the
// form with nothing started, y starts it.
func TestLongCPUStudyAsksOnItsEstimate(t *testing.T) {
	f := smallFlags()
	f.Precision, f.HMA, f.HMA3 = "fp64", "2:1999", "6:505"
	d, calls := preflightDriver(t, f, engine.DefaultRates, 15*time.Minute)
	d.hold = true
	d.key("enter")
	want := "999,000 combos in 1 precision on the CPU reference would take ~15m0s (999,000 combos a precision, 2,248 series, 2 cores): y runs it anyway"
	if d.m.run.Running() || d.m.screen != common.RunScreen || !d.m.run.Asking() || *calls != 1 {
		t.Fatalf("running %v, screen %d, asking %v, calibrations %d: want the question on the run screen", d.m.run.Running(), d.m.screen, d.m.run.Asking(), *calls)
	}
	if v := d.m.View(); !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
		t.Fatalf("the run screen does not ask %q:\n%s", want, v)
	}
	d.key("n")
	if d.m.run.Running() || d.m.run.Checking() || d.m.screen != common.SetupScreen || d.m.run.Started() != 0 {
		t.Fatalf("n: running %v, checking %v, screen %d: want the form, nothing started", d.m.run.Running(), d.m.run.Checking(), d.m.screen)
	}
	d.key("enter") // asked again: a new check
	if !d.m.run.Asking() || *calls != 2 {
		t.Fatalf("enter again: asking %v, calibrations %d", d.m.run.Asking(), *calls)
	}
	d.key("y")
	if !d.m.run.Running() || d.m.screen != common.RunScreen || d.pending == nil {
		t.Fatalf("y: screen %d, running %v: the confirmed study did not start (last error %q)", d.m.screen, d.m.run.Running(), d.m.ctx.LastErr)
	}
	if v := d.m.View(); !strings.Contains(v, "estimate ~15m0s (999,000 combos a precision") {
		t.Errorf("the running study does not say its estimate:\n%s", v)
	}
	d.key("esc")
	d.drain()
}

// TestManyCombosShortStudyStarts: 1,000,000 combos in both precisions
// (over the combo count the workbench used to ask on) that the calibration
// says take two minutes start on the first enter, the estimate said over
// the lanes.
func TestManyCombosShortStudyStarts(t *testing.T) {
	f := smallFlags()
	f.HMA, f.HMA3 = "2:1001", "6:1005"
	d, calls := preflightDriver(t, f, engine.DefaultRates, 2*time.Minute)
	d.hold = true
	d.key("enter")
	if !d.m.run.Running() || d.m.run.Checking() || *calls != 1 {
		t.Fatalf("running %v, checking %v, calibrations %d (last error %q): want it started", d.m.run.Running(), d.m.run.Checking(), *calls, d.m.ctx.LastErr)
	}
	if v := d.m.View(); !strings.Contains(v, "estimate ~2m0s (1,000,000 combos a precision, 1,500 series, 2 cores)") {
		t.Errorf("the run screen does not say the estimate:\n%s", v)
	}
	d.key("esc")
	d.drain()
}

// TestImpossibleGridAskedAtOnce: 200,000,000 combos over the 43,208 bars
// of the embedded data (about half of them computed, the rest aliases) are
// at least 9 minutes on 2 cores from arithmetic alone (fp64): asked about
// at once, with the time at the typical rate (about 6 hours, not the 9
// minutes' floor), without advising one precision to a study of one and
// without the calibration (which takes seconds on such a grid's middle
// lengths).
func TestImpossibleGridAskedAtOnce(t *testing.T) {
	f := smallFlags()
	f.Head = 0
	f.Precision, f.HMA, f.HMA3 = "fp64", "2:20001", "6:10005"
	d, calls := preflightDriver(t, f, engine.DefaultRates, time.Hour)
	d.key("enter")
	if !d.m.run.Asking() || *calls != 0 || d.m.run.Running() {
		t.Fatalf("asking %v, calibrations %d, running %v (last error %q): want the question at once", d.m.run.Asking(), *calls, d.m.run.Running(), d.m.ctx.LastErr)
	}
	want := "200,000,000 combos in 1 precision on the CPU reference would take about 6h0m0s on 2 cores (from the grid's size and the bars alone): y runs it anyway; any other key leaves it (a GPU backend or a coarser grid is quicker)"
	if v := strings.Join(strings.Fields(d.m.View()), " "); !strings.Contains(v, want) {
		t.Fatalf("the run screen does not ask %q:\n%s", want, v)
	}
	d.key("esc")
	if d.m.run.Checking() || d.m.screen != common.SetupScreen || d.m.run.Started() != 0 {
		t.Fatalf("esc: checking %v, screen %d, started %d", d.m.run.Checking(), d.m.screen, d.m.run.Started())
	}
}

// TestWindowFromFlags: `tui --from --to` sweeps the window: the dataset the
// form describes holds only the bars in it.
func TestWindowFromFlags(t *testing.T) {
	f := smallFlags()
	f.Head = 0
	f.From, f.To = "2025-06-05", "2025-06-05"
	d := newDriver(t, f, 120, 40)
	d.m.setup.Validate()
	ds := d.m.ctx.Dataset
	if ds == nil {
		t.Fatalf("no dataset (last error %q)", d.m.ctx.LastErr)
	}
	first, last := ds.Info.First.UTC().Format("2006-01-02 15:04"), ds.Info.Last.UTC().Format("2006-01-02 15:04")
	if first != "2025-06-05 00:00" || last != "2025-06-05 23:59" {
		t.Errorf("the form's dataset runs %s .. %s, want the day 2025-06-05", first, last)
	}
}
