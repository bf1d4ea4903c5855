// Package heatmap is the results pane that colours a metric (or a parity
// column) over the HMA x HMA3 grid with ntcharts' heatmap, draws the axis
// labels ntcharts does not, and moves a cursor that selects a combo.
package heatmap

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	hm "github.com/NimbleMarkets/ntcharts/heatmap"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"sweepbench/tui/common"
)

// plateauGlyph marks the plateau best's cell (the robustness section's:
// the best mean objective over its neighbourhood).
const plateauGlyph = 'P'

// Model is the heatmap pane.
type Model struct {
	ctx      *common.Context
	w, h     int
	row, col int // cursor: HMA index, HMA3 index
	r0, c0   int // first row and column shown
}

// New returns the pane.
func New(ctx *common.Context) *Model { return &Model{ctx: ctx} }

// SetSize sets the inner size of the pane.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Title names the pane with its metric and precision.
func (m *Model) Title() string {
	p := m.ctx.Prec.String()
	if common.IsParityColumn(m.ctx.Metric) {
		p = "fp32 vs fp64"
	}
	return fmt.Sprintf("Heatmap: %s (%s)", common.Header(m.ctx.Metric), p)
}

// Want is the height (frame included) the pane needs to show every row.
func (m *Model) Want() int {
	if r := m.ctx.Results; r != nil {
		return r.Grid.HMA.Len() + 5
	}
	return 8
}

// Sync moves the cursor to the selected combo.
func (m *Model) Sync() {
	r := m.ctx.Results
	if r == nil || m.ctx.Selected < 0 {
		return
	}
	n3 := r.Grid.HMA3.Len()
	if n3 > 0 {
		m.row, m.col = m.ctx.Selected/n3, m.ctx.Selected%n3
	}
}

// Update handles the keys of the focused pane.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	r := m.ctx.Results
	if !ok || r == nil {
		return nil
	}
	k := m.ctx.Keys
	g := r.Grid
	row, col := m.row, m.col
	switch {
	case key.Matches(km, k.Up):
		row--
	case key.Matches(km, k.Down):
		row++
	case key.Matches(km, k.Left):
		col--
	case key.Matches(km, k.Right):
		col++
	case key.Matches(km, k.Top):
		row, col = 0, 0
	case key.Matches(km, k.Bottom):
		row, col = g.HMA.Len()-1, g.HMA3.Len()-1
	case key.Matches(km, k.Best):
		// The best combo by the study's objective and constraints.
		if i := r.Top(m.ctx.Prec, r.Indexes()); i >= 0 {
			return common.Send(common.SelectMsg{Index: i})
		}
		return common.Send(common.ErrMsg{Err: fmt.Errorf("no combo meets the objective's constraints (%s)", r.Objective.Label())})
	default:
		return nil
	}
	row = max(0, min(row, g.HMA.Len()-1))
	col = max(0, min(col, g.HMA3.Len()-1))
	m.row, m.col = row, col
	return common.Send(common.SelectMsg{Index: g.Index(row, col)})
}

// View renders the pane body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	r := m.ctx.Results
	if r == nil {
		return t.Fit("", m.w, m.h)
	}
	st := newStyles(t)
	g := r.Grid
	nh, n3 := g.HMA.Len(), g.HMA3.Len()
	metric, prec := m.ctx.Metric, m.ctx.Prec

	// Labels and the cell size.
	lw := max(len(strconv.Itoa(g.HMA.Last())), 3) + 1
	cw := max(2, min(10, (m.w-lw)/max(n3, 1)))
	visC := max(1, min(n3, (m.w-lw)/cw))
	rowH := max(1, min(3, (m.h-3)/max(nh, 1)))
	visR := max(1, min(nh, (m.h-3)/rowH))
	m.r0 = scrollTo(m.r0, m.row, visR, nh)
	m.c0 = scrollTo(m.c0, m.col, visC, n3)

	// The value range over the whole grid, so scrolling keeps the colours.
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < g.Len(); i++ {
		if v, ok := r.Value(i, metric, prec); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		lo, hi = 0, 1
	}
	span := hi - lo
	if span == 0 {
		lo, hi, span = lo-1, hi+1, 2
	}
	level := func(v float64, n int) int {
		return max(0, min(n-1, int((v-lo)/span*float64(n))))
	}

	// Cells: one heat point per canvas cell.
	gw, gh := visC*cw, visR*rowH
	h := hm.New(gw, gh, hm.WithColorScale(st.scale), hm.WithValueRange(lo, hi))
	h.SetXStep(0)
	h.SetYStep(0)
	h.Model.SetXYRange(0, float64(gw), 0, float64(gh))
	h.SetViewXYRange(0, float64(gw), 0, float64(gh))
	type cell struct {
		v  float64
		ok bool
	}
	cells := make([][]cell, visR)
	for y := 0; y < visR; y++ {
		cells[y] = make([]cell, visC)
		for x := 0; x < visC; x++ {
			v, ok := r.Value(g.Index(m.r0+y, m.c0+x), metric, prec)
			ok = ok && !math.IsNaN(v)
			cells[y][x] = cell{v, ok}
			if !ok {
				continue
			}
			for dy := 0; dy < rowH; dy++ {
				for dx := 0; dx < cw; dx++ {
					h.Push(hm.NewHeatPoint(float64(x*cw+dx), float64(gh-1-(y*rowH+dy)), v))
				}
			}
		}
	}
	h.Draw()
	// The plateau best (robustness), marked with its glyph in the middle
	// of its cell.
	pr, pc := -1, -1
	if sm := r.Robust; sm != nil && sm.PlateauK > 0 {
		pr, pc = sm.PlateauBest.Index/max(n3, 1), sm.PlateauBest.Index%max(n3, 1)
	}
	for yy := 0; yy < gh; yy++ {
		y := yy / rowH
		for x := 0; x < visC; x++ {
			c := cells[y][x]
			cur := m.r0+y == m.row && m.c0+x == m.col
			plateau := m.r0+y == pr && m.c0+x == pc && yy%rowH == rowH/2
			for dx := 0; dx < cw; dx++ {
				p := canvas.Point{X: x*cw + dx, Y: yy}
				ch := rune(0)
				if t.Plain && c.ok {
					ch = st.ramp[level(c.v, len(st.ramp))]
				}
				mark := plateau && dx == cw/2
				if mark {
					ch = plateauGlyph
				}
				if cur && dx == 0 {
					ch, mark = '[', false
				}
				if cur && dx == cw-1 {
					ch, mark = ']', false
				}
				if ch != 0 {
					style := lipgloss.NewStyle()
					if s := h.Canvas.GetCellStyle(p); s != nil {
						style = *s
					}
					if cur {
						style = style.Inherit(st.cursor)
					}
					if mark {
						style = style.Inherit(st.plateau)
					}
					h.Canvas.SetCell(p, canvas.NewCellWithStyle(ch, style))
				}
			}
		}
	}
	grid := strings.Split(h.View(), "\n")

	var b strings.Builder
	// Line 1: the selected combo and its value.
	sel := g.Index(m.row, m.col)
	val := "-"
	if v, ok := r.Value(sel, metric, prec); ok {
		val = common.Value(metric, v)
	}
	line := st.info.Render(fmt.Sprintf("hma %d x hma3 %d: ", g.HMA.At(m.row), g.HMA3.At(m.col))) + st.value.Render(metric+" "+val)
	if pr >= 0 {
		// The legend of the plateau mark, with the combo it marks.
		line += st.info.Render("   ") + st.plateau.Render(string(plateauGlyph)) +
			st.info.Render(fmt.Sprintf(" plateau best %d x %d", g.HMA.At(pr), g.HMA3.At(pc)))
	}
	b.WriteString(line + "\n")
	// Rows with their HMA labels.
	for yy := 0; yy < gh && yy < len(grid); yy++ {
		lab := strings.Repeat(" ", lw)
		if yy%rowH == rowH/2 {
			lab = fmt.Sprintf("%*d ", lw-1, g.HMA.At(m.r0+yy/rowH))
		}
		b.WriteString(st.label.Render(lab) + grid[yy] + "\n")
	}
	// The HMA3 labels under their columns.
	xl := []byte(strings.Repeat(" ", lw+gw))
	every := 1
	for every*cw < len(strconv.Itoa(g.HMA3.Last()))+1 {
		every++
	}
	for x := 0; x < visC; x += every {
		s := strconv.Itoa(g.HMA3.At(m.c0 + x))
		pos := lw + x*cw
		if pos+len(s) <= len(xl) {
			copy(xl[pos:], s)
		}
	}
	b.WriteString(st.label.Render(strings.TrimRight(string(xl), " ")) + "\n")
	// Legend; a grid larger than the pane says which part is shown (the
	// view follows the cursor).
	axes := "rows hma, cols hma3  "
	if visR < nh || visC < n3 {
		axes = fmt.Sprintf("shown: hma %d..%d of %d..%d, hma3 %d..%d of %d..%d  ",
			g.HMA.At(m.r0), g.HMA.At(m.r0+visR-1), g.HMA.Start, g.HMA.Last(),
			g.HMA3.At(m.c0), g.HMA3.At(m.c0+visC-1), g.HMA3.Start, g.HMA3.Last())
	}
	b.WriteString(st.label.Render(axes) + st.label.Render(common.Value(metric, lo)+" ") +
		m.legend(st) + st.label.Render(" "+common.Value(metric, hi)))
	return t.Fit(b.String(), m.w, m.h)
}

func (m *Model) legend(st styles) string {
	if m.ctx.Theme.Plain {
		return string(st.ramp)
	}
	var b strings.Builder
	for _, c := range st.scale {
		b.WriteString(lipgloss.NewStyle().Background(c).Render(" "))
	}
	return b.String()
}

// scrollTo returns the first index to show so that cur is visible in a
// window of vis out of n.
func scrollTo(start, cur, vis, n int) int {
	if cur < start {
		start = cur
	}
	if cur >= start+vis {
		start = cur - vis + 1
	}
	return max(0, min(start, n-vis))
}
