// Package earlyinit keeps the program from asking the terminal anything
// as it starts. Bubble Tea's package init asks Lip Gloss whether the
// terminal's background is dark, and Lip Gloss's default renderer then
// queries the terminal on stdout (OSC 11 ?, then CSI 6 n as a fence) and
// waits for the answer: every command, `sessions ls` and `run` included,
// wrote those queries into the user's terminal (and, where nothing
// answers, waited for the time-out). This package's init runs before
// Bubble Tea's and says the background is dark, so that nothing asks: a
// command of the command line prints and asks nothing. The workbench
// (tui.Run) asks on purpose, once, through a renderer of its own, before
// its program owns the terminal.
//
// It is a module of its own for its import path: packages initialise in
// the order of their import paths among those whose imports are
// initialised (the Go specification), so a package of the sweepbench
// module ("sweepbench/...") would run after github.com/charmbracelet/
// bubbletea; "earlyinit" runs right after Lip Gloss, before it. main
// imports it (go.mod replaces it with this folder).
package earlyinit

import "github.com/charmbracelet/lipgloss"

func init() { lipgloss.SetHasDarkBackground(true) }
