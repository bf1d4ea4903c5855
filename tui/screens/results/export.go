package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/engine/output/records"
	"sweepbench/tui/common"
)

// The export key (w): the selected combo's trades and bars, as
// `sweepbench sessions trades` and `sessions bars` write them (package
// records), from the combo detail on screen (the sweep's own
// recomputation, engine.InspectCombo / InspectIndex), in the precision on
// screen (p), as CSV files in the current directory: exportDir.

// exportDir is where the export key writes (a variable: tests write to a
// folder of their own); "" is the current directory.
var exportDir = ""

// exportCombo writes the inspected combo's trades and bars to two new CSV
// files named after the session and the combo,
// session-ID-COMBO-PREC-trades.csv and -bars.csv (sweepbench-COMBO-...
// for a run not saved; COMBO its label in snake_case, hma_20_hma3_30),
// never over a file (records.WriteNew: -2, -3, ... when taken), and puts
// where on the status line; an error there when there is no combo detail
// to export (none yet, or it failed).
func (m *Model) exportCombo() tea.Cmd {
	in, s, r := m.state.Inspect, m.state.Study, m.state.Results
	if r == nil || s == nil || in == nil || in.Err != nil || in.Why != "" || (in.D64 == nil && in.D32 == nil) {
		why := "no combo detail to export yet: select a combo and wait for its detail"
		switch {
		case in != nil && in.Err != nil:
			why = in.Err.Error()
		case in != nil && in.Why != "":
			why = in.Why
		}
		return m.host.Do(common.ErrMsg{Err: fmt.Errorf("export: %s", why)})
	}
	d := in.D64
	if m.state.Prec == engine.FP32 && in.D32 != nil || d == nil {
		d = in.D32
	}
	stem := "sweepbench"
	if r.Session > 0 {
		stem = fmt.Sprintf("session-%d", r.Session)
	}
	label := s.Grid.Label(in.Index)
	stem += "-" + records.SnakeCase(label) + "-" + d.Precision.String()
	bars := &s.Dataset.Bars
	idx := in.Index
	return common.Guard(func() tea.Msg {
		paths, err := exportDetail(d, bars, stem, r.Session, label, idx)
		if err != nil {
			return common.ErrMsg{Err: fmt.Errorf("export %s: %w", label, err)}
		}
		dir, _ := filepath.Abs(filepath.Dir(paths[0]))
		return common.InfoMsg{Text: fmt.Sprintf("wrote %s and %s in %s", filepath.Base(paths[0]), filepath.Base(paths[1]), dir)}
	}, func(err error) tea.Msg { return common.ErrMsg{Err: fmt.Errorf("export %s: %w", label, err)} })
}

// exportDetail writes d's trades and bars (b the bars it was computed
// on) to new CSV files STEM-trades.csv and STEM-bars.csv in exportDir
// (records.WriteNew), with the session, combo and precision as the
// tables' metadata; it returns their paths.
func exportDetail(d *engine.ComboDetail, b *engine.Bars, stem string, session int64, label string, idx int) ([]string, error) {
	if d == nil {
		return nil, errors.New("no combo detail")
	}
	tt, err := records.Trades(d, b)
	if err != nil {
		return nil, err
	}
	bt, err := records.Bars(d, b)
	if err != nil {
		return nil, err
	}
	meta := [][2]string{{"session", fmt.Sprint(session)}, {"combo", label}, {"combo_index", fmt.Sprint(idx)}, {"precision", d.Precision.String()}}
	tt.Meta, bt.Meta = meta, meta
	dir := exportDir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	return records.WriteNew(dir, stem, output.RowsCSV, []records.Named{{Name: "trades", Table: tt}, {Name: "bars", Table: bt}})
}
