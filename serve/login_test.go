package serve

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// rawConn opens a TCP connection to ts that says nothing and returns it
// once the server has answered with its version line (it has accepted and
// counted the connection then).
func (ts *testServer) rawConn(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "SSH-2.0-sweepbench") {
		t.Fatalf("no version line from the server: %q, %v", line, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	return c
}

// closedWithin reports whether the server closes c within d (reading
// whatever it sends until then).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			ne, ok := err.(net.Error)
			return !ok || !ne.Timeout()
		}
	}
}

// TestLoginGraceTime: a connection that has not authenticated within
// LoginGraceTime is closed and logged, whether it sent nothing or only its
// version line (OpenSSH's LoginGraceTime); one that authenticated in time
// stays.
func TestLoginGraceTime(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.LoginGraceTime = time.Second })
	silent := ts.rawConn(t)
	banner := ts.rawConn(t)
	if _, err := banner.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")); err != nil {
		t.Fatal(err)
	}
	alice := ts.client(t, "alice", "alice")
	for name, c := range map[string]net.Conn{"silent": silent, "version line only": banner} {
		if !closedWithin(c, 20*time.Second) {
			t.Errorf("%s: still open 20s after a login grace time of 1s", name)
		}
	}
	waitText(t, "the log", ts.log, `refused: not authenticated within the login grace time" addr=127\.0\.0\.1:\d+ login_grace_time=1s`, 5*time.Second)
	// alice authenticated in time: her connection is not closed.
	if _, _, err := alice.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		t.Fatalf("alice's connection, authenticated in time: %v", err)
	}
}

// TestMaxStartups: at most MaxStartups connections may be unauthenticated
// at once; one more is closed at once and logged; an authenticated
// connection does not count, nor one that has gone.
func TestMaxStartups(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxStartups, c.LoginGraceTime = 2, time.Minute })
	first := ts.rawConn(t)
	_ = ts.rawConn(t)
	third, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if !closedWithin(third, 20*time.Second) {
		t.Fatal("a third unauthenticated connection over MaxStartups 2: still open")
	}
	waitText(t, "the log", ts.log, `refused: too many unauthenticated connections" addr=127\.0\.0\.1:\d+ max_startups=2`, 5*time.Second)
	if _, err := ts.dial("alice", gossh.PublicKeys(ts.keys["alice"])); err == nil {
		t.Fatal("alice connected while 2 of 2 unauthenticated connections were open")
	}
	first.Close()
	// The slot is free once the server has seen first go.
	var alice *gossh.Client
	for end := time.Now().Add(20 * time.Second); alice == nil && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		alice, _ = ts.dial("alice", gossh.PublicKeys(ts.keys["alice"]))
	}
	if alice == nil {
		t.Fatal("alice could not connect after an unauthenticated connection went")
	}
	defer alice.Close()
	// alice is authenticated: one more unauthenticated connection fits.
	_ = ts.rawConn(t)
}
