package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/muesli/termenv"
	gossh "golang.org/x/crypto/ssh"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/tui"
)

// Config configures a Server.
type Config struct {
	// AuthorizedKeys is the authorized_keys file (AuthorizedKeys).
	AuthorizedKeys string
	// DataDir holds the users' sessions (users/NAME/sessions.db) and, by
	// default, the host key.
	DataDir string
	// HostKey is the host key file ("": DataDir/host_ed25519), created
	// on first start (HostKey).
	HostKey string
	// MaxSessions is the most workbench sessions open at once (0: no
	// limit); one more is told the server is full.
	MaxSessions int
	// IdleTimeout closes a connection with no traffic for that long (0:
	// never). A study computing sends progress, so it is not idle.
	IdleTimeout time.Duration
	// LoginGraceTime closes a connection that has not authenticated that
	// long after it opened (OpenSSH's LoginGraceTime; 0: a minute).
	LoginGraceTime time.Duration
	// MaxStartups is the most connections not yet authenticated at once
	// (OpenSSH's MaxStartups; 0: 30); one more is closed at once.
	MaxStartups int
	// StopGrace is how long Serve, once stopping, waits for a workbench
	// to end before it stops without it (0: 5s); a study's final state has
	// up to 30 s more to be recorded.
	StopGrace time.Duration
	// TeamView lets a user read another's sessions, read only, by
	// connecting with that user's name as the login name.
	TeamView bool
	// DataRoots are the folders users may read datasets from (DataRoots;
	// none: the embedded datasets only).
	DataRoots []string
	// Limits bound the queue (Queue).
	Limits Limits
	// Registry is the server's backends (main wires them).
	Registry *engine.Registry
	// Flags prefill each connection's form.
	Flags tui.Flags
	// Log hears every connection and refusal (nil: slog.Default()).
	Log *slog.Logger
	// Version is the SSH server version string's software part.
	Version string
}

// Server is the workbench served over SSH.
type Server struct {
	cfg    Config
	log    *slog.Logger
	keys   *AuthorizedKeys
	queue  *Queue
	stores *stores
	roots  DataRoots
	srv    *ssh.Server

	// bg bounds the studies, kept ones too: it ends when the server does.
	bg       context.Context
	cancelBG context.CancelCauseFunc

	active  atomic.Int64 // workbench sessions open
	remotes sync.Map     // ssh.Session -> *tui.Remote, while the middleware runs it
	conns   sync.WaitGroup
	kept    sync.WaitGroup // studies computing on after their connection ended

	hold func(ssh.Session) // holdProgram as New found it
}

// holdProgram, when a test sets it before New, runs after each
// workbench's program has returned: a program that does not end.
var holdProgram func(ssh.Session)

// DefaultStopGrace is Config.StopGrace's default.
const DefaultStopGrace = 5 * time.Second

// New checks cfg, reads the authorized keys, reads or creates the host
// key, and prepares the server; Serve runs it. It renders every style in
// true colour, process-wide (each connection's output is then downsampled
// to its terminal's profile): a process that serves does nothing else.
func New(cfg Config) (*Server, error) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	switch {
	case cfg.Registry == nil:
		return nil, &ConfigError{Field: "Registry", Value: "nil", Err: errors.New("no backends")}
	case cfg.DataDir == "":
		return nil, &ConfigError{Field: "DataDir", Value: "", Err: errors.New("a data directory is needed")}
	case cfg.MaxSessions < 0:
		return nil, &ConfigError{Field: "MaxSessions", Value: fmt.Sprint(cfg.MaxSessions), Err: errors.New("must be 0 (no limit) or more")}
	case cfg.IdleTimeout < 0:
		return nil, &ConfigError{Field: "IdleTimeout", Value: cfg.IdleTimeout.String(), Err: errors.New("must be 0 (none) or more")}
	case cfg.StopGrace < 0:
		return nil, &ConfigError{Field: "StopGrace", Value: cfg.StopGrace.String(), Err: errors.New("must be 0 (the default, 5s) or more")}
	case cfg.LoginGraceTime < 0:
		return nil, &ConfigError{Field: "LoginGraceTime", Value: cfg.LoginGraceTime.String(), Err: errors.New("must be 0 (the default, a minute) or more")}
	case cfg.MaxStartups < 0:
		return nil, &ConfigError{Field: "MaxStartups", Value: fmt.Sprint(cfg.MaxStartups), Err: errors.New("must be 0 (the default, 30) or more")}
	case cfg.Limits.Concurrent < 0 || cfg.Limits.PerUser < 0 || cfg.Limits.MaxCombos < 0:
		return nil, &ConfigError{Field: "Limits", Value: fmt.Sprintf("%+v", cfg.Limits), Err: errors.New("limits must be 0 (none) or more")}
	}
	roots, err := NewDataRoots(cfg.DataRoots)
	if err != nil {
		return nil, err
	}
	if cfg.Flags.DataGiven {
		if err := roots.Allow(cfg.Flags.Data); err != nil {
			return nil, &ConfigError{Field: "Flags.Data", Value: cfg.Flags.Data, Err: err}
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, &ConfigError{Field: "DataDir", Value: cfg.DataDir, Err: err}
	}
	keys, err := LoadAuthorizedKeys(cfg.AuthorizedKeys, log)
	if err != nil {
		return nil, err
	}
	if cfg.HostKey == "" {
		cfg.HostKey = filepath.Join(cfg.DataDir, "host_ed25519")
	}
	if cfg.StopGrace == 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.LoginGraceTime == 0 {
		cfg.LoginGraceTime = DefaultLoginGraceTime
	}
	if cfg.MaxStartups == 0 {
		cfg.MaxStartups = DefaultMaxStartups
	}
	signer, created, err := HostKey(cfg.HostKey)
	if err != nil {
		return nil, err
	}
	if created {
		log.Info("host key created", "path", cfg.HostKey, "fingerprint", gossh.FingerprintSHA256(signer.PublicKey()))
	}
	s := &Server{cfg: cfg, log: log, keys: keys, queue: NewQueue(cfg.Limits), stores: newStores(cfg.DataDir), roots: roots, hold: holdProgram}
	s.bg, s.cancelBG = context.WithCancelCause(context.Background())

	version := "sweepbench"
	if cfg.Version != "" {
		version += "_" + cfg.Version
	}
	// The host key goes to NewServer: without one, wish generates
	// ./id_ed25519 (and chmods the working directory 0700).
	srv, err := wish.NewServer(
		func(srv *ssh.Server) error { srv.AddHostKey(signer); return nil },
		wish.WithVersion(version),
		wish.WithPublicKeyAuth(s.publicKey),
		wish.WithIdleTimeout(cfg.IdleTimeout),
		wish.WithMiddleware(
			bm.MiddlewareWithProgramHandler(s.program, termenv.Ascii),
			s.gateway,
		),
	)
	if err != nil {
		return nil, err
	}
	login := &loginGate{grace: cfg.LoginGraceTime, max: cfg.MaxStartups, log: log}
	srv.ConnCallback = login.conn
	srv.ServerConfigCallback = login.config
	srv.SessionRequestCallback = s.sessionRequest
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{
		"session":                        ssh.DefaultSessionHandler,
		"direct-tcpip":                   s.refuseChannel("port forwarding (ssh -L)"),
		"direct-streamlocal@openssh.com": s.refuseChannel("socket forwarding"),
		"default":                        s.refuseChannel("channel"),
	}
	srv.RequestHandlers = map[string]ssh.RequestHandler{
		"tcpip-forward":                   s.refuseRequest("remote port forwarding (ssh -R)"),
		"streamlocal-forward@openssh.com": s.refuseRequest("remote socket forwarding"),
	}
	srv.ConnectionFailedCallback = func(c net.Conn, err error) {
		log.Warn("connection failed", "addr", c.RemoteAddr().String(), "err", err)
	}
	s.srv = srv
	// Styles render in true colour; profileWriter fits them to each client.
	lipgloss.SetColorProfile(termenv.TrueColor)
	lipgloss.SetHasDarkBackground(true)
	return s, nil
}

// Queue is the server's study queue.
func (s *Server) Queue() *Queue { return s.queue }

// CacheFolder is the folder of DataDir that holds the parsed-dataset
// cache (data.CacheDir) while Serve runs.
const CacheFolder = "cache"

// Serve accepts connections on ln until ctx ends, then stops: the studies
// still computing (kept ones too) are interrupted with ctx's cause (a
// SIGTERM's engine.Interrupted marks their sessions resumable), every
// connection is closed, and Serve waits up to 30 s for the studies to
// record their final state before the databases close. A workbench whose
// program has not ended StopGrace after the stop is not waited for.
// While it runs, the process's parsed-dataset cache is DataDir/CacheFolder.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// The parsed-dataset cache of every load the users' workbenches do
	// (the form's dataset, the picker's files, a session opened again):
	// DATA-DIR/cache rather than the server user's cache folder, as the
	// server writes nothing outside its data dir (off stays off).
	if data.CacheDir() != "" {
		defer data.SetCacheDir(filepath.Join(s.cfg.DataDir, CacheFolder))()
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()
	s.log.Info("listening", "addr", ln.Addr().String(), "authorized_keys", s.cfg.AuthorizedKeys, "data_dir", s.cfg.DataDir,
		"host_key", s.cfg.HostKey, "data_roots", strings.Join(s.roots, ","), "team_view", s.cfg.TeamView)
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	cause := context.Cause(ctx)
	if cause == nil {
		cause = errors.New("the server stopped")
	}
	s.cancelBG(cause)
	_ = s.srv.Close()
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		s.kept.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.log.Warn("stopped without waiting any longer for studies to record their state")
	}
	s.log.Info("stopped", "cause", cause.Error())
	if errors.Is(err, ssh.ErrServerClosed) || err == nil {
		return nil
	}
	return err
}

// publicKey admits a key of the authorized keys.
func (s *Server) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	if _, ok := s.keys.Lookup(key); ok {
		return true
	}
	s.log.Warn("refused: key not authorized", "login", ctx.User(), "key", gossh.FingerprintSHA256(key), "addr", ctx.RemoteAddr().String())
	return false
}

// connLog is a logger that names the connection.
func (s *Server) connLog(ctx ssh.Context) *slog.Logger {
	fp := ""
	if k, ok := ctx.Value(ssh.ContextKeyPublicKey).(ssh.PublicKey); ok && k != nil {
		fp = gossh.FingerprintSHA256(k)
	}
	user := ""
	if k, ok := ctx.Value(ssh.ContextKeyPublicKey).(ssh.PublicKey); ok && k != nil {
		user, _ = s.keys.Lookup(k)
	}
	return s.log.With("user", user, "login", ctx.User(), "key", fp, "addr", ctx.RemoteAddr().String())
}

// sessionRequest allows the one kind of session served: a shell request
// with a terminal, which opens the workbench. exec, subsystems (sftp) and
// a shell without a terminal are refused and logged.
func (s *Server) sessionRequest(sess ssh.Session, req string) bool {
	log := s.connLog(sess.Context())
	switch req {
	case "shell":
		if _, _, ok := sess.Pty(); ok {
			return true
		}
		log.Warn("refused: a session without a terminal (ssh -T); the workbench needs one (ssh -t)")
	case "exec":
		log.Warn("refused: exec", "command", sess.RawCommand())
	case "subsystem":
		log.Warn("refused: subsystem", "subsystem", sess.Subsystem())
	default:
		log.Warn("refused: session request", "type", req)
	}
	return false
}

func (s *Server) refuseChannel(what string) ssh.ChannelHandler {
	return func(_ *ssh.Server, _ *gossh.ServerConn, ch gossh.NewChannel, ctx ssh.Context) {
		s.connLog(ctx).Warn("refused: "+what, "channel", ch.ChannelType())
		_ = ch.Reject(gossh.Prohibited, "sweepbench serve offers the workbench only: "+what+" is refused")
	}
}

func (s *Server) refuseRequest(what string) ssh.RequestHandler {
	return func(ctx ssh.Context, _ *ssh.Server, req *gossh.Request) (bool, []byte) {
		s.connLog(ctx).Warn("refused: "+what, "request", req.Type)
		return false, nil
	}
}

// program is the bubbletea middleware's program for sess: the one the
// gateway built.
func (s *Server) program(sess ssh.Session) *tea.Program {
	if r, ok := s.remotes.Load(sess); ok {
		return r.(*tui.Remote).Program
	}
	return nil
}

// gateway runs around the bubbletea middleware: it checks the session
// (an authorized key still, a terminal, room on the server), opens the
// user's sessions store and builds their workbench; once the program has
// ended it stops the workbench's study (unless the user kept it), lets the
// store go when that study has ended, and logs the connection.
func (s *Server) gateway(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		s.conns.Add(1)
		defer s.conns.Done()
		start := time.Now()
		log := s.connLog(sess.Context())
		user, ok := "", false
		if k := sess.PublicKey(); k != nil {
			user, ok = s.keys.Lookup(k)
		}
		if !ok {
			log.Warn("refused: key no longer authorized")
			wish.Fatalln(sess, "sweepbench serve: your key is not (or no longer) authorized here")
			return
		}
		if ssh.AgentRequested(sess) {
			log.Warn("refused: agent forwarding (the agent is never forwarded)")
		}
		if _, _, hasPty := sess.Pty(); !hasPty {
			log.Warn("refused: no terminal")
			wish.Fatalln(sess, "sweepbench serve opens the workbench in a terminal: connect with ssh -t")
			return
		}
		// From here on the terminal's size, at the pty request and every
		// window change, is at most what the workbench draws.
		sess = clampSize(sess, log)
		pty, _, _ := sess.Pty()
		if n := s.active.Add(1); s.cfg.MaxSessions > 0 && n > int64(s.cfg.MaxSessions) {
			s.active.Add(-1)
			log.Warn("refused: the server is full", "max_sessions", s.cfg.MaxSessions)
			wish.Fatalln(sess, fmt.Sprintf("sweepbench serve: the server is full (%d sessions); try again later", s.cfg.MaxSessions))
			return
		}
		defer s.active.Add(-1)

		cfg, closeStore, msg := s.workbench(sess, user)
		if msg != "" {
			log.Warn("refused: " + msg)
			wish.Fatalln(sess, "sweepbench serve: "+msg)
			return
		}
		profile, dark := clientColors(sess.Environ(), pty.Term)
		rem, err := tui.NewRemote(sess.Context(), cfg, profile, dark,
			tea.WithInput(sess), tea.WithOutput(newProfileWriter(sess, profile)),
			tea.WithEnvironment(append(sess.Environ(), "TERM="+pty.Term)))
		if err != nil {
			closeStore()
			log.Error("workbench", "err", err)
			wish.Fatalln(sess, "sweepbench serve: "+err.Error())
			return
		}
		log.Info("connected", "term", pty.Term, "size", fmt.Sprintf("%dx%d", pty.Window.Width, pty.Window.Height),
			"colors", profileName(profile), "sessions", cfg.Banner)
		s.remotes.Store(sess, rem)
		if !s.runProgram(next, sess, log) {
			return
		}
		s.remotes.Delete(sess)
		kept := rem.Kept()
		done := rem.Close(30 * time.Second)
		log.Info("connection closed", "duration", time.Since(start).Round(time.Millisecond).String(), "study_kept", kept)
		if !kept {
			<-done
			closeStore()
			return
		}
		s.kept.Add(1)
		go func() {
			defer s.kept.Done()
			<-done
			closeStore()
			log.Info("kept study ended", "since_connect", time.Since(start).Round(time.Millisecond).String())
		}()
	}
}

// runProgram runs the workbench's program (next: the bubbletea
// middleware) on sess and reports whether it ended. Once the server
// stops, the program has StopGrace to end (the connection is closed, the
// middleware quits it); one that has not is logged and left behind (its
// study was interrupted with the server's context): false, and the caller
// must not touch its workbench any more. So whatever a session does, it
// cannot hold a stopping server.
func (s *Server) runProgram(next ssh.Handler, sess ssh.Session, log *slog.Logger) bool {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		next(sess)
		if s.hold != nil {
			s.hold(sess)
		}
	}()
	select {
	case <-ended:
		return true
	case <-s.bg.Done():
	}
	t := time.NewTimer(s.cfg.StopGrace)
	defer t.Stop()
	select {
	case <-ended:
		return true
	case <-t.C:
		log.Warn("stopped without this workbench: it did not end within the stop grace", "stop_grace", s.cfg.StopGrace.String())
		return false
	}
}

// workbench is the workbench configuration for user on sess: their own
// sessions, or (TeamView, the login name another user's) that user's,
// read only. msg is why the session is refused, when it is.
func (s *Server) workbench(sess ssh.Session, user string) (cfg tui.Config, closeStore func(), msg string) {
	cfg = tui.Config{Registry: s.cfg.Registry, Flags: s.cfg.Flags, Gate: s.queue.For(user),
		DataAllowed: s.roots.Allow, DataRoots: s.roots, LoadSession: s.roots.Loader()}
	closeStore = func() {}
	login := sess.User()
	if login != user && s.keys.HasUser(login) {
		if !s.cfg.TeamView {
			return cfg, closeStore, fmt.Sprintf("the sessions of %s are theirs: each user's sessions are kept apart here (connect as %s@ for yours)", login, user)
		}
		ro, err := s.stores.readOnly(login)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return cfg, closeStore, fmt.Sprintf("%s has no sessions yet", login)
		case err != nil:
			return cfg, closeStore, fmt.Sprintf("the sessions of %s cannot be read: %v", login, err)
		}
		cfg.Sessions, cfg.NoSave = ro, true
		cfg.Banner = fmt.Sprintf("team view: %s's sessions, read only; studies here are not saved", login)
		return cfg, func() { _ = ro.Close() }, ""
	}
	cfg.Background = s.bg
	st, release, err := s.stores.acquire(user)
	if err != nil {
		cfg.StoreErr = err
		s.connLog(sess.Context()).Error("sessions store", "err", err)
	} else {
		cfg.Sessions, closeStore = st, release
	}
	cfg.Banner = fmt.Sprintf("signed in as %s: S shows your sessions; studies queue for this server's backends", user)
	return cfg, closeStore, ""
}

func profileName(p termenv.Profile) string {
	switch p {
	case termenv.TrueColor:
		return "truecolor"
	case termenv.ANSI256:
		return "256"
	case termenv.ANSI:
		return "16"
	}
	return "none"
}
