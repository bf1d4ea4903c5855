package serve

import (
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/muesli/termenv"
)

// profileWriter downsamples the workbench's output, rendered in true
// colour, to one client's colour profile (256 colours, 16, none): every
// connection gets its own terminal's colours though lipgloss's renderer is
// process-wide.
type profileWriter struct {
	w colorprofile.Writer
}

func newProfileWriter(w io.Writer, p termenv.Profile) io.Writer {
	cp := colorprofile.TrueColor
	switch p {
	case termenv.ANSI256:
		cp = colorprofile.ANSI256
	case termenv.ANSI:
		cp = colorprofile.ANSI
	case termenv.Ascii:
		cp = colorprofile.ASCII
	}
	return &profileWriter{colorprofile.Writer{Forward: w, Profile: cp}}
}

// Write writes p downsampled; it reports p written whole (what reaches
// the client is shorter when colours are dropped).
func (pw *profileWriter) Write(p []byte) (int, error) {
	if _, err := pw.w.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// clientColors is a client's colour profile and background from the
// environment its SSH client sent (TERM from the pty request; NO_COLOR,
// CLICOLOR_FORCE, COLORTERM and COLORFGBG when the client passes them:
// ssh -o SetEnv=NO_COLOR=1, or SendEnv). Unlike wish's MakeRenderer it
// never queries the terminal: a client that does not answer an OSC 11
// query would leave the connection waiting for its next key press.
// Without COLORFGBG the background is taken to be dark.
func clientColors(environ []string, term string) (termenv.Profile, bool) {
	env := sshEnviron(append(append([]string(nil), environ...), "TERM="+term))
	dark := true
	if fgbg := env.Getenv("COLORFGBG"); fgbg != "" {
		parts := strings.Split(fgbg, ";")
		if bg, err := strconv.Atoi(parts[len(parts)-1]); err == nil {
			dark = bg < 7 || bg == 8
		}
	}
	if term == "" || term == "dumb" {
		return termenv.Ascii, dark
	}
	o := termenv.NewOutput(io.Discard, termenv.WithEnvironment(env), termenv.WithUnsafe())
	return o.EnvColorProfile(), dark
}

// sshEnviron is a client's environment as termenv reads one.
type sshEnviron []string

func (e sshEnviron) Environ() []string { return e }

// Getenv is the last value of k (a later "env" request wins).
func (e sshEnviron) Getenv(k string) string {
	v := ""
	for _, kv := range e {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}
