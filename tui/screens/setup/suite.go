package setup

import (
	"errors"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/tui/components/form"
)

// The form's data field: empty, the Dataset pane's dataset; else the
// datasets of the study as run's --data takes them (suite.ExpandDatasets:
// a file, a folder or a glob is one dataset, @LIST a list file), several
// separated by commas or spaces, each:GLOB every match of GLOB a dataset
// (run's --data-each). Several make a suite: each dataset runs after the
// other and is saved as a session of its own (sessions.RunSuite).

// eachPrefix marks the form's --data-each.
const eachPrefix = "each:"

// splitData cuts the data field into run's --data values and --data-each
// pattern: a value that names a file or folder as it stands (spaces and
// all) is one value; else commas and spaces separate values.
func splitData(field string) (values []string, each string, err error) {
	field = strings.TrimSpace(field)
	if field == "" {
		return nil, "", nil
	}
	if _, err := os.Stat(field); err == nil {
		return []string{field}, "", nil
	}
	for _, v := range strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if p, ok := strings.CutPrefix(v, eachPrefix); ok {
			if each != "" {
				return nil, "", &engine.FieldError{Field: form.Data, Value: v, Err: fmt.Errorf("one %sGLOB only (the first is %s%s): list the rest in an @LIST file", eachPrefix, eachPrefix, each)}
			}
			each = p
			continue
		}
		values = append(values, v)
	}
	return values, each, nil
}

// datasetsOf expands the data field into the study's datasets (nil when
// empty: the Dataset pane's), with ExpandDatasets' errors (and a dataset
// the workbench may not read) as the field's.
func (m *Model) datasetsOf(field string) ([]string, error) {
	values, each, err := splitData(field)
	if err != nil || (len(values) == 0 && each == "") {
		return nil, err
	}
	if len(values) == 1 && each == "" && !strings.HasPrefix(values[0], "@") {
		return values, nil // one dataset: loading it says what is wrong with it
	}
	// Nothing is read that the workbench may not read (sweepbench serve's
	// roots): each value, a list file and the each pattern are asked
	// first, then every dataset they give.
	allowed := m.ctx.DataAllowed
	if allowed != nil {
		for _, v := range append(values, each) {
			if v == "" {
				continue
			}
			if err := allowed(strings.TrimPrefix(v, "@")); err != nil {
				return nil, &engine.FieldError{Field: form.Data, Value: v, Err: err}
			}
		}
	}
	ds, err := suite.ExpandDatasets(values, each)
	var de *suite.DatasetsError
	if errors.As(err, &de) {
		v := de.Value
		if de.Each {
			v = eachPrefix + v
		}
		return nil, &engine.FieldError{Field: form.Data, Value: v, Err: de.Err}
	}
	if err != nil {
		return nil, &engine.FieldError{Field: form.Data, Value: field, Err: err}
	}
	if allowed != nil {
		for _, d := range ds {
			if err := allowed(d); err != nil {
				return nil, &engine.FieldError{Field: form.Data, Value: d, Err: err}
			}
		}
	}
	return ds, nil
}

// SetData puts values (run's --data values: several, or @LIST) in the
// data field, separated by commas; Init loads the first dataset.
func (m *Model) SetData(values []string) {
	m.form.SetValues(map[string]string{form.Data: strings.Join(values, ", ")})
	m.dataGiven, m.suiteGiven = true, true
}

// setDataField puts v in the data field as the Dataset pane's (or the
// study's) dataset: not a change for dataChanged.
func (m *Model) setDataField(v string) {
	m.form.SetValues(map[string]string{form.Data: v})
	m.dataField = m.form.Values()[form.Data]
	m.paneField = m.dataField
}

// Suite is the datasets of the study the form describes when it has
// several (a suite), else nil.
func (m *Model) Suite() []string {
	ds, err := m.datasetsOf(m.form.Values()[form.Data])
	if err != nil || len(ds) < 2 {
		return nil
	}
	return ds
}

// dataChanged loads the first dataset of the data field into the Dataset
// pane when it is another than the one loaded (or asked for): the form's
// checks, the summary and the estimate are the first dataset's.
//
// Only a change of the field's text counts: the field may hold a dataset
// as its text input shows it (a file name with control characters
// cleaned), which is not what the Dataset pane loaded.
func (m *Model) dataChanged() tea.Cmd {
	v := m.form.Values()[form.Data]
	if v == m.dataField {
		return nil
	}
	m.dataField = v
	ds, err := m.datasetsOf(v)
	if err != nil || len(ds) == 0 || ds[0] == m.loadSpec {
		return nil
	}
	return m.load(ds[0])
}
