package serve

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/charmbracelet/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Defaults of Config.LoginGraceTime and Config.MaxStartups.
const (
	DefaultLoginGraceTime = time.Minute
	DefaultMaxStartups    = 30
)

// loginGate bounds the connections that have not authenticated yet, as
// sshd's LoginGraceTime and MaxStartups do: each is closed once grace has
// passed without authentication (whether it sent nothing, only its version
// line or keys that fail), and at most max are open at once: one more is
// closed as it arrives.
type loginGate struct {
	grace time.Duration
	max   int
	log   *slog.Logger

	mu      sync.Mutex
	pending int
}

// pendingLogin is one connection not authenticated yet.
type pendingLogin struct {
	gate  *loginGate
	once  sync.Once
	timer *time.Timer
}

type loginKey struct{}

// conn is the server's ssh.ConnCallback: it counts c as unauthenticated
// (nil, which closes it, when max already are) until it authenticates or
// closes, and closes it at the grace time if it has not authenticated.
func (g *loginGate) conn(ctx ssh.Context, c net.Conn) net.Conn {
	g.mu.Lock()
	if g.pending >= g.max {
		g.mu.Unlock()
		g.log.Warn("refused: too many unauthenticated connections", "addr", c.RemoteAddr().String(), "max_startups", g.max)
		return nil
	}
	g.pending++
	g.mu.Unlock()
	p := &pendingLogin{gate: g}
	p.timer = time.AfterFunc(g.grace, func() {
		if p.release() {
			g.log.Warn("refused: not authenticated within the login grace time", "addr", c.RemoteAddr().String(), "login_grace_time", g.grace.String())
			_ = c.Close()
		}
	})
	ctx.SetValue(loginKey{}, p)
	return &pendingConn{Conn: c, p: p}
}

// config is the server's ssh.ServerConfigCallback: the connection of ctx
// is authenticated when an authentication attempt succeeds (a public key
// query does not count: the client has not shown it holds the key).
func (g *loginGate) config(ctx ssh.Context) *gossh.ServerConfig {
	return &gossh.ServerConfig{AuthLogCallback: func(_ gossh.ConnMetadata, _ string, err error) {
		if p, ok := ctx.Value(loginKey{}).(*pendingLogin); ok && err == nil && p.release() {
			p.timer.Stop()
		}
	}}
}

// release takes the connection off the count, once: true the first time.
func (p *pendingLogin) release() bool {
	first := false
	p.once.Do(func() {
		first = true
		p.gate.mu.Lock()
		p.gate.pending--
		p.gate.mu.Unlock()
	})
	return first
}

// pendingConn is a connection that leaves the count when it closes.
type pendingConn struct {
	net.Conn
	p *pendingLogin
}

func (c *pendingConn) Close() error {
	if c.p.release() {
		c.p.timer.Stop()
	}
	return c.Conn.Close()
}
