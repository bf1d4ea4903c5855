package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/sessions"
	"sweepbench/tui"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitText waits up to d for re in what buf holds.
func waitText(t *testing.T, what string, buf *syncBuffer, re string, d time.Duration) {
	t.Helper()
	rx := regexp.MustCompile(re)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if rx.MatchString(buf.String()) {
			return
		}
	}
	t.Fatalf("timed out after %v waiting for /%s/ in %s:\n%s", d, re, what, buf.String())
}

type testServer struct {
	addr    string
	log     *syncBuffer
	keys    map[string]gossh.Signer
	hostKey gossh.PublicKey
	dataDir string
	srv     *Server
	// stop ends Serve and reports whether it returned within d (and its
	// error); the test's end calls it too (once is enough).
	stop func(d time.Duration) (returned bool, err error)
}

// startServer serves on a free loopback port with alice and bob
// authorized (eve is not) until the test ends.
func startServer(t *testing.T, tweak func(*Config)) *testServer {
	t.Helper()
	ts := &testServer{log: &syncBuffer{}, keys: map[string]gossh.Signer{}, dataDir: t.TempDir()}
	var lines []string
	for _, u := range []string{"alice", "bob", "eve"} {
		s, line := newKey(t)
		ts.keys[u] = s
		if u != "eve" {
			lines = append(lines, line+" "+u+"@test")
		}
	}
	ak := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(ak, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := &engine.Registry{}
	reg.Register(reference.New())
	cfg := Config{AuthorizedKeys: ak, DataDir: ts.dataDir, Registry: reg, Flags: tui.DefaultFlags(),
		Log: slog.New(slog.NewTextHandler(ts.log, nil)), MaxSessions: 8}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hk, _, err := HostKey(filepath.Join(ts.dataDir, "host_ed25519"))
	if err != nil {
		t.Fatal(err)
	}
	ts.hostKey = hk.PublicKey()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var (
		once     sync.Once
		returned bool
		serveErr error
		stopped  = make(chan struct{})
	)
	ts.srv = srv
	ts.stop = func(d time.Duration) (bool, error) {
		once.Do(func() {
			defer close(stopped)
			cancel()
			select {
			case serveErr = <-done:
				returned = true
			case <-time.After(d):
			}
		})
		<-stopped
		return returned, serveErr
	}
	t.Cleanup(func() {
		if ok, err := ts.stop(40 * time.Second); !ok {
			t.Error("Serve did not return")
		} else if err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// dial connects as login with auth.
func (ts *testServer) dial(login string, auth ...gossh.AuthMethod) (*gossh.Client, error) {
	return gossh.Dial("tcp", ts.addr, &gossh.ClientConfig{User: login, Auth: auth,
		HostKeyCallback: gossh.FixedHostKey(ts.hostKey), Timeout: 10 * time.Second})
}

func (ts *testServer) client(t *testing.T, key, login string) *gossh.Client {
	t.Helper()
	c, err := ts.dial(login, gossh.PublicKeys(ts.keys[key]))
	if err != nil {
		t.Fatalf("%s as %s: %v", key, login, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// workbench is a session with a terminal: its screen output and input.
type workbench struct {
	sess   *gossh.Session
	out    *syncBuffer
	stderr *syncBuffer
	in     io.WriteCloser
}

func openWorkbench(t *testing.T, c *gossh.Client, env map[string]string) *workbench {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		if err := sess.Setenv(k, v); err != nil {
			t.Fatalf("setenv %s: %v", k, err)
		}
	}
	w := &workbench{sess: sess, out: &syncBuffer{}, stderr: &syncBuffer{}}
	sess.Stdout, sess.Stderr = w.out, w.stderr
	if w.in, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return w
}

// quit sends ctrl+c and waits for the session to end.
func (w *workbench) quit(t *testing.T) {
	t.Helper()
	_, _ = w.in.Write([]byte{3})
	done := make(chan error, 1)
	go func() { done <- w.sess.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the workbench did not end on ctrl+c")
	}
}

// TestServeRefusals: eve's key, a password, exec, a subsystem (sftp), a
// shell without a terminal, port forwarding both ways are refused, each
// logged with the connection; agent forwarding is logged and never served.
func TestServeRefusals(t *testing.T) {
	ts := startServer(t, nil)
	if _, err := ts.dial("eve", gossh.PublicKeys(ts.keys["eve"])); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("eve's key: %v, want unable to authenticate", err)
	}
	waitText(t, "the log", ts.log, `refused: key not authorized" login=eve key=SHA256:`, 5*time.Second)
	// The server offers public keys only: a password is never tried.
	_, err := ts.dial("alice", gossh.Password("secret"),
		gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return []string{"secret"}, nil }))
	if err == nil || !strings.Contains(err.Error(), "attempted methods [none]") {
		t.Fatalf("password: %v, want no method but none attempted", err)
	}

	c := ts.client(t, "alice", "alice")
	sess, _ := c.NewSession()
	if out, err := sess.CombinedOutput("echo pwned"); err == nil || strings.Contains(string(out), "pwned") {
		t.Fatalf("exec: %q, %v: want refused", out, err)
	}
	waitText(t, "the log", ts.log, `refused: exec" user=alice login=alice key=SHA256:\S+ addr=127\.0\.0\.1:\d+ command="echo pwned"`, 5*time.Second)
	sess, _ = c.NewSession()
	if err := sess.RequestSubsystem("sftp"); err == nil {
		t.Fatal("sftp: accepted")
	}
	waitText(t, "the log", ts.log, `refused: subsystem" user=alice .* subsystem=sftp`, 5*time.Second)
	sess, _ = c.NewSession()
	if err := sess.Shell(); err == nil {
		t.Fatal("a shell without a terminal: accepted")
	}
	waitText(t, "the log", ts.log, `refused: a session without a terminal`, 5*time.Second)
	if conn, err := c.Dial("tcp", ts.addr); err == nil || !strings.Contains(err.Error(), "administratively prohibited") {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("direct-tcpip (ssh -L): %v, want prohibited", err)
	}
	waitText(t, "the log", ts.log, `refused: port forwarding \(ssh -L\)" user=alice .* channel=direct-tcpip`, 5*time.Second)
	if ln, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Fatal("tcpip-forward (ssh -R): accepted")
	}
	waitText(t, "the log", ts.log, `refused: remote port forwarding \(ssh -R\)" user=alice .* request=tcpip-forward`, 5*time.Second)

	sess, _ = c.NewSession()
	if ok, err := sess.SendRequest("auth-agent-req@openssh.com", true, nil); err != nil {
		t.Fatalf("agent request: ok %v, %v", ok, err)
	}
	w := &workbench{sess: sess, out: &syncBuffer{}, stderr: &syncBuffer{}}
	sess.Stdout, sess.Stderr = w.out, w.stderr
	w.in, _ = sess.StdinPipe()
	if err := sess.RequestPty("xterm", 24, 80, nil); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitText(t, "the log", ts.log, `refused: agent forwarding .* user=alice`, 10*time.Second)
	// Nothing ever opened an agent channel to the client: gossh would have
	// to accept one with agent.ForwardToAgent, which this client never set up.
	w.quit(t)
}

// TestServeWorkbench: two users at once, each in their own workbench and
// their own sessions database; the session limit; another user's
// sessions refused without the team view; the client's colour profile.
func TestServeWorkbench(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSessions = 2 })
	a := openWorkbench(t, ts.client(t, "alice", "alice"), nil)
	waitText(t, "alice's screen", a.out, `signed in as alice: S shows your sessions`, 20*time.Second)
	b := openWorkbench(t, ts.client(t, "bob", "bob"), map[string]string{"NO_COLOR": "1"})
	waitText(t, "bob's screen", b.out, `signed in as bob: S shows your sessions`, 20*time.Second)
	for _, u := range []string{"alice", "bob"} {
		if _, err := os.Stat(filepath.Join(ts.dataDir, "users", u, "sessions.db")); err != nil {
			t.Errorf("%s's sessions database: %v", u, err)
		}
	}
	waitText(t, "the log", ts.log, `msg=connected user=alice login=alice key=SHA256:\S+ addr=127\.0\.0\.1:\d+ term=xterm-256color size=100x30 colors=256`, 5*time.Second)
	waitText(t, "the log", ts.log, `msg=connected user=bob .* colors=none`, 5*time.Second)
	// alice's terminal has 256 colours: true-colour styles come down to
	// 256; bob's NO_COLOR screen has no colour at all and is ASCII.
	if s := a.out.String(); !strings.Contains(s, "\x1b[38;5;") || strings.Contains(s, "\x1b[38;2;") {
		t.Error("alice's screen is not in 256 colours")
	}
	if s := b.out.String(); strings.Contains(s, "\x1b[38;") || strings.Trim(ansi.Strip(s), "\x00\a\b\t\n\v\f\r !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~") != "" {
		t.Errorf("bob's NO_COLOR screen has colour or non-ASCII text")
	}

	// A third session: the server is full.
	full, _ := ts.client(t, "alice", "alice").NewSession()
	var stderr syncBuffer
	full.Stderr = &stderr
	_ = full.RequestPty("xterm", 24, 80, nil)
	_ = full.Shell()
	var exit *gossh.ExitError
	if err := full.Wait(); !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(stderr.String(), "the server is full (2 sessions)") {
		t.Fatalf("a third session: %v, stderr %q; want exit 1, the server is full", err, stderr.String())
	}
	a.quit(t)
	waitText(t, "the log", ts.log, `msg="connection closed" user=alice login=alice key=SHA256:\S+ addr=127\.0\.0\.1:\d+ duration=\S+ study_kept=false`, 10*time.Second)

	// bob may not open alice's sessions (no team view).
	other, _ := ts.client(t, "bob", "alice").NewSession()
	stderr = syncBuffer{}
	other.Stderr = &stderr
	_ = other.RequestPty("xterm", 24, 80, nil)
	_ = other.Shell()
	if err := other.Wait(); !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(stderr.String(), "the sessions of alice are theirs") {
		t.Fatalf("bob as alice: %v, stderr %q; want refused", err, stderr.String())
	}
	b.quit(t)
}

// TestServeTeamView: with the team view, alice connecting as bob reads
// bob's sessions read only; a login name that is nobody's is her own.
func TestServeTeamView(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.TeamView = true })
	st, err := sessions.Open(filepath.Join(ts.dataDir, "users", "bob", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	w := openWorkbench(t, ts.client(t, "alice", "bob"), nil)
	waitText(t, "alice's screen as bob", w.out, `team view: bob's sessions, read only`, 20*time.Second)
	w.quit(t)
	w = openWorkbench(t, ts.client(t, "alice", "nobody"), nil)
	waitText(t, "alice's screen as nobody", w.out, `signed in as alice`, 20*time.Second)
	w.quit(t)
	if _, err := os.Stat(filepath.Join(ts.dataDir, "users", "nobody")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a login name made a user: %v", err)
	}
}

// TestNewConfigErrors: what New refuses, each as the typed error naming
// the field (the command line words it as its flag).
func TestNewConfigErrors(t *testing.T) {
	_, line := newKey(t)
	ak := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(ak, []byte(line+" alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := &engine.Registry{}
	reg.Register(reference.New())
	base := func() Config {
		return Config{AuthorizedKeys: ak, DataDir: t.TempDir(), Registry: reg, Flags: tui.DefaultFlags(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	for _, c := range []struct {
		name  string
		tweak func(*Config)
		field string
	}{
		{"no registry", func(c *Config) { c.Registry = nil }, "Registry"},
		{"no data dir", func(c *Config) { c.DataDir = "" }, "DataDir"},
		{"negative sessions", func(c *Config) { c.MaxSessions = -1 }, "MaxSessions"},
		{"negative limit", func(c *Config) { c.Limits.PerUser = -1 }, "Limits"},
		{"negative login grace time", func(c *Config) { c.LoginGraceTime = -time.Second }, "LoginGraceTime"},
		{"negative max startups", func(c *Config) { c.MaxStartups = -1 }, "MaxStartups"},
		{"negative stop grace", func(c *Config) { c.StopGrace = -time.Second }, "StopGrace"},
		{"missing data root", func(c *Config) { c.DataRoots = []string{filepath.Join(c.DataDir, "none")} }, "DataRoots"},
		{"--data outside the roots", func(c *Config) { c.Flags.Data, c.Flags.DataGiven = ak, true }, "Flags.Data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := base()
			c.tweak(&cfg)
			_, err := New(cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != c.field {
				t.Fatalf("got %v, want a ConfigError on %s", err, c.field)
			}
		})
	}
	cfg := base()
	cfg.AuthorizedKeys = filepath.Join(t.TempDir(), "missing")
	var ke *KeysError
	if _, err := New(cfg); !errors.As(err, &ke) {
		t.Fatalf("missing authorized keys: %v, want a KeysError", err)
	}
}
