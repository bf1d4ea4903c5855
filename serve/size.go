package serve

import (
	"fmt"
	"log/slog"

	"github.com/charmbracelet/ssh"

	"sweepbench/tui"
)

// clampWindow is w at most tui.MaxWidth x tui.MaxHeight; clamped says
// whether it was larger.
func clampWindow(w ssh.Window) (_ ssh.Window, clamped bool) {
	if w.Width > tui.MaxWidth {
		w.Width, clamped = tui.MaxWidth, true
	}
	if w.Height > tui.MaxHeight {
		w.Height, clamped = tui.MaxHeight, true
	}
	return w, clamped
}

// sizedSession is a session whose terminal is at most tui.MaxWidth x
// tui.MaxHeight, as its pty request and each of its window changes reach
// the workbench (a client may claim 65535x65535, or 2^32-1 in a window
// change, and a screen that large would take gigabytes). Window changes
// that come faster than the workbench takes them are coalesced: it gets
// the latest.
type sizedSession struct {
	ssh.Session
	pty     ssh.Pty
	windows chan ssh.Window
}

func (s *sizedSession) Pty() (ssh.Pty, <-chan ssh.Window, bool) { return s.pty, s.windows, true }

// clampSize is sess as a sizedSession (sess itself without a terminal);
// log hears once when a size was clamped.
func clampSize(sess ssh.Session, log *slog.Logger) ssh.Session {
	pty, changes, ok := sess.Pty()
	if !ok {
		return sess
	}
	logged := false
	clamp := func(w ssh.Window) ssh.Window {
		c, clamped := clampWindow(w)
		if clamped && !logged {
			logged = true
			log.Warn("terminal size clamped", "requested", fmt.Sprintf("%dx%d", w.Width, w.Height),
				"size", fmt.Sprintf("%dx%d", c.Width, c.Height))
		}
		return c
	}
	pty.Window = clamp(pty.Window)
	s := &sizedSession{Session: sess, pty: pty, windows: make(chan ssh.Window, 1)}
	go func() {
		// The library closes changes when the session's requests end.
		for {
			select {
			case w, ok := <-changes:
				if !ok {
					return
				}
				w = clamp(w)
				select {
				case s.windows <- w:
				default: // the workbench has not taken the last one: this one replaces it
					select {
					case <-s.windows:
					default:
					}
					s.windows <- w
				}
			case <-sess.Context().Done():
				return
			}
		}
	}()
	return s
}
