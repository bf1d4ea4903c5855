package setup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/robust"
	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// load reads the dataset spec names with the form's loading fields (time
// zone, LEAN asset) over the flags'.
func (m *Model) load(spec string) tea.Cmd {
	m.loadGen++
	m.movedDuringLoad = false
	f := m.flags
	if m.form != nil {
		cur, _ := m.spec()
		f.TZ, f.LEANAsset = cur.TZ, cur.LEANAsset
	}
	m.loadSpec, m.loadedWith, m.loadErr = spec, loadKey(f), nil
	if allowed := m.ctx.DataAllowed; allowed != nil {
		if err := allowed(spec); err != nil {
			gen := m.loadGen
			return tea.Batch(m.datasets.Loading(spec), common.Tag(common.SetupScreen, func() tea.Msg { return loadedMsg{gen, spec, nil, err} }))
		}
	}
	return tea.Batch(m.datasets.Loading(spec), common.Tag(common.SetupScreen, loadCmd(m.loadGen, spec, f)))
}

// loadKey is what of a Spec decides how its file is read (besides the
// file): a change reloads it.
func loadKey(s engine.Spec) string { return s.TZ + "\x00" + s.LEANAsset }

// reloadIfNeeded loads the last dataset asked for again when the form's
// time zone or LEAN asset changed since, and both are valid.
func (m *Model) reloadIfNeeded() tea.Cmd {
	if m.loadSpec == "" {
		return nil
	}
	cur, _ := m.spec()
	if loadKey(cur) == m.loadedWith {
		return nil
	}
	if _, err := cur.LoadOptions(); err != nil {
		return nil // the form marks the field
	}
	return m.load(m.loadSpec)
}

// spec is the engine.Spec the form describes: the form's fields bound to
// it (text parsed as a flag parser would, a bad number is a FieldError on
// its row), the rest from the command line. bad holds those parse errors.
func (m *Model) spec() (spec engine.Spec, bad map[string]error) {
	v := m.form.Values()
	bad = map[string]error{}
	spec = m.flags
	spec.Data = m.rawSpec
	// A study the form runs belongs to no suite (e on a suite's session
	// edits one dataset's study); a suite's run labels each dataset's.
	spec.Suite = ""
	spec.HMA, spec.HMA3 = v[form.HMA], v[form.HMA3]
	if m.family != "" && m.family != engine.FamilyHull {
		spec.HMA, spec.HMA3 = m.flags.HMA, m.flags.HMA3 // unused by a family's grid
	}
	m.familySpec(&spec, v)
	spec.Mode, spec.Source, spec.Timeframe = v[form.Mode], v[form.Source], v[form.Timeframe]
	spec.Backend, spec.Precision, spec.WMA = v[form.Backend], v[form.Precision], v[form.WMA]
	number := func(key string, dst *float64) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v[key]), 64)
		if err != nil {
			bad[key] = &engine.FieldError{Field: key, Value: v[key], Err: errors.New("not a number")}
			return
		}
		*dst = f
	}
	number(form.Fee, &spec.Fee)
	number(form.Borderline, &spec.Borderline)
	spec.BarsPerYear = 0
	if strings.TrimSpace(v[form.BarsPerYear]) != "" {
		number(form.BarsPerYear, &spec.BarsPerYear)
	}
	spec.TZ, spec.LEANAsset = strings.TrimSpace(v[form.TZ]), v[form.LEANAsset]
	if spec.Borderline == 0 && bad[form.Borderline] == nil {
		bad[form.Borderline] = &engine.FieldError{Field: form.Borderline, Value: v[form.Borderline], Err: errors.New("want a positive margin, e.g. 1e-5")}
	}
	count := func(key string, dst *int, want string) {
		*dst = 0
		if c := strings.TrimSpace(v[key]); c != "" {
			n, err := strconv.Atoi(c) // decimal digits, as the flags read them
			if err != nil {
				bad[key] = &engine.FieldError{Field: key, Value: c, Err: errors.New(want)}
			}
			*dst = n
		}
	}
	count(form.Head, &spec.Head, "want a positive bar count or 0 for all")
	// The window, the objective and its constraints, robustness: checked
	// by spec.Parse, spec.Derive and robust.OptionsFor, as run's flags.
	spec.From, spec.To, spec.WF = strings.TrimSpace(v[form.From]), strings.TrimSpace(v[form.To]), strings.TrimSpace(v[form.WF])
	spec.Objective = v[form.Objective]
	count(form.Blocks, &spec.Blocks, fmt.Sprintf("want a whole number: 0 (none) or 2 to %d blocks of bar returns", engine.MaxBlocks))
	count(form.MinTrades, &spec.MinTrades, "want a whole number of trades, 0 for none")
	spec.MaxDrawdown = 0
	if strings.TrimSpace(v[form.MaxDrawdown]) != "" {
		number(form.MaxDrawdown, &spec.MaxDrawdown)
	}
	return spec, bad
}

// Build makes the engine study the form describes through
// engine.Spec.Study, as `sweepbench run` does from its flags, on the loaded
// dataset derived as the form says. The engine's errors are sorted by
// their field (typed *engine.FieldError): per form row, else general.
func (m *Model) Build() (s *engine.Study, perField map[string]error, general error) {
	spec, perField := m.spec()
	var generals []error
	place := func(err error) {
		fes := engine.FieldErrors(err)
		if len(fes) == 0 {
			generals = append(generals, err)
			return
		}
		for _, fe := range fes {
			if pe, ok := m.placeParam(fe); ok {
				if perField[pe.Field] == nil {
					perField[pe.Field] = pe
				}
				continue
			}
			if m.form.Has(fe.Field) {
				if perField[fe.Field] == nil {
					perField[fe.Field] = fe
				}
				continue
			}
			generals = append(generals, fe)
		}
	}
	if _, err := spec.Parse(); err != nil {
		place(err)
	}
	if ds, err := m.datasetsOf(m.form.Values()[form.Data]); err != nil {
		place(err)
	} else if err := m.firstLoaded(ds); err != nil {
		place(err)
	}
	if _, err := robust.OptionsFor(spec); err != nil {
		place(err)
	}
	if perField[form.Backend] == nil {
		if _, _, err := m.ctx.Registry.Lookup(spec.Backend); err != nil {
			place(err)
		}
	}
	if perField[form.Timeframe] == nil && perField[form.Head] == nil {
		m.derive(spec)
	}
	if m.deriveErr != nil {
		place(m.deriveErr)
	}
	if len(generals) == 0 && m.state.Raw == nil {
		generals = append(generals, errors.New("no dataset yet: choose one in the Dataset pane (enter loads it)"))
	}
	if len(perField) > 0 || len(generals) > 0 {
		return nil, perField, errors.Join(generals...)
	}
	s, err := spec.Study(m.state.Dataset, m.ctx.Registry)
	if err != nil {
		place(err)
		return nil, perField, errors.Join(generals...)
	}
	return s, perField, nil
}

// firstLoaded is nil when the data field's first dataset (ds[0]; none:
// the Dataset pane's) is the one loaded, else the data field's error: the
// load's own when it failed, or that it is still loading. Without it a
// field naming a file that does not load ran the dataset loaded before
// (fresh-user trial).
func (m *Model) firstLoaded(ds []string) error {
	if len(ds) == 0 {
		return nil
	}
	// The field may show the pane's dataset cleaned (a file name with
	// control characters): the text the pane put there stands for it.
	field := m.form.Values()[form.Data]
	asked := ds[0] == m.loadSpec || field == m.paneField
	if asked && m.state.Raw != nil && m.rawSpec == m.loadSpec && m.loadErr == nil {
		return nil
	}
	switch {
	case asked && m.loadErr != nil:
		return &engine.FieldError{Field: form.Data, Value: ds[0], Err: m.loadErr}
	case asked:
		return &engine.FieldError{Field: form.Data, Value: ds[0], Err: errors.New("still loading")}
	}
	return &engine.FieldError{Field: form.Data, Value: ds[0], Err: errors.New("not loaded: enter in the field loads it")}
}

// derive sets ctx.Dataset to the loaded bars derived as spec says
// (engine.Spec.Derive: resampled, trimmed to the first Head bars), keeping
// the last result while the inputs are unchanged.
func (m *Model) derive(spec engine.Spec) {
	raw := m.state.Raw
	if raw == nil {
		m.state.Dataset, m.deriveErr = nil, nil
		return
	}
	key := fmt.Sprintf("%p|%s|%d|%s|%s|%s", raw, spec.Timeframe, spec.Head, spec.From, spec.To, spec.TZ)
	if key == m.deriveKey {
		return
	}
	m.deriveKey = key
	m.state.Dataset, m.deriveErr = spec.Derive(raw)
}
