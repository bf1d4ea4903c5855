package results

import (
	"os"
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine/data/datatest"
	"sweepbench/tui/common"
	"sweepbench/tui/internal/tuitest"
)

// TestMain keeps the parsed-dataset cache of the tests' loads in a
// temporary folder rather than the user's.
func TestMain(m *testing.M) { os.Exit(datatest.RunWithTempCache(m)) }

// screen is the results screen as the root model builds it (no sessions
// store), showing the report of a small real study: the first 2,000 bars
// of embedded BTC/USDT 1m, hma 10:30:10 x hma3 12:36:12 (9 combos) in
// both precisions on the reference backend; the selected combo's detail
// is computed.
type screen struct {
	t     *testing.T
	m     *Model
	host  *tuitest.Host
	state *common.RunState
}

func newScreen(t *testing.T, w, h int) *screen {
	t.Helper()
	reg, st, rep := tuitest.SmallStudy(t)
	ctx := tuitest.Context(reg)
	s := &screen{t: t, host: &tuitest.Host{ID: common.ResultsScreen}, state: common.NewRunState()}
	s.state.Study = st
	s.m = New(ctx, s.state, s.host, nil, nil)
	s.m.SetSize(w, h)
	s.run(s.m.Show(rep, st.Precisions, nil, 0))
	return s
}

// run runs cmd and feeds the screen the messages of this workbench it
// answers with, as the root hands them on (tagged for this screen, a
// selection, a metric); the spinner's and the cursor's ticks are dropped.
func (s *screen) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			s.run(c)
		}
	case common.ScreenMsg:
		if msg.ID != common.ResultsScreen {
			s.t.Fatalf("a message for screen %v", msg.ID)
		}
		s.run(s.m.Update(msg.Msg))
	case common.SelectMsg, common.MetricMsg:
		s.run(s.m.Update(msg))
	case common.ErrMsg, common.InfoMsg, common.WarnMsg:
		s.host.Do(msg)
	default:
		if strings.HasPrefix(reflect.TypeOf(msg).PkgPath(), "sweepbench/") {
			s.run(s.m.Update(msg))
		}
	}
}

// key sends each key: enter, esc, tab, down, up by name, anything else
// as the characters typed, one key each.
func (s *screen) key(ks ...string) {
	named := map[string]tea.KeyType{"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"down": tea.KeyDown, "up": tea.KeyUp}
	for _, k := range ks {
		if t, ok := named[k]; ok {
			s.run(s.m.Update(tea.KeyMsg{Type: t}))
			continue
		}
		for _, r := range k {
			s.run(s.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
		}
	}
}
