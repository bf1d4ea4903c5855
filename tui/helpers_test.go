package tui

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/screens/run"
)

func init() {
	// Golden files are plain text: no colour, ASCII only.
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
}

// offline is a backend that cannot run here, with a fixed reason (the real
// ones depend on the machine running the tests).
type offline struct{}

func (offline) Name() string                      { return "cuda" }
func (offline) Available() error                  { return errors.New("no NVIDIA driver found (libcuda.so.1)") }
func (offline) Devices() ([]engine.Device, error) { return nil, offline{}.Available() }
func (offline) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return nil, offline{}.Available()
}

func testRegistry() *engine.Registry {
	r := &engine.Registry{}
	r.Register(reference.New())
	r.Register(offline{})
	return r
}

// smallFlags is the small real study: embedded BTC/USDT 1m, the
// first 5,000 bars, hma 10:30:10 x hma3 12:36:12 on the reference backend.
func smallFlags() Flags {
	f := DefaultFlags()
	f.Data, f.DataGiven = "embedded:btcusdt-1m", true
	f.Head = 5000
	f.HMA, f.HMA3 = "10:30:10", "12:36:12"
	f.Backend = "reference"
	return f
}

func newTestModel(f Flags) *Model {
	return newModel(context.Background(), Config{Registry: testRegistry(), Flags: f}, termenv.Ascii, true, true)
}

// driver runs a model synchronously: it feeds a message, runs the commands
// it returns (and theirs), and feeds back the messages the workbench
// itself defines. Spinner and cursor ticks are dropped, so it settles.
type driver struct {
	t       *testing.T
	m       *Model
	pending tea.Cmd // the runner's next read, held so a test can act mid-run
	hold    bool    // hold the runner's reads instead of following them
}

func newDriver(t *testing.T, f Flags, w, h int) *driver {
	d := &driver{t: t, m: newTestModel(f)}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

func (d *driver) send(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	if sm, ok := msg.(common.ScreenMsg); ok && d.hold {
		if _, ok := sm.Msg.(run.ProgressMsg); ok {
			d.pending = cmd
			return
		}
	}
	if false {
		d.pending = cmd
		return
	}
	d.run(cmd)
}

// drain follows the held runner reads until the study is done.
func (d *driver) drain() {
	for d.pending != nil {
		c := d.pending
		d.pending = nil
		d.hold = false
		d.run(c)
	}
}

// settle computes the selected combo's detail if it is not there yet (the
// program computes it after a short pause).
func (d *driver) settle() {
	m := d.m
	if m.state.Results == nil || m.state.Selected < 0 {
		return
	}
	if in := m.state.Inspect; in == nil || in.Index != m.state.Selected {
		d.send(m.results.Inspect()())
	}
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
	case tea.QuitMsg:
	default:
		// tea.Sequence: its commands, in order.
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
			for i := range v.Len() {
				d.run(v.Index(i).Interface().(tea.Cmd))
			}
			return
		}
		if feed(msg) {
			d.send(msg)
		}
	}
}

// feed reports whether the driver passes msg back to the model.
func feed(msg tea.Msg) bool {
	p := reflect.TypeOf(msg).PkgPath()
	return strings.HasPrefix(p, "sweepbench/") || p == "github.com/charmbracelet/bubbles/filepicker"
}

func (d *driver) key(keys ...string) {
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// waitFor polls cond (the driver is synchronous, but a run's goroutine is not).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slow is the reference backend that computes only the first few chunks
// and then holds every lane until the sweep is cancelled: a study on it
// is always still running when esc arrives, however fast the machine.
type slow struct{ engine.Backend }

func (slow) Name() string { return "slow" }

func (s slow) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	k, err := s.Backend.Prepare(ctx, job)
	if err != nil {
		return nil, err
	}
	return &slowKernel{Kernel: k}, nil
}

type slowKernel struct {
	engine.Kernel
	calls atomic.Int32
}

func (k *slowKernel) ChunkSize() int { return min(k.Kernel.ChunkSize(), 16) }

func (k *slowKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	if k.calls.Add(1) > 2 {
		<-ctx.Done()
		return ctx.Err()
	}
	return k.Kernel.Compute(ctx, lane, first, out)
}

// slowRegistry is testRegistry with the slow backend.
func slowRegistry() *engine.Registry {
	r := testRegistry()
	r.Register(slow{reference.New()})
	return r
}

// slowFlags is the small study on the slow backend with a grid of 2,500
// combos (many chunks).
func slowFlags() Flags {
	f := smallFlags()
	f.HMA, f.HMA3 = "2:100:2", "6:300:6"
	f.Backend = "slow"
	return f
}

// global sends keys meant as the workbench's own (S, B, q, ?): when a text
// field of the setup form has the focus, esc first leaves it (in a text
// field keys are text).
func (d *driver) global(keys ...string) {
	if d.m.screen == common.SetupScreen && d.m.setup.Pane() == 1 && d.m.setup.Form().Typing() {
		d.key("esc")
	}
	d.key(keys...)
}

func lastLine(v string) string {
	ls := strings.Split(strings.TrimRight(v, "\n"), "\n")
	return ls[len(ls)-1]
}
