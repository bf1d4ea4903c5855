package setup

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/preflight"
	"sweepbench/engine/text"
	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// formSpecs lists the form's fields, prefilled from the flags.
func (m *Model) formSpecs() []form.Spec {
	f := m.flags
	opts := func(vals ...string) []form.Option {
		out := make([]form.Option, len(vals))
		for i, v := range vals {
			out[i] = form.Option{Value: v, Label: v}
		}
		return out
	}
	tfs := []form.Option{{Value: "", Label: "as loaded"}}
	for _, tf := range data.Timeframes() {
		tfs = append(tfs, form.Option{Value: tf, Label: tf})
	}
	bes := []form.Option{{Value: "auto", Label: "auto"}}
	for _, b := range m.ctx.Registry.All() {
		o := form.Option{Value: b.Name(), Label: b.Name()}
		if err := b.Available(); err != nil {
			o.Disabled = err.Error()
		}
		bes = append(bes, o)
	}
	leanOpts := []form.Option{{Value: "", Label: "from the path"}}
	for _, a := range data.LEANAssets() {
		leanOpts = append(leanOpts, form.Option{Value: a, Label: a})
	}
	// The objective: any metric of SPEC, sharpe first (the default).
	objs := opts("sharpe")
	for _, n := range engine.MetricNames {
		if n != "sharpe" {
			objs = append(objs, form.Option{Value: n, Label: n})
		}
	}
	v := formValues(f)
	if !m.dataGiven {
		v[form.Data] = "" // the Dataset pane's, once chosen
	}
	for k, val := range familyValues(f) {
		v[k] = val
	}
	specs := familySpecs(m.family, v)
	specs = append(specs, []form.Spec{
		{Key: form.Fee, Label: "fee/side", Value: v[form.Fee]},
		{Key: form.Mode, Label: "mode", Value: v[form.Mode], Options: opts("long-short", "long-only")},
		{Key: form.Source, Label: "source", Value: v[form.Source], Options: opts("close", "hl2", "hlc3", "ohlc4")},
		{Key: form.Timeframe, Label: "timeframe", Value: v[form.Timeframe], Options: tfs},
		{Key: form.Head, Label: "head bars", Value: v[form.Head]},
		{Key: form.Backend, Label: "backend", Value: v[form.Backend], Options: bes},
		{Key: form.Precision, Label: "precision", Value: v[form.Precision], Options: opts("both", "fp64", "fp32")},
		{Key: form.WMA, Label: "WMA (fp32)", Value: v[form.WMA], Options: opts("direct", "prefix")},
		{Key: form.Borderline, Label: "borderline", Value: v[form.Borderline]},
		{Key: form.BarsPerYear, Label: "bars/year", Value: v[form.BarsPerYear]},
		{Key: form.TZ, Label: "time zone", Value: v[form.TZ], Free: true},
		{Key: form.LEANAsset, Label: "LEAN asset", Value: v[form.LEANAsset], Options: leanOpts},
		// The window of bars, robustness, the objective and its
		// constraints: rows of their own under the sweep's.
		{Key: form.From, Label: "from", Value: v[form.From], Free: true, Placeholder: "first bar", Group: 1},
		{Key: form.To, Label: "to", Value: v[form.To], Free: true, Placeholder: "last bar", Group: 1},
		{Key: form.Blocks, Label: "blocks", Value: v[form.Blocks], Group: 1},
		{Key: form.WF, Label: "walk-forward", Value: v[form.WF], Free: true, Placeholder: "off", Group: 1},
		{Key: form.Objective, Label: "objective", Value: v[form.Objective], Options: objs, Group: 1},
		{Key: form.MinTrades, Label: "min trades", Value: v[form.MinTrades], Group: 1},
		{Key: form.MaxDrawdown, Label: "max drawdown", Value: v[form.MaxDrawdown], Group: 1},
		// One dataset or several (a suite): suite.go.
		{Key: form.Data, Label: "data", Value: v[form.Data], Free: true, Placeholder: "the Dataset pane's", Limit: 4096, Group: 1},
		// The strategy family: its parameters are the first rows (family.go).
		{Key: form.Strategy, Label: "strategy", Value: m.family, Options: familyOptions(), Group: 2},
	}...)
	return specs
}

// formValues is spec as the form's field values (the inverse of spec()),
// empty fields at engine.DefaultSpec's values.
func formValues(s engine.Spec) map[string]string {
	d := engine.DefaultSpec()
	tol := s.Borderline
	if tol == 0 {
		tol = d.Borderline
	}
	return map[string]string{
		form.HMA: orDefault(s.HMA, d.HMA), form.HMA3: orDefault(s.HMA3, d.HMA3), form.Fee: text.FormatFloat(s.Fee),
		form.Mode: orDefault(s.Mode, d.Mode), form.Source: orDefault(s.Source, d.Source),
		form.Timeframe: s.Timeframe, form.Head: fmt.Sprint(s.Head),
		form.Backend: orDefault(s.Backend, d.Backend), form.Precision: orDefault(s.Precision, d.Precision),
		form.WMA: orDefault(s.WMA, d.WMA), form.Borderline: text.FormatFloat(tol),
		form.BarsPerYear: text.FormatFloat(s.BarsPerYear), form.TZ: s.TZ, form.LEANAsset: s.LEANAsset,
		form.From: s.From, form.To: s.To, form.Blocks: fmt.Sprint(s.Blocks), form.WF: s.WF,
		form.Objective: orDefault(strings.ToLower(strings.TrimSpace(s.Objective)), "sharpe"),
		form.MinTrades: fmt.Sprint(s.MinTrades), form.MaxDrawdown: text.FormatFloat(s.MaxDrawdown),
		form.Data: s.Data, form.Strategy: s.Family(),
	}
}

// fromStudy makes the form describe the study on screen (an opened
// or resumed session's, or the last run's), so that editing it and enter
// run that study changed, not the form's earlier one: its Spec becomes the
// form's values, and its dataset is loaded when the form has another.
func (m *Model) fromStudy() tea.Cmd {
	s := m.state.Study
	if s == nil || s.Spec.Data == "" {
		return nil
	}
	if m.editOf == m.state.Results && m.state.Results != nil {
		// The form was filled from these results already and may hold
		// edits since (esc went back to look at them): keep them.
		return m.Validate()
	}
	m.editOf = m.state.Results
	m.flags = s.Spec
	fv := formValues(s.Spec)
	for k, val := range familyValues(s.Spec) {
		fv[k] = val
	}
	m.setFamily(s.Spec.Family(), fv)
	m.form.SetValues(fv)
	m.dataField = m.form.Values()[form.Data]
	if s.Spec.Data != m.rawSpec {
		return m.load(s.Spec.Data)
	}
	return m.Validate()
}

// Validate rebuilds the study from the form and shows the engine's verdict
// on it; a valid study gets a (debounced) time estimate.
func (m *Model) Validate() tea.Cmd {
	s, perField, general := m.Build()
	var info, notes []string
	var cmd tea.Cmd
	if s != nil {
		note := s.Note
		m.state.Backend = s.Backend.Name()
		m.state.Device = m.ctx.DeviceOf(s.Backend)
		m.state.Note = note
		info = append(info, fmt.Sprintf("grid %s = %s x %s on %s bars",
			common.GridShape(s.Grid), common.Plural(s.Grid.Len(), "combo"), common.Plural(len(s.Precisions), "precision"),
			common.Thousands(s.Dataset.Bars.Len())))
		n := len(m.Suite())
		if n > 1 {
			info = append(info, fmt.Sprintf("%d datasets, a suite: each runs after the other, saved as a session of its own; the grid, the checks and the estimate above are the first's", n))
		}
		key := fmt.Sprintf("%p|%v|%v|%v|%v|%v|%d", s.Dataset, s.Grid, s.Params, s.Precisions, s.WMA, s.Backend.Name(), n)
		if key != m.lastEstKey {
			m.lastEstKey = key
			m.estGen++
			m.estimate = "estimate: calibrating" + m.ctx.Theme.Ellipsis
			if m.ctx.Deterministic {
				m.estimate = "estimate: - (timings masked)"
			}
			gen := m.estGen
			cmd = common.Tag(common.SetupScreen, tea.Tick(250*time.Millisecond, func(time.Time) tea.Msg { return estimateTickMsg{gen} }))
		}
		info = append(info, m.estimate)
		// What auto picked, a fee that looks like a percentage, a lane on
		// the fallback; why other backends cannot run is listed below.
		notes = append(notes, common.NoteLines(note, m.ctx.Deterministic)...)
	} else {
		m.lastEstKey = ""
	}
	for _, b := range m.ctx.Registry.All() {
		if err := b.Available(); err != nil {
			notes = append(notes, fmt.Sprintf("%s unavailable: %v", b.Name(), err))
		}
	}
	m.form.SetErrors(perField, general, info, notes)
	// An error the form put on the status line goes once it is fixed (a
	// bad --backend flag stays until a run: the form shows auto instead).
	if m.formErr != "" && m.host.Status().LastErr == m.formErr {
		still := general != nil && m.form.Describe(general) == m.formErr
		for _, e := range perField {
			still = still || m.form.Describe(e) == m.formErr
		}
		if !still {
			m.host.Do(common.ErrMsg{})
		}
	}
	return cmd
}

// Submit is the study the form describes, to run; when there is none, the
// form marks its rows and the status line says the first error.
func (m *Model) Submit() *engine.Study {
	s, perField, general := m.Build()
	if s != nil {
		return s
	}
	m.form.SetErrors(perField, general, nil, nil)
	err := general
	first := append([]string{form.Data, form.Strategy}, familyKeys(m.family)...)
	for _, f := range append(first, []string{form.Fee, form.Timeframe, form.Head, form.Backend, form.Borderline,
		form.BarsPerYear, form.TZ, form.From, form.To, form.Blocks, form.WF, form.Objective, form.MinTrades, form.MaxDrawdown}...) {
		if perField[f] != nil {
			err = perField[f]
			break
		}
	}
	if err != nil {
		m.host.Do(common.ErrMsg{Err: errors.New(m.form.Describe(err))})
		m.formErr = m.host.Status().LastErr // cleared once the form no longer has it
	}
	return nil
}

// estimated takes the engine's estimate of the form's study.
func (m *Model) estimated(msg estimateMsg) {
	switch {
	case errors.Is(msg.err, preflight.ErrNotCalibrated):
		// A strategy family's study: no calibrated time to give.
		m.estimate = "estimate: - (only hull studies are calibrated, not a " + m.family + " grid)"
	case msg.err != nil:
		// The engine's errors may already say "estimate:"; say it once.
		m.estimate = "estimate: " + strings.TrimPrefix(msg.err.Error(), "estimate: ")
	case m.ctx.Deterministic:
		m.estimate = "estimate: - (timings masked)"
	default:
		// A suite: the first dataset's time stands for each (as run's
		// note says), the total is N times it.
		total, each := common.FormatDuration(msg.est.Total), ""
		if n := len(m.Suite()); n > 1 {
			each = fmt.Sprintf(" for the %d datasets (~%s each, the first's)", n, total)
			total = common.FormatDuration(msg.est.Total * time.Duration(n))
		}
		m.estimate = fmt.Sprintf("estimate ~%s%s on the CPU reference, %d cores (calibrated in %s)",
			total, each, msg.est.Workers, common.FormatDuration(msg.est.Calibrate))
		if m.state.Backend != "reference" {
			m.estimate = fmt.Sprintf("estimate at most ~%s%s (the CPU reference's time; %s should be faster)",
				total, each, m.state.Backend)
		}
	}
}
