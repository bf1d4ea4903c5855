package serve

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

func newKey(t *testing.T) (gossh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey())))
}

func TestKeyUser(t *testing.T) {
	s, _ := newKey(t)
	k := s.PublicKey()
	sum := "key-" // then 12 hex digits of the key's SHA-256
	for _, c := range []struct{ name, comment, want string }{
		{"user at host", "alice@laptop", "alice"},
		{"bare name", "bob", "bob"},
		{"first word", "carol.k work key", "carol.k"},
		{"no comment", "", sum},
		{"path traversal", "../root@x", sum},
		{"dot first", ".hidden", sum},
		{"slash", "a/b", sum},
		{"too long", strings.Repeat("a", 65), sum},
		{"control character", "al\x1bice", sum},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := KeyUser(k, c.comment)
			if c.want == sum {
				if !strings.HasPrefix(got, "key-") || len(got) != 16 || strings.Trim(got[4:], "0123456789abcdef") != "" {
					t.Fatalf("KeyUser(%q) = %q, want key- and 12 hex digits", c.comment, got)
				}
				if again := KeyUser(k, "other@x y"); again == got {
					t.Fatalf("a fingerprint name %q equals a comment's", got)
				}
				return
			}
			if got != c.want {
				t.Fatalf("KeyUser(%q) = %q, want %q", c.comment, got, c.want)
			}
		})
	}
}

// TestAuthorizedKeysReread: a key added to the file is let in at the next
// lookup, a key removed is not, a bad line is left out (and logged) while
// the others count, and a file that has gone lets nobody in until it is
// back.
func TestAuthorizedKeysReread(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "authorized_keys")
	alice, aliceLine := newKey(t)
	bob, bobLine := newKey(t)
	write := func(lines ...string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// A modification time unlike the last one's, whatever the file
		// system's resolution.
		now := time.Now().Add(time.Duration(len(strings.Join(lines, ""))) * time.Second)
		if err := os.Chtimes(path, now, now); err != nil {
			t.Fatal(err)
		}
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	write("# the team", aliceLine+" alice@laptop")
	a, err := LoadAuthorizedKeys(path, log)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(s gossh.Signer) string {
		u, ok := a.Lookup(s.PublicKey())
		if !ok {
			return "-"
		}
		return u
	}
	if got := lookup(alice) + " " + lookup(bob); got != "alice -" {
		t.Fatalf("at start: %q, want alice in, bob out", got)
	}
	write(aliceLine+" alice@laptop", "ssh-ed25519 not-base64!", bobLine+" bob@desk")
	if got := lookup(alice) + " " + lookup(bob); got != "alice bob" {
		t.Fatalf("bob added: %q, want both in", got)
	}
	if !strings.Contains(logged.String(), `line left out" path=`+path+" line=2") {
		t.Errorf("the bad line 2 is not logged:\n%s", logged.String())
	}
	if !a.HasUser("bob") || a.HasUser("eve") {
		t.Error("HasUser: want bob, not eve")
	}
	write(`from="10.0.0.0/8" ` + bobLine + " bob@desk")
	if got := lookup(alice) + " " + lookup(bob); got != "- -" {
		t.Fatalf("alice removed, bob restricted by from=: %q, want nobody in", got)
	}
	if !strings.Contains(logged.String(), "option from is not enforced") {
		t.Errorf("the from= key is not logged as left out:\n%s", logged.String())
	}
	write(aliceLine + " alice@laptop")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := lookup(alice); got != "-" {
		t.Fatalf("file removed: %q, want nobody in", got)
	}
	write(aliceLine + " alice@laptop")
	if got := lookup(alice); got != "alice" {
		t.Fatalf("file back: %q, want alice in", got)
	}
}

// TestLoadAuthorizedKeysErrors: at start a bad line is an error naming the
// line, and so is a file with no key.
func TestLoadAuthorizedKeysErrors(t *testing.T) {
	dir := t.TempDir()
	_, line := newKey(t)
	for _, c := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"bad key", line + " a\n\nssh-rsa AAAA broken\n", 3, "line 3"},
		{"only a key with an unsupported option", "# x\n" + `expiry-time="20300101" ` + line + "\n", 0, "no keys: nobody could connect"},
		{"no keys", "# nobody yet\n", 0, "no keys: nobody could connect"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.WriteFile(p, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadAuthorizedKeys(p, nil)
			var ke *KeysError
			if !errors.As(err, &ke) || ke.Line != c.line || ke.Path != p || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want a KeysError at line %d saying %q", err, c.line, c.msg)
			}
		})
	}
	_, err := LoadAuthorizedKeys(filepath.Join(dir, "missing"), nil)
	var ke *KeysError
	if !errors.As(err, &ke) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: got %v, want a KeysError wrapping ErrNotExist", err)
	}
}

// TestLoadAuthorizedKeysSkipsUnsupported: at start, as on a re-read, a key
// with an option serve does not enforce (from=, expiry-time=, ...) is left
// out and its line logged; the server starts with the other keys.
func TestLoadAuthorizedKeysSkipsUnsupported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authorized_keys")
	alice, aliceLine := newKey(t)
	bob, bobLine := newKey(t)
	text := "# the team\n" + `from="10.0.0.0/8" ` + bobLine + " bob@desk\n" + aliceLine + " alice@laptop\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	a, err := LoadAuthorizedKeys(path, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatalf("a from= key stopped the start: %v", err)
	}
	if u, ok := a.Lookup(alice.PublicKey()); !ok || u != "alice" {
		t.Errorf("alice: %q %v, want in", u, ok)
	}
	if u, ok := a.Lookup(bob.PublicKey()); ok {
		t.Errorf("bob's from= key: let in as %q, want left out", u)
	}
	if a.HasUser("bob") {
		t.Error("HasUser(bob): true, want false (his only key is left out)")
	}
	if want := `line left out" path=` + path + ` line=2 err="option from is not enforced`; !strings.Contains(logged.String(), want) {
		t.Errorf("the log does not say %s:\n%s", want, logged.String())
	}
}
