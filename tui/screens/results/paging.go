package results

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/tui/common"
)

// Paged results (common.Results.Paged) read what the panes need from the
// saved session a page at a time: the screen opens a pager per run of the
// session (sessions.Store.OpenRunReader: every batch read once to verify
// it) in a command whose answer, pagersMsg, comes back tagged for this
// screen; then the panes ask for their pages (fetch), and the selected
// combo is read when no pane holds it (pickMsg).

type (
	pagersMsg struct {
		r      *common.Results // the results they are for: dropped when others are on screen
		pagers map[engine.Precision]common.Pager
		err    error
	}
	pickMsg struct {
		r    *common.Results
		p    engine.Precision
		want []int
		rs   []engine.ComboResult
		err  error
	}
)

// openPagers is the command that opens the pagers of r's saved session.
func (m *Model) openPagers(r *common.Results) tea.Cmd {
	st := m.store
	if st == nil || r.Session == 0 {
		return nil
	}
	r.PagerWhy = "opening the saved runs" + m.ctx.Theme.Ellipsis
	id := r.Session
	var precs []engine.Precision
	for _, run := range r.Report.Runs {
		precs = append(precs, run.Precision)
	}
	return common.Tag(common.ResultsScreen, common.Guard(func() tea.Msg {
		ps := map[engine.Precision]common.Pager{}
		for _, p := range precs {
			rr, err := st.OpenRunReader(context.Background(), id, p)
			if err != nil {
				return pagersMsg{r: r, err: err}
			}
			ps[p] = rr
		}
		return pagersMsg{r: r, pagers: ps}
	}, func(err error) tea.Msg { return pagersMsg{r: r, err: err} }))
}

// pagers takes the opened pagers: the panes read their pages now.
func (m *Model) pagers(msg pagersMsg) {
	r := m.state.Results
	if msg.r != r {
		return
	}
	if msg.err != nil {
		r.PagerWhy = fmt.Sprintf("the saved runs could not be read: %v", msg.err)
		m.host.Do(common.ErrMsg{Err: msg.err})
	} else {
		r.SetPagers(msg.pagers)
	}
	m.metrics.Reload()
	m.heat.Reload()
}

// fetch is the panes' reads of the pages they need now (none when they
// hold what they show), and of the selected combo when it is not held.
func (m *Model) fetch() tea.Cmd {
	r := m.state.Results
	if r == nil || !r.Paged() {
		return nil
	}
	cmds := []tea.Cmd{common.Tag(common.ResultsScreen, m.metrics.Fetch()), common.Tag(common.ResultsScreen, m.heat.Fetch())}
	if idx := m.state.Selected; idx >= 0 && idx != m.picking {
		for _, run := range r.Report.Runs {
			p, pg := run.Precision, r.Pager(run.Precision)
			if pg == nil || r.Known(idx, p) {
				continue
			}
			m.picking = idx
			want := []int{idx}
			cmds = append(cmds, common.Tag(common.ResultsScreen, common.Guard(func() tea.Msg {
				rs, err := pg.Combos(context.Background(), want)
				return pickMsg{r: r, p: p, want: want, rs: rs, err: err}
			}, func(err error) tea.Msg { return pickMsg{r: r, p: p, want: want, err: err} })))
		}
	}
	return tea.Batch(cmds...)
}

// pick takes a combo read for the selection.
func (m *Model) pick(msg pickMsg) {
	if msg.r != m.state.Results {
		return
	}
	if msg.err != nil {
		// picking stays: not asked again until another selection (the
		// status line says why).
		m.host.Do(common.ErrMsg{Err: msg.err})
		return
	}
	if m.picking == msg.want[0] {
		m.picking = -1
	}
	msg.r.Pick(msg.p, msg.want, msg.rs)
}
