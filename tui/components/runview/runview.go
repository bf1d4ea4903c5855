// Package runview is the run screen: one progress lane per precision
// (bar, combos done of total, combos/s, ETA), a streamline chart of the
// throughput, and the best combo so far. It only displays the
// engine.Progress events the root model hands it.
package runview

import (
	"fmt"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart/streamlinechart"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

type lane struct {
	prec engine.Precision
	p    engine.Progress
	seen bool
}

// Model is the run screen.
type Model struct {
	ctx        *common.Context
	state      *common.RunState // the run it shows
	w, h       int
	lanes      []lane
	spin       spinner.Model
	rates      []float64 // throughput samples, combos/s, oldest first
	cancelling bool
	askQuit    bool
	// stage is the study's phase after its lanes (parity, robustness,
	// saving: engine.Phase), since when, over how many combos.
	stage      engine.Phase
	stageSince time.Time
	stageOf    int
	stageDone  int // parity: combos compared so far
}

var _ common.Component = (*Model)(nil)

// New returns the run screen.
func New(ctx *common.Context, state *common.RunState) *Model {
	sp := spinner.New(spinner.WithSpinner(spinner.Line))
	return &Model{ctx: ctx, state: state, spin: sp}
}

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Start resets the lanes for a new study and starts the spinner.
func (m *Model) Start(s *engine.Study) tea.Cmd {
	m.Next(s)
	m.cancelling, m.askQuit = false, false
	return m.spin.Tick
}

// Next resets the lanes for the next study of a suite (the spinner goes
// on; a cancel or a quit asked stays asked).
func (m *Model) Next(s *engine.Study) {
	m.lanes = m.lanes[:0]
	for _, p := range s.Precisions {
		m.lanes = append(m.lanes, lane{prec: p, p: engine.Progress{Precision: p, Total: s.Grid.Len()}})
	}
	m.rates = nil
	m.stage = ""
}

// Fraction is how far the study's lanes are, 0 to 1 (combos done of
// every lane's total).
func (m *Model) Fraction() float64 {
	done, total := 0, 0
	for _, l := range m.lanes {
		done, total = done+l.p.Done, total+l.p.Total
	}
	if total == 0 {
		return 0
	}
	return float64(done) / float64(total)
}

// AskQuit shows (or takes back) the question a q during the sweep asks.
func (m *Model) AskQuit(ask bool) { m.askQuit = ask }

// SetCancelling shows that a cancel was asked for.
func (m *Model) SetCancelling() { m.cancelling = true }

// Progress takes the latest event of each lane (already throttled).
func (m *Model) Progress(ps []engine.Progress) {
	var rate float64
	for _, p := range ps {
		switch p.Phase {
		case engine.PhaseParity, engine.PhaseRobustness, engine.PhaseSaving:
			// The study's own phase, not a lane's: named on its line.
			if m.stage != p.Phase {
				m.stage, m.stageSince, m.stageOf = p.Phase, time.Now(), p.Total
			}
			m.stageDone = p.Done
			continue
		}
		for i := range m.lanes {
			if m.lanes[i].prec == p.Precision {
				m.lanes[i].p, m.lanes[i].seen = p, true
			}
		}
		if p.Phase == "compute" {
			rate += p.Rate
		}
	}
	m.rates = append(m.rates, rate)
	if len(m.rates) > 1000 {
		m.rates = m.rates[len(m.rates)-1000:]
	}
}

// Update advances the spinner.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if _, ok := msg.(spinner.TickMsg); ok {
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	}
	return nil
}

// View renders the screen body, exactly w x h.
func (m *Model) View() string {
	t := m.ctx.Theme
	st := newStyles(t)
	s := m.state.Study
	if s == nil {
		return t.Fit("", m.w, m.h)
	}
	var lines []string
	sweeping := fmt.Sprintf("hma %s x hma3 %s", s.Grid.HMA, s.Grid.HMA3)
	if s.Grid.Strategy != nil {
		sweeping = s.Grid.Family() + " " + s.Grid.Text()
	}
	lines = append(lines, st.title.Render(fmt.Sprintf("%s Sweeping %s = %s per precision",
		m.spin.View(), sweeping, common.Plural(s.Grid.Len(), "combo"))))
	lines = append(lines, st.label.Render(fmt.Sprintf("%s on %s%s%s", common.Clean(s.Dataset.Info.Name), s.Backend.Name(), t.Sep,
		m.ctx.DeviceName(m.state.Device))), "")
	// Each lane's figures first, so the bars line up at one width.
	texts := make([]string, len(m.lanes))
	widest := 0
	for i, l := range m.lanes {
		p := l.p
		frac := 0.0
		if p.Total > 0 {
			frac = float64(p.Done) / float64(p.Total)
		}
		phase := p.Phase
		if !l.seen {
			phase = "waiting"
		}
		eta, rate := "-", "-"
		if p.ETA > 0 {
			eta = m.ctx.Duration(p.ETA)
		}
		if p.Rate > 0 && !m.ctx.Deterministic {
			rate = common.Thousands(int(p.Rate + 0.5))
		}
		texts[i] = fmt.Sprintf(" %5.1f%%  %s/%s  %s combos/s  ETA %s  %s", 100*frac,
			common.Thousands(p.Done), common.Thousands(p.Total), rate, eta, phase)
		widest = max(widest, len(texts[i]))
	}
	barW := max(10, min(50, m.w-5-widest))
	for i, l := range m.lanes {
		frac := 0.0
		if l.p.Total > 0 {
			frac = float64(l.p.Done) / float64(l.p.Total)
		}
		bar := progress.New(append(st.bar, progress.WithWidth(barW))...)
		lines = append(lines, st.value.Render(l.prec.String())+" "+bar.ViewAs(frac)+texts[i])
	}
	if m.stage != "" {
		count := ""
		if m.stage == engine.PhaseParity && m.stageDone > 0 && m.stageDone < m.stageOf {
			count = fmt.Sprintf(" %s %s of %s compared", t.Sep, common.Thousands(m.stageDone), common.Thousands(m.stageOf))
		}
		lines = append(lines, t.Wrap(st.value.Render("now: ")+stageText(m.stage, m.stageOf)+count+" "+t.Sep+" "+
			m.ctx.Duration(time.Since(m.stageSince))+" so far", m.w)...)
	}
	lines = append(lines, "")
	// Each lane's own best: an fp32 Sharpe is not an fp64 one (parity
	// ratifies it only at the end).
	for _, l := range m.lanes {
		if b := l.p.Best; b != nil && s.Grid.Strategy != nil {
			lines = append(lines, t.Wrap(fmt.Sprintf("best sharpe so far, %s: %s at %s, return %s, %d trades",
				l.prec, common.Num(b.Sharpe), common.ComboName(s.Grid, b.Index), common.Pct(b.TotalReturn), b.TotalTrades), m.w)...)
		} else if b != nil {
			lines = append(lines, t.Wrap(fmt.Sprintf("best sharpe so far, %s: %s at hma %d x hma3 %d, return %s, %d trades",
				l.prec, common.Num(b.Sharpe), b.HMA, b.HMA3, common.Pct(b.TotalReturn), b.TotalTrades), m.w)...)
		} else {
			lines = append(lines, st.label.Render(fmt.Sprintf("best sharpe so far, %s: -", l.prec)))
		}
	}
	foot := st.label.Render("esc cancels (keeps the combos that completed); enter shows the results so far; e queues the next study, S sessions; q quits")
	switch {
	case m.askQuit:
		foot = st.warn.Render("quit while the sweep computes? q again quits (what completed is saved, resumable); any other key goes on")
	case m.cancelling:
		foot = st.warn.Render("cancelling" + t.Ellipsis + " the workers stop after their current chunk")
	}
	ch := m.h - len(lines) - 3
	if ch >= 4 {
		lines = append(lines, st.label.Render("throughput, combos/s (all lanes)"))
		sl := streamlinechart.New(m.w, ch)
		sl.SetStyles(runes.ArcLineStyle, st.chart)
		for _, r := range m.rates {
			sl.Push(r)
		}
		sl.Draw()
		lines = append(lines, t.Sanitize(sl.View()))
	}
	lines = append(lines, foot)
	return t.Fit(strings.Join(lines, "\n"), m.w, m.h)
}

// stageText names a study's phase after its lanes and what it does.
func stageText(p engine.Phase, combos int) string {
	switch p {
	case engine.PhaseParity:
		return fmt.Sprintf("parity: the fp32 positions compared with fp64's bar by bar on %s, the flips and their margins", common.Plural(combos, "combo"))
	case engine.PhaseRobustness:
		return "robustness: PBO over every split of the blocks, the deflated Sharpe, the walk-forward and the plateau"
	case engine.PhaseSaving:
		return "saving: the last batches and the parity report into the sessions store"
	}
	return string(p)
}
