package serve

import (
	"io"

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
