// Package setup is the setup screen: the dataset pane (embedded datasets,
// a file picker) and the form of the study (the run flags as fields). It
// loads the dataset, binds the form to an engine.Spec, builds the study
// through engine.Spec.Study as `sweepbench run` does, shows the engine's
// errors per row and a time estimate. Loads and estimates run in commands
// whose answers come back tagged for this screen.
package setup

import (
	"errors"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/components/datasets"
	"sweepbench/tui/components/form"
)

// Model is the setup screen.
type Model struct {
	ctx   *common.Context
	state *common.RunState // the run, the root model\'s
	host  common.Host
	keys  KeyMap

	datasets *datasets.Model
	form     *form.Model
	focus    int // 0 the dataset pane, 1 the form
	w, h     int

	// flags is the study the command line described; the form's fields
	// override it (e: the study on screen's Spec).
	flags     engine.Spec
	dataGiven bool
	// suiteGiven: the command line named several datasets (SetData).
	suiteGiven bool
	// dataField is the data field's text as last seen (dataChanged acts
	// on a change of it).
	dataField string
	// paneField is the data field's text as the Dataset pane (or the
	// study) last put it there: it names the dataset loaded for it.
	paneField string

	rawSpec    string // the spec the loaded dataset came from
	loadSpec   string // the spec last asked to load (loaded or not)
	loadErr    error  // why loadSpec did not load; nil when it did, or while it loads
	loadedWith string // loadKey of the form when it was asked
	deriveKey  string
	deriveErr  error
	estimate   string
	lastEstKey string
	formErr    string // the form's error last put on the status line
	// editOf is the results the form was last filled from (e, esc): the
	// form keeps its edits while the same results are on screen.
	editOf *common.Results

	// loadGen counts the loads asked, estGen the estimates: a stale
	// answer (the form changed since) is dropped.
	loadGen, estGen int
	// movedDuringLoad: a key moved the focus between the panes while a
	// dataset loaded; the load's end then leaves the focus where it is
	// (else it gives the form the keys, and a key meant for the screen
	// would be typed into a field).
	movedDuringLoad bool

	// family is the strategy family whose rows the form shows (family.go);
	// familyTyped what each family's rows held when another was chosen.
	family      string
	familyTyped map[string]map[string]string
}

var (
	_ common.Screen = (*Model)(nil)
	_ common.Taker  = (*Model)(nil) // its text fields take the keys
)

// New returns the setup screen, its form prefilled from flags; dataGiven
// says the command line named the dataset (Init loads it).
func New(ctx *common.Context, state *common.RunState, host common.Host, flags engine.Spec, dataGiven bool) *Model {
	m := &Model{ctx: ctx, state: state, host: host, keys: newKeyMap(ctx.Keys), flags: flags, dataGiven: dataGiven}
	m.family = engine.FamilyHull
	if _, ok := lookupFamily(flags.Strategy); ok {
		m.family = flags.Family()
	}
	m.datasets = datasets.New(ctx, state, flags.Data)
	m.form = form.New(ctx, m.formSpecs())
	m.dataField = m.form.Values()[form.Data]
	return m
}

// Form is the form component.
func (m *Model) Form() *form.Model { return m.form }

// Datasets is the dataset pane.
func (m *Model) Datasets() *datasets.Model { return m.datasets }

// Pane is the focused pane: 0 the dataset pane, 1 the form.
func (m *Model) Pane() int { return m.focus }

// Estimate is the form's time estimate line.
func (m *Model) Estimate() string { return m.estimate }

// Init checks the backend the command line named and loads its dataset.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if b := m.flags.Backend; b != "" && b != "auto" {
		if _, _, err := m.ctx.Registry.Lookup(b); err != nil {
			m.host.Do(common.StartErrMsg{Err: errors.New(m.form.Describe(err))})
		}
	}
	if _, ok := lookupFamily(m.flags.Strategy); !ok {
		_, err := m.flags.Parse()
		for _, fe := range engine.FieldErrors(err) {
			if fe.Field == engine.FieldStrategy {
				m.host.Do(common.StartErrMsg{Err: errors.New(m.form.Describe(fe))})
			}
		}
	}
	switch {
	case m.suiteGiven:
		// Several datasets (SetData): the first loads.
		m.focus = 1
		cmds = append(cmds, m.dataChanged())
	case m.dataGiven && m.flags.Data != "":
		m.focus = 1
		m.paneField = m.form.Values()[form.Data] // the field as it shows --data
		cmds = append(cmds, m.load(m.flags.Data))
	}
	cmds = append(cmds, m.refocus())
	m.Validate()
	return tea.Batch(cmds...)
}

// Takes implements common.Taker: a text field of the form takes every
// key but the ones that leave it, the file picker every key.
func (m *Model) Takes(msg tea.KeyMsg) bool {
	return m.focus == 1 && m.form.Takes(msg) || m.datasets.Picking()
}

// Shown implements common.Screen: the form's field has the cursor only
// while the screen is on display.
func (m *Model) Shown(on bool) tea.Cmd {
	return m.form.Focus(on && m.focus == 1)
}

// refocus gives the form the keys when it is the focused pane of the
// screen on display.
func (m *Model) refocus() tea.Cmd {
	return m.Shown(m.host.Screen() == common.SetupScreen)
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case spinner.TickMsg:
		return m.datasets.Update(msg)
	case common.LoadMsg:
		// The Dataset pane's choice is the study's one dataset.
		m.setDataField(msg.Spec)
		return m.load(msg.Spec)
	case common.FormChangedMsg:
		m.familyChanged()
		if cmd := m.dataChanged(); cmd != nil {
			return tea.Batch(cmd, m.Validate())
		}
		return tea.Batch(m.Validate(), m.reloadIfNeeded())
	case loadedMsg:
		if msg.gen != m.loadGen {
			return nil
		}
		m.datasets.Loaded(msg.err)
		m.loadErr = msg.err
		if msg.err != nil {
			m.host.Do(common.ErrMsg{Err: msg.err})
			return m.Validate() // the data field says it too
		}
		m.state.Raw, m.deriveKey, m.rawSpec = msg.ds, "", msg.spec
		if m.host.Status().LastErr != m.host.Status().StartErr {
			m.host.Do(common.ErrMsg{}) // what went wrong before is resolved; a bad flag stays
		}
		if !m.movedDuringLoad {
			m.focus = 1
		}
		return tea.Batch(m.refocus(), m.Validate())
	case estimateTickMsg:
		if msg.gen != m.estGen {
			return nil
		}
		if s, _, _ := m.Build(); s != nil {
			return common.Tag(common.SetupScreen, estimateCmd(msg.gen, s))
		}
	case estimateMsg:
		if msg.gen != m.estGen {
			return nil
		}
		m.estimated(msg)
		m.Validate()
	default:
		// The file picker reads directories through its own messages.
		if m.datasets.Picking() {
			return m.datasets.Update(msg)
		}
	}
	return nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if m.datasets.Picking() {
		return m.datasets.Update(msg)
	}
	typing := m.focus == 1 && m.form.Takes(msg)
	switch {
	case key.Matches(msg, k.NextPane), key.Matches(msg, k.PrevPane):
		m.focus = 1 - m.focus
		m.movedDuringLoad = true
		return m.refocus()
	case key.Matches(msg, k.Back) && m.host.Running():
		// A study computes: back to it.
		return m.host.Do(common.ShowMsg{ID: common.RunScreen})
	case key.Matches(msg, k.Back):
		if m.state.Results != nil {
			return m.host.Do(common.ShowMsg{ID: common.ResultsScreen})
		}
		if m.focus == 1 {
			m.focus = 0
			m.movedDuringLoad = true
			return m.refocus()
		}
		return nil
	case !typing && key.Matches(msg, k.Rerun):
		return m.host.Do(common.RunMsg{})
	}
	if m.focus == 0 {
		return m.datasets.Update(msg)
	}
	return m.form.Update(msg)
}

// Edit gives the form the keys; fromStudy first makes it describe the
// study on screen (e from the results).
func (m *Model) Edit(fromStudy bool) tea.Cmd {
	var cmd tea.Cmd
	if fromStudy {
		cmd = m.fromStudy()
	}
	m.focus = 1
	return cmd
}

// SetSize implements common.Screen.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.layout()
}

// layout sizes the panes: side by side when wide, else stacked.
func (m *Model) layout() {
	W, H := m.w, m.h
	if W >= 110 {
		dw := W * 45 / 100
		m.datasets.SetSize(dw-2, H-2)
		m.form.SetSize(W-dw-2, H-2)
		return
	}
	dh := m.datasetHeight(H)
	m.datasets.SetSize(W-2, dh-2)
	m.form.SetSize(W-2, H-dh-2)
}

// datasetHeight is the dataset pane's height (border included) when the
// setup panes are stacked: its three items, a blank line and the three
// lines of the summary (9), or without the blank line (8) when the form
// would otherwise get fewer than formRows. The form, 14 rows (border
// included) at 80x24, then shows its seven rows of fields, the grid, the
// estimate, the run button and two notes (cuda and metal unavailable, on
// Linux without a GPU) without its own blank line.
func (m *Model) datasetHeight(bodyH int) int {
	if m.datasets.Picking() {
		return bodyH - 3
	}
	if bodyH-9 < formRows {
		return min(8, bodyH/2)
	}
	return min(9, bodyH/2)
}

// formRows is the form's height (border included) with every line it
// shows on a machine without a GPU: 7 rows of fields, a blank line, the
// grid, the estimate, the run button and two notes, and its border.
const formRows = 7 + 1 + 3 + 2 + 2

// View implements common.Screen.
func (m *Model) View() string {
	m.layout() // the dataset pane grows while the file picker is open
	t := m.ctx.Theme
	W, H := m.w, m.h
	dsFocus, formFocus := m.focus == 0, m.focus == 1
	if W >= 110 {
		dw := W * 45 / 100
		left := t.Pane(m.datasets.Title(), m.datasets.View(), dw, H, dsFocus)
		right := t.Pane("Parameters", m.form.View(), W-dw, H, formFocus)
		return common.JoinH(left, right)
	}
	dh := m.datasetHeight(H)
	return t.Pane(m.datasets.Title(), m.datasets.View(), W, dh, dsFocus) + "\n" +
		t.Pane("Parameters", m.form.View(), W, H-dh, formFocus)
}
