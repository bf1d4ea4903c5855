// Package detail is the results pane for one combo: its equity curve in
// fp64 and fp32 and its trade list, from engine.InspectCombo.
package detail

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/engine"
	"sweepbench/tui/common"
	"sweepbench/tui/components/chart"
	"sweepbench/tui/components/datatable"
)

// Model is the combo detail pane.
type Model struct {
	ctx   *common.Context
	state *common.RunState // the run it shows
	tbl   *datatable.Model
	w, h  int
}

var (
	_ common.Pane    = (*Model)(nil)
	_ common.Focuser = (*Model)(nil)
)

// New returns the pane.
func New(ctx *common.Context, state *common.RunState) *Model {
	return &Model{ctx: ctx, state: state, tbl: datatable.New(ctx, tradeColumns(), 2)}
}

// tradeColumns are the trade list's columns at their narrowest (the table
// widens them to their widest cells).
func tradeColumns() []datatable.Column {
	return []datatable.Column{
		{Title: "#", Width: 4, Right: true}, {Title: "side", Width: 5},
		{Title: "entry (UTC)", Width: 11}, {Title: "exit (UTC)", Width: 11},
		{Title: "bars", Width: 6, Right: true}, {Title: "return", Width: 8, Right: true},
	}
}

// Title names the pane.
func (m *Model) Title() string {
	if in := m.state.Inspect; in != nil {
		if r := m.state.Results; r != nil && r.Grid.Strategy != nil {
			return "Combo " + common.ComboName(r.Grid, in.Index)
		}
		return fmt.Sprintf("Combo hma %d x hma3 %d", in.Combo.HMA, in.Combo.HMA3)
	}
	return "Combo"
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Focus shows the focused cursor.
func (m *Model) Focus(f bool) { m.tbl.Focus(f) }

func (m *Model) detail() *engine.ComboDetail {
	in := m.state.Inspect
	if in == nil || in.Err != nil {
		return nil
	}
	if in.D64 != nil {
		return in.D64
	}
	return in.D32
}

// Reload lists the trades of the inspected combo.
func (m *Model) Reload() {
	d := m.detail()
	if d == nil || d.Trace == nil {
		m.tbl.SetRows(nil, nil)
		return
	}
	var times []int64
	if s := m.state.Study; s != nil {
		times = s.Dataset.Bars.Time
	}
	layout := common.WithYear(times, "01-02 15:04") // the year where the data spans years
	at := func(b int) string {
		if b < len(times) {
			return common.BarTime(times[b], layout)
		}
		return fmt.Sprint(b)
	}
	// Bars as counts; returns in percent with two decimals (the Combo
	// pane's and run's convention), never "-0.00%" (common.NumColumn).
	bars, ret := common.NumColumn{Count: true}, common.NumColumn{Decimals: 2}
	rows := make([][]string, len(d.Trades))
	for i, tr := range d.Trades {
		side := "long"
		if tr.Side < 0 {
			side = "short"
		}
		rows[i] = []string{fmt.Sprint(i + 1), side, at(tr.Entry), at(tr.Exit),
			bars.Format(float64(tr.Exit - tr.Entry)), ret.Format(100*tr.Return) + "%"}
	}
	m.tbl.SetRows(rows, nil)
	m.tbl.SetCursor(0)
}

// Update handles the keys of the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyMsg); ok {
		m.tbl.HandleNav(km)
	}
	return nil
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	if v, pending := m.state.InspectPending(m.ctx.Theme, m.w, m.h, st.label, st.bad); pending {
		return v
	}
	in := m.state.Inspect
	var head []string
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		d := in.D64
		if p == engine.FP32 {
			d = in.D32
		}
		if why := in.Missing[p]; why != "" {
			head = append(head, st.warn.Render(t.Truncate(why, m.w)))
			continue
		}
		if d == nil {
			continue
		}
		// Wrapped, never cut: the trade count is what the list below counts.
		head = append(head, t.Wrap(fmt.Sprintf("%s: return %s, sharpe %s, max dd %s, %s",
			d.Precision, common.Pct(d.TotalReturn), common.Num(d.Sharpe), common.Pct(d.MaxDrawdown), common.Plural(d.TotalTrades, "trade")), m.w)...)
	}
	if in.D64 == nil && in.D32 == nil {
		return t.Fit(strings.Join(head, "\n"), m.w, m.h)
	}
	// SPEC Part 2's metrics of the combo in the precision on screen (p),
	// else the other, where the pane has the lines: the chart keeps at
	// least 4, the list its header and a row.
	ref := in.D64
	if ref == nil || (m.state.Prec == engine.FP32 && in.D32 != nil) {
		ref = in.D32
	}
	if tl := t.Wrap(tradeLine(ref), m.w); m.h-len(head)-len(tl)-1 >= 4+3 {
		head = append(head, tl...)
	}
	rest := m.h - len(head) - 1
	// The chart first (at least 4 lines), the trade list at least its
	// header and the cursor's row.
	chartH := rest * 55 / 100
	if chartH < 4 {
		chartH = min(4, rest-2)
	}
	chartH = min(chartH, 12)
	if chartH < 4 {
		chartH = 0
	}
	var parts []string
	parts = append(parts, head...)
	if chartH > 0 {
		var series []chart.Series
		// fp32 first: fp64 is drawn over it, so fp32 shows where they differ.
		if in.D32 != nil {
			series = append(series, chart.Series{Name: "1fp32", Values: in.D32.Equity, Color: st.e32, Marker: 'o'})
		}
		if in.D64 != nil {
			series = append(series, chart.Series{Name: "2fp64", Values: in.D64.Equity, Color: st.e64, Marker: '*'})
		}
		var times []int64
		if s := m.state.Study; s != nil {
			times = s.Dataset.Bars.Time
		}
		layout := common.WithYear(times, "01-02") // the year where the data spans years
		xlab := func(k int) string {
			if k >= 0 && k < len(times) {
				return common.BarTime(times[k], layout)
			}
			return ""
		}
		body, _ := chart.Render(m.ctx, chart.Spec{W: m.w, H: chartH, XStep: 14, XLabel: xlab, Series: series})
		parts = append(parts, body)
	}
	legend := st.label.Render("equity")
	if in.D64 != nil {
		legend += " " + key(t.Plain, '*', st.e64) + st.label.Render(" fp64")
	}
	if in.D32 != nil {
		if in.D64 != nil {
			legend += " "
		}
		legend += " " + key(t.Plain, 'o', st.e32) + st.label.Render(" fp32")
	}
	legend += st.label.Render(fmt.Sprintf("; trades (%s):", m.detail().Precision))
	parts = append(parts, legend)
	// The list gets the lines left: the chart is one part of many lines.
	m.tbl.SetSize(m.w, m.h-lipgloss.Height(strings.Join(parts, "\n")))
	parts = append(parts, m.tbl.View())
	return t.Fit(strings.Join(parts, "\n"), m.w, m.h)
}

// tradeLine is d's SPEC Part 2 metrics in a line, each as the tables
// format it (common.Value: "n/a" where the lane did not compute them):
// "fp64 trades: profit factor 1.2, expectancy 0.05%, sqn 1.1, ...".
func tradeLine(d *engine.ComboDetail) string {
	var parts []string
	for _, n := range []struct{ name, label string }{{"profit_factor", "profit factor"}, {"expectancy", "expectancy"},
		{"sqn", "sqn"}, {"exposure", "exposure"}, {"avg_trade_bars", "bars/trade"}, {"max_drawdown_bars", "max dd bars"}} {
		v, _ := d.Metrics.Value(n.name)
		parts = append(parts, n.label+" "+common.Value(n.name, v))
	}
	return d.Precision.String() + " trades: " + strings.Join(parts, ", ")
}

func key(plain bool, marker rune, c lipgloss.TerminalColor) string {
	if plain {
		return string(marker)
	}
	return lipgloss.NewStyle().Foreground(c).Render("──")
}

// Trades is how many trades the list holds.
func (m *Model) Trades() int { return m.tbl.Len() }
