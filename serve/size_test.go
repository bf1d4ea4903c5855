package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"sweepbench/tui"
)

// screenWidth is the widest line of what buf holds from offset on: each
// line from its last carriage return or cursor home on, its escape
// sequences left out.
func screenWidth(buf *syncBuffer, offset int) int {
	s := buf.String()
	if offset > len(s) {
		return 0
	}
	w := 0
	for _, l := range strings.Split(strings.ReplaceAll(s[offset:], "\x1b[H", "\r"), "\n") {
		l = strings.TrimRight(l, "\r")
		l = l[strings.LastIndex(l, "\r")+1:]
		w = max(w, ansi.StringWidth(ansi.Strip(l)))
	}
	return w
}

// waitWidth waits up to d for the workbench's screen, from offset on, to
// be want columns wide (its frame spans the terminal). The frame of the
// size before may still be arriving after offset (written as the window
// changed, hundreds of KiB at 1000 columns): the screen is then read from
// its last 4 KiB, which hold the new frame's last lines.
func waitWidth(t *testing.T, buf *syncBuffer, offset, want int, d time.Duration) {
	t.Helper()
	got, tail := 0, 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if got = screenWidth(buf, offset); got == want {
			return
		}
		if n := len(buf.String()); n > offset {
			if tail = screenWidth(buf, max(offset, n-4096)); tail == want {
				return
			}
		}
	}
	t.Fatalf("the screen is %d columns wide after %v (its last 4 KiB %d), want %d", got, d, tail, want)
}

// windowChange sends a window-change request of w x h to sess.
func windowChange(t *testing.T, sess *gossh.Session, w, h uint32) {
	t.Helper()
	msg := struct{ W, H, PW, PH uint32 }{w, h, 0, 0}
	if _, err := sess.SendRequest("window-change", false, gossh.Marshal(&msg)); err != nil {
		t.Fatalf("window-change %dx%d: %v", w, h, err)
	}
}

// TestServeClampsTerminalSize: a terminal of 65535x65535 (stock OpenSSH
// sends it after stty rows 65535 cols 65535) is given to the workbench as
// tui.MaxWidth x tui.MaxHeight, at the pty request and at every window
// change (2^32-1, 100000x3), and logged as clamped once; a size within the
// bounds reaches the workbench as it is.
func TestServeClampsTerminalSize(t *testing.T) {
	if tui.MaxWidth != 1000 || tui.MaxHeight != 500 {
		t.Fatalf("tui.MaxWidth x tui.MaxHeight = %dx%d, want 1000x500", tui.MaxWidth, tui.MaxHeight)
	}
	ts := startServer(t, nil)
	c := ts.client(t, "alice", "alice")
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	w := &workbench{sess: sess, out: &syncBuffer{}, stderr: &syncBuffer{}}
	sess.Stdout, sess.Stderr = w.out, w.stderr
	if w.in, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 65535, 65535, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitText(t, "alice's screen", w.out, `signed in as alice`, 20*time.Second)
	waitText(t, "the log", ts.log, `msg="terminal size clamped" user=alice .* requested=65535x65535 size=1000x500`, 5*time.Second)
	waitText(t, "the log", ts.log, `msg=connected user=alice .* size=1000x500`, 5*time.Second)
	waitWidth(t, w.out, 0, 1000, 10*time.Second)

	// A size within the bounds: as it is.
	off := len(w.out.String())
	windowChange(t, sess, 120, 40)
	waitWidth(t, w.out, off, 120, 10*time.Second)
	// Larger ones: clamped, whichever side is over.
	for _, sz := range [][2]uint32{{1<<32 - 1, 1<<32 - 1}, {100000, 3}, {65535, 65535}} {
		off = len(w.out.String())
		windowChange(t, sess, sz[0], sz[1])
		waitWidth(t, w.out, off, 1000, 10*time.Second)
		off = len(w.out.String())
		windowChange(t, sess, 90, 30)
		waitWidth(t, w.out, off, 90, 10*time.Second)
	}
	if n := strings.Count(ts.log.String(), "terminal size clamped"); n != 1 {
		t.Errorf("the clamp is logged %d times, want once a connection", n)
	}
	w.quit(t)
}

// TestServeStopsWithSessionsOpen: Serve returns within StopGrace and a
// few seconds of being stopped with a workbench open on a 65535x65535
// terminal whose program does not end (held by a test hook): it is logged
// and left behind.
func TestServeStopsWithSessionsOpen(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	holdProgram = func(ssh.Session) { <-release }
	defer func() { holdProgram = nil }()
	ts := startServer(t, func(c *Config) { c.StopGrace = time.Second })

	c := ts.client(t, "alice", "alice")
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	sess.Stdout = out
	if err := sess.RequestPty("xterm", 65535, 65535, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitText(t, "alice's screen", out, `signed in as alice`, 20*time.Second)
	start := time.Now()
	returned, err := ts.stop(11 * time.Second)
	if !returned {
		t.Fatalf("Serve had not returned %v after it was stopped with a session open (StopGrace 1s)", time.Since(start).Round(time.Millisecond))
	}
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	waitText(t, "the log", ts.log, `msg="stopped without this workbench: it did not end within the stop grace" user=alice .* stop_grace=1s`, time.Second)
}
