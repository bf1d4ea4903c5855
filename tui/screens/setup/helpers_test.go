package setup

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
)

// TestMain keeps the parsed-dataset cache of the tests' loads in a
// temporary folder rather than the user's.
func TestMain(m *testing.M) { os.Exit(datatest.RunWithTempCache(m)) }

// offline is a backend that cannot run here, with a fixed reason.
type offline struct{}

func (offline) Name() string                      { return "cuda" }
func (offline) Available() error                  { return errors.New("no NVIDIA driver found (libcuda.so.1)") }
func (offline) Devices() ([]engine.Device, error) { return nil, offline{}.Available() }
func (offline) Prepare(context.Context, *engine.Job) (engine.Kernel, error) {
	return nil, offline{}.Available()
}

// screen is the setup screen as the root model builds it, for the study
// of the command line `--data embedded:btcusdt-1m --head 2000 --hma
// 10:30:10 --hma3 12:36:12 --backend reference`, its dataset loaded (as
// Init does) and the form focused, sized w x h.
type screen struct {
	t    *testing.T
	m    *Model
	host *tuitest.Host
}

func newScreen(t *testing.T, w, h int) *screen {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(reference.New())
	reg.Register(offline{})
	spec := tuitest.SmallSpec()
	ctx := tuitest.Context(reg)
	s := &screen{t: t, host: &tuitest.Host{ID: common.SetupScreen}}
	s.m = New(ctx, common.NewRunState(), s.host, spec, true)
	s.m.SetSize(w, h)
	s.run(s.m.Init())
	if s.m.state.Raw == nil || s.m.Pane() != 1 {
		t.Fatalf("the dataset of the command line did not load (raw %v, pane %d; status %q)", s.m.state.Raw != nil, s.m.Pane(), s.host.St.LastErr)
	}
	return s
}

// run runs cmd and feeds the screen the messages of this workbench it
// answers with (the root hands them on: tagged for this screen, or the
// form's); the estimate, which calibrates the engine, is left out.
func (s *screen) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			s.run(c)
		}
	case common.ScreenMsg:
		if msg.ID != common.SetupScreen {
			s.t.Fatalf("a message for screen %v", msg.ID)
		}
		switch msg.Msg.(type) {
		case estimateTickMsg, estimateMsg:
		default:
			s.run(s.m.Update(msg.Msg))
		}
	case common.FormChangedMsg:
		s.run(s.m.Update(msg))
	}
}

// key sends each string as one key (enter, esc, tab, down, backspace by
// name, anything else as the characters typed, one key each).
func (s *screen) key(ks ...string) {
	for _, k := range ks {
		named := map[string]tea.KeyType{"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab,
			"down": tea.KeyDown, "up": tea.KeyUp, "backspace": tea.KeyBackspace, "ctrl+u": tea.KeyCtrlU}
		if t, ok := named[k]; ok {
			s.run(s.m.Update(tea.KeyMsg{Type: t}))
			continue
		}
		for _, r := range k {
			s.run(s.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
		}
	}
}

// erase empties the focused text field.
func (s *screen) erase() {
	for range len(s.m.Form().Values()[s.m.Form().Focused()]) {
		s.key("backspace")
	}
}

// lines are the screen's lines that contain sub.
func lines(view, sub string) []string {
	var out []string
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
