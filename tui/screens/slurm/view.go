package slurm

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/lipgloss"

	store "sweepbench/sessions"
	cluster "sweepbench/slurm"
	"sweepbench/tui/common"
)

// View implements common.Screen: one pane, the folder's state above its
// tasks' table, what a key did (or asks) at the bottom.
func (m *Model) View() string {
	t := m.ctx.Theme
	title := "Slurm"
	if d := m.Dir(); d != "" && !m.editing {
		title = "Slurm: " + d
	}
	return t.Pane(title, m.body(), m.w, m.h, true)
}

// body is the pane's inside, m.w-2 x m.h-2.
func (m *Model) body() string {
	t := m.ctx.Theme
	w, h := max(m.w-2, 1), max(m.h-2, 1)
	wrap := func(st lipgloss.Style, s string) []string {
		var out []string
		for _, l := range t.Wrap(s, w) {
			out = append(out, st.Render(l))
		}
		return out
	}
	if m.cfg.Runner == nil {
		return t.Fit(strings.Join(wrap(t.Warning, m.cfg.Unavailable), "\n"), w, h)
	}
	if m.editing || m.Dir() == "" {
		lines := []string{m.input.View(), ""}
		lines = append(lines, wrap(t.Subtle, "the folder `sweepbench slurm --out DIR` wrote (its slurm.json, scripts, logs and shards); "+
			"enter shows it, esc leaves the field. sweepbench tui --slurm-dir DIR opens the workbench on it.")...)
		return t.Fit(strings.Join(lines, "\n"), w, h)
	}
	head, foot := m.frame(w, h)
	var table []string
	if m.status != nil {
		table = m.table(w, max(h-len(head)-len(foot), 0))
	}
	lines := append(append(head, table...), make([]string, max(h-len(head)-len(table)-len(foot), 0))...)
	return t.Fit(strings.Join(append(lines, foot...), "\n"), w, h)
}

// frame is the header and the footer of a body w x h: the footer whole
// (a question or an error is read in full, even a long list of tasks),
// the header cut to what remains (the table, below it, gets what is left
// of both).
func (m *Model) frame(w, h int) (head, foot []string) {
	head, foot = m.header(w), m.footer(w)
	foot = foot[:min(len(foot), h)]
	return head[:min(len(head), h-len(foot))], foot
}

// header is the folder's plan, jobs and counts (or why it could not be
// read).
func (m *Model) header(w int) []string {
	t := m.ctx.Theme
	var lines []string
	field := func(name, val string, st lipgloss.Style) {
		const pad = "         "
		for i, l := range t.Wrap(val, max(w-len(pad), 10)) {
			lead := pad
			if i == 0 {
				lead = fmt.Sprintf("%-9s", name)
			}
			lines = append(lines, t.Header.Render(lead)+st.Render(l))
		}
	}
	switch n := len(m.dirs); {
	case m.stray != "" && n > 0:
		field("folder", fmt.Sprintf("never read (left/right: the %s read)", common.Plural(n, "folder")), t.Subtle)
	case n > 1:
		field("folder", fmt.Sprintf("%d of %d (left/right: the others)", m.cur+1, n), t.Subtle)
	}
	switch {
	case m.err != nil:
		field("error", m.err.Error(), t.Error)
		return lines
	case m.state == nil:
		field("reading", m.Dir()+t.Ellipsis, t.Subtle)
		return lines
	}
	p := m.state.Plan
	field("plan", plan(&p), lipgloss.NewStyle())
	field("run", strings.Join(p.RunArgs, " "), lipgloss.NewStyle())
	s := m.status
	c := s.Counts()
	var jobs string
	switch {
	case len(s.ArrayJobs) > 0:
		jobs = "array " + strings.Join(s.ArrayJobs, ", ")
		if !s.Submitted.IsZero() && !m.ctx.Deterministic {
			jobs += "; last submitted " + s.Submitted.Local().Format("2006-01-02 15:04:05")
		}
	case s.MergeJob == "" && s.Complete():
		jobs = "not submitted (every shard is there and merged.json is written: nothing to submit)"
	case s.MergeJob == "" && c.Done == len(s.Tasks):
		jobs = "not submitted (every shard is there: R submits the merge job, or sweepbench merge DIR merges them here)"
	case s.MergeJob != "":
		jobs = "no array job; merge job " + s.MergeJob
	case c.Done > 0:
		jobs = "not submitted yet (R submits the tasks without a shard and their merge)"
	default:
		jobs = "not submitted yet (R submits the array and its merge)"
	}
	field("jobs", jobs, lipgloss.NewStyle())
	tasks := fmt.Sprintf("%d: %d done, %d running, %d pending, %d failed, %d missing",
		len(s.Tasks), c.Done, c.Running, c.Pending, c.Failed, c.Missing)
	if c.Unknown > 0 {
		tasks += fmt.Sprintf(", %d unknown", c.Unknown)
	}
	field("tasks", tasks, lipgloss.NewStyle())
	field("merge", m.mergeLine(), lipgloss.NewStyle())
	if s.Unanswered != nil {
		field("unknown", unknownLine(s), t.Error)
	}
	if s.Note != "" {
		field("note", s.Note, t.Warning)
	}
	return append(lines, "")
}

// unknownLine says why states are unknown and what R does meanwhile.
func unknownLine(s *cluster.Status) string {
	switch unknown := s.Unknown(); {
	case len(unknown) > 0:
		return fmt.Sprintf("%s; %s %s may be running or pending: R submits nothing until squeue answers",
			s.Unanswered, map[bool]string{true: "task", false: "tasks"}[len(unknown) == 1], cluster.TaskList(unknown))
	case s.Refusal() != nil:
		return fmt.Sprintf("%s; the merge job may be running: R submits nothing until squeue answers", s.Unanswered)
	}
	return fmt.Sprintf("%s; the states shown are sacct's", s.Unanswered)
}

// plan is the plan's resources in words.
func plan(p *cluster.Plan) string {
	parts := []string{common.Plural(p.Shards, "shard")}
	part := p.Partition
	if part == "" {
		part = "the default"
	}
	parts = append(parts, "partition "+part)
	if p.GPUsPerTask > 0 {
		parts = append(parts, fmt.Sprintf("%s a task", common.Plural(p.GPUsPerTask, "GPU")))
	}
	if p.CPUsPerTask > 0 {
		parts = append(parts, fmt.Sprintf("%s a task", common.Plural(p.CPUsPerTask, "CPU")))
	}
	if p.Time != "" {
		parts = append(parts, "time "+p.Time)
	}
	if p.DB != "" {
		parts = append(parts, "sessions into "+p.DB)
	}
	return strings.Join(parts, "; ")
}

// mergeLine is the merge job's state, merged.json's and the session's.
func (m *Model) mergeLine() string {
	s := m.status
	job := "no merge job submitted"
	if s.MergeJob != "" {
		state := s.Merge
		switch {
		case s.MergeUnknown():
			state = "unknown"
		case state == "":
			state = "not known to squeue or sacct"
		}
		job = fmt.Sprintf("job %s: %s", s.MergeJob, state)
	}
	out := job + "; merged.json " + map[bool]string{true: "written", false: "not yet"}[s.Merged]
	if s.Saved != nil && len(s.Saved.Sessions) > 0 {
		out += fmt.Sprintf("; saved as %s in %s", store.IDList(s.Saved.Sessions), s.Saved.DB)
		if _, why := m.merged(); why == "" {
			out += " (enter opens it)"
		}
	}
	return out
}

// phaseStyle colours a task's state by its phase (the words say it
// without colour).
func (m *Model) phaseStyle(p cluster.Phase) lipgloss.Style {
	t := m.ctx.Theme
	switch p {
	case cluster.Done:
		return t.OK
	case cluster.Running:
		return t.Title
	case cluster.Failed:
		return t.Error
	case cluster.Missing, cluster.Unknown:
		return t.Warning
	}
	return t.Subtle
}

// rows is how many task rows the table shows.
func (m *Model) rows() int {
	if m.status == nil {
		return 0
	}
	w, h := max(m.w-2, 1), max(m.h-2, 1)
	head, foot := m.frame(w, h)
	return max(h-len(head)-len(foot)-1, 1)
}

// table is the tasks' table in at most h lines, scrolled to m.offset.
func (m *Model) table(w, h int) []string {
	t := m.ctx.Theme
	tasks := m.status.Tasks
	if h < 2 || len(tasks) == 0 {
		return nil
	}
	n := h - 1
	m.offset = max(min(m.offset, len(tasks)-n), 0)
	cells := make([][5]string, len(tasks))
	wid := [5]int{4, 3, 5, 5, 4} // TASK JOB STATE SHARD SIZE
	for i := range tasks {
		tk := &tasks[i]
		state := orDash(tk.State)
		if tk.Unknown && tk.State == "" {
			state = "unknown"
		}
		c := [5]string{fmt.Sprint(tk.Index), orDash(tk.Job), state, "missing", ""}
		switch tk.Phase() {
		case cluster.Done:
			c[3], c[4] = filepath.Base(tk.Shard), size(tk.Size)
		case cluster.Running, cluster.Pending:
			c[3] = "(computing)"
		}
		for j := range c {
			wid[j] = max(wid[j], len(c[j]))
		}
		cells[i] = c
	}
	row := func(c [5]string, state lipgloss.Style) string {
		return fmt.Sprintf("%*s  %-*s  ", wid[0], c[0], wid[1], c[1]) + state.Render(fmt.Sprintf("%-*s", wid[2], c[2])) +
			fmt.Sprintf("  %-*s  %*s", wid[3], c[3], wid[4], c[4])
	}
	head := t.Header.Render(row([5]string{"TASK", "JOB", "STATE", "SHARD", "SIZE"}, t.Header))
	if m.offset > 0 {
		head += t.Subtle.Render(fmt.Sprintf("  %s %d more", t.Up, m.offset))
	}
	lines := []string{t.Truncate(head, w)}
	end := min(m.offset+n, len(tasks))
	for i := m.offset; i < end; i++ {
		l := row(cells[i], m.phaseStyle(tasks[i].Phase()))
		if i == end-1 && end < len(tasks) {
			l += t.Subtle.Render(fmt.Sprintf("  %s %d more", t.Down, len(tasks)-end))
		}
		lines = append(lines, t.Truncate(l, w))
	}
	return lines
}

// footer is what a key did or asks, then when the folder was read.
func (m *Model) footer(w int) []string {
	t := m.ctx.Theme
	var lines []string
	add := func(st lipgloss.Style, s string) {
		for _, l := range t.Wrap(s, w) {
			lines = append(lines, st.Render(l))
		}
	}
	switch {
	case m.asking:
		add(t.Warning, m.question()+" y submits, any other key cancels")
	case m.submitting:
		add(t.Subtle, "submitting"+t.Ellipsis)
	case m.resultErr != nil:
		add(t.Error, m.resultErr.Error())
	case m.result != "":
		add(t.OK, m.result)
	}
	when := "refreshing" + t.Ellipsis
	if !m.loading && !m.at.IsZero() {
		when = "read at " + m.at.Local().Format("15:04:05")
		if m.ctx.Deterministic {
			when = "read at -"
		}
	}
	add(t.Subtle, fmt.Sprintf("%s; again every %ds while shown (r: now)", when, int(Every.Seconds())))
	return lines
}

// question is what a y would submit.
func (m *Model) question() string {
	switch {
	case m.state == nil:
		return "resubmit the failed or missing tasks of " + m.Dir() + "?"
	case len(m.state.ArrayJobs) == 0 && len(m.confirm) == m.state.Plan.Shards:
		return fmt.Sprintf("submit the array (%s) and its merge job? (never submitted)", common.Plural(m.state.Plan.Shards, "task"))
	case len(m.state.ArrayJobs) == 0 && len(m.confirm) > 0:
		return fmt.Sprintf("submit %s %s (their shards are missing; the others are there) and a merge job that waits for them? (never submitted)",
			map[bool]string{true: "task", false: "tasks"}[len(m.confirm) == 1], list(m.confirm))
	case len(m.state.ArrayJobs) == 0:
		return "every shard is there but nothing merged: submit the merge job? (never submitted)"
	case len(m.confirm) == 0:
		return "every shard is there but nothing merged: submit the merge job again?"
	}
	return fmt.Sprintf("resubmit %s %s (failed or missing) and a merge job that waits for them?",
		map[bool]string{true: "task", false: "tasks"}[len(m.confirm) == 1], list(m.confirm))
}

// list is xs as "1, 4, 5": a long list of tasks wraps between them.
func list(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// size is n bytes for display, in decimal units.
func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}
