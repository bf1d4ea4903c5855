package setup

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/preflight"
	"sweepbench/tui/common"
)

// The answers of the screen's commands, tagged for it (common.Tag); gen
// is the request they answer.
type (
	loadedMsg struct {
		gen  int
		spec string
		ds   *data.Dataset
		err  error
	}
	estimateTickMsg struct{ gen int }
	estimateMsg     struct {
		gen int
		est preflight.Estimate
		err error
	}
)

func loadCmd(gen int, name string, f engine.Spec) tea.Cmd {
	return common.Guard(func() tea.Msg {
		f.Data = name
		ds, err := f.Open()
		return loadedMsg{gen, name, ds, err}
	}, func(err error) tea.Msg { return loadedMsg{gen, name, nil, err} })
}

func estimateCmd(gen int, s *engine.Study) tea.Cmd {
	return common.Guard(func() tea.Msg {
		e, err := preflight.EstimateStudy(context.Background(), s)
		return estimateMsg{gen, e, err}
	}, func(err error) tea.Msg { return estimateMsg{gen: gen, err: err} })
}
