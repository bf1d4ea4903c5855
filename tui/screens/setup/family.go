package setup

import (
	"strings"

	"sweepbench/engine"
	"sweepbench/strategy"
	"sweepbench/tui/components/form"
)

// The strategy family (SPEC Part 2): the form's strategy row picks it,
// and the rows of its parameters stand where hull's HMA and HMA3 ranges
// are (hull's rows are those two, as before families existed). Each
// parameter is a text row of its range ("10:60:5"; a crossover leg
// KIND:RANGE, "ema:5:50:5", or price); cross has a row more, fast < slow
// (--fast-below-slow). What was typed in a family's rows is kept while
// another family is shown, so that switching back finds it.

// familyOptions are the strategy row's choices: every family, in SPEC's
// order.
func familyOptions() []form.Option {
	out := make([]form.Option, len(strategy.Families))
	for i, f := range strategy.Families {
		out[i] = form.Option{Value: f.Name, Label: f.Name}
	}
	return out
}

// lookupFamily is the family of that name ("" is hull); ok false for one
// the registry does not have.
func lookupFamily(name string) (strategy.Family, bool) {
	if name == "" {
		name = engine.FamilyHull
	}
	f, err := strategy.Lookup(name)
	return f, err == nil
}

// familyKeys are the keys of family's parameter rows.
func familyKeys(family string) []string {
	if family == "" || family == engine.FamilyHull {
		return []string{form.HMA, form.HMA3}
	}
	f, ok := lookupFamily(family)
	if !ok {
		return nil
	}
	var keys []string
	for _, p := range f.Params {
		keys = append(keys, form.ParamKey(p.Name))
	}
	if family == "cross" {
		keys = append(keys, form.FastBelowSlow)
	}
	return keys
}

// paramLabel is a parameter's row label: "length", "fast leg".
func paramLabel(p strategy.Param) string {
	if p.Kind == strategy.LegParam {
		return p.Name + " leg"
	}
	return p.Name
}

// familySpecs are the rows of family's parameters with values v (by row
// key; a row v has no value for takes the parameter's default).
func familySpecs(family string, v map[string]string) []form.Spec {
	if family == "" || family == engine.FamilyHull {
		return []form.Spec{
			{Key: form.HMA, Label: "HMA range", Value: v[form.HMA]},
			{Key: form.HMA3, Label: "HMA3 range", Value: v[form.HMA3]},
		}
	}
	f, ok := lookupFamily(family)
	if !ok {
		return nil
	}
	var out []form.Spec
	for _, p := range f.Params {
		k := form.ParamKey(p.Name)
		val, ok := v[k]
		if !ok {
			val = p.Default
		}
		out = append(out, form.Spec{Key: k, Label: paramLabel(p), Value: val, Placeholder: p.Default})
	}
	if family == "cross" {
		fbs := v[form.FastBelowSlow]
		if fbs == "" {
			fbs = "off"
		}
		out = append(out, form.Spec{Key: form.FastBelowSlow, Label: "fast < slow", Value: fbs,
			Options: []form.Option{{Value: "off", Label: "off (every pair)"}, {Value: "on", Label: "on"}}})
	}
	return out
}

// familyValues are spec's parameters as the rows of its family hold them
// (ParamKey -> range text, the fast < slow row), a parameter spec does
// not give at its default; nil for hull (formValues has HMA and HMA3).
func familyValues(spec engine.Spec) map[string]string {
	if !spec.IsStrategy() {
		return nil
	}
	f, ok := lookupFamily(spec.Strategy)
	if !ok {
		return nil
	}
	v := map[string]string{}
	for _, p := range f.Params {
		val, ok := spec.Params[p.Name]
		if !ok {
			val = p.Default
		}
		v[form.ParamKey(p.Name)] = val
	}
	v[form.FastBelowSlow] = "off"
	if spec.FastBelowSlow {
		v[form.FastBelowSlow] = "on"
	}
	return v
}

// setFamily shows family's rows in place of the ones shown (keeping what
// those hold for a switch back), with the values vals when given, else
// the ones typed before, else the flags', else the defaults.
func (m *Model) setFamily(family string, vals map[string]string) {
	if family == "" {
		family = engine.FamilyHull
	}
	cur := m.form.Values()
	shown := m.family
	if m.familyTyped == nil {
		m.familyTyped = map[string]map[string]string{}
	}
	keep := map[string]string{}
	for _, k := range familyKeys(shown) {
		keep[k] = cur[k]
	}
	m.familyTyped[shown] = keep
	if family == shown && vals == nil {
		return
	}
	v := vals
	if v == nil {
		v = m.familyTyped[family]
	}
	if v == nil && m.flags.Family() == family {
		v = familyValues(m.flags)
	}
	if v == nil {
		v = map[string]string{}
	}
	if family == engine.FamilyHull {
		d := engine.DefaultSpec()
		if _, ok := v[form.HMA]; !ok {
			v[form.HMA] = orDefault(m.flags.HMA, d.HMA)
		}
		if _, ok := v[form.HMA3]; !ok {
			v[form.HMA3] = orDefault(m.flags.HMA3, d.HMA3)
		}
	}
	m.form.Replace(familyKeys(shown), form.Fee, familySpecs(family, v))
	m.form.SetValues(map[string]string{form.Strategy: family})
	m.family = family
}

// familyChanged follows the strategy row: a family chosen there brings
// its rows. It reports whether the rows changed.
func (m *Model) familyChanged() bool {
	f := m.form.Values()[form.Strategy]
	if f == "" || f == m.family {
		return false
	}
	m.setFamily(f, nil)
	return true
}

// familySpec binds the family's rows to spec: Strategy, Params (the rows'
// texts, an empty row left out: its default), FastBelowSlow; hull's HMA
// and HMA3 are bound by spec().
func (m *Model) familySpec(spec *engine.Spec, v map[string]string) {
	spec.Strategy, spec.Params, spec.FastBelowSlow = "", nil, false
	if m.family == "" || m.family == engine.FamilyHull {
		if m.flags.Strategy == engine.FamilyHull {
			spec.Strategy = engine.FamilyHull // as the command line gave it
		}
		return
	}
	spec.Strategy = m.family
	for _, k := range familyKeys(m.family) {
		name, ok := form.ParamName(k)
		if !ok {
			continue
		}
		if t := strings.TrimSpace(v[k]); t != "" {
			if spec.Params == nil {
				spec.Params = map[string]string{}
			}
			spec.Params[name] = t
		}
	}
	spec.FastBelowSlow = m.family == "cross" && v[form.FastBelowSlow] == "on"
}

// placeParam is the form row of a parameter's *engine.FieldError (Field
// engine.FieldParams, Value "name=TEXT"), as a FieldError of that row
// (its Value the text) so that the form words it by the row's label; ok
// false when the form shows no row of it.
func (m *Model) placeParam(fe *engine.FieldError) (*engine.FieldError, bool) {
	if fe.Field != engine.FieldParams {
		return nil, false
	}
	name, val, _ := strings.Cut(fe.Value, "=")
	k := form.ParamKey(name)
	if !m.form.Has(k) {
		return nil, false
	}
	return &engine.FieldError{Field: k, Value: val, Err: fe.Err}, true
}
