package common

import "strings"

// Status is the status line's message part: an error, a warning or a
// note, and where the last run was saved. The root model owns it; a
// screen changes it by handing the root a message below (Host.Do, at
// once) and reads it through Host.Status.
type Status struct {
	LastErr string // the last error, on one line; "" when none
	// Warn is a warning for the status line, shown when there is no
	// error: something went wrong that the user should know of but that
	// did not stop the work (a run that could not be saved).
	Warn string
	// Saved says where the last run was saved ("session 3"), or "".
	Saved string
	// Info is a note for the status line (what a resume did), shown when
	// there is neither an error nor a warning.
	Info string
	// StartErr is a bad flag found at start: it stays on the status line
	// until a run (the form shows a valid value instead).
	StartErr string
}

// SetErr puts err on the status line (on one line), or clears it.
func (s *Status) SetErr(err error) {
	if err == nil {
		s.LastErr = ""
		return
	}
	s.LastErr = strings.ReplaceAll(err.Error(), "\n", " ")
}

// Apply makes the change msg asks for (one of the messages below) and
// reports whether msg was one.
func (s *Status) Apply(msg any) bool {
	switch msg := msg.(type) {
	case ErrMsg:
		s.SetErr(msg.Err)
	case StartErrMsg:
		s.SetErr(msg.Err)
		s.StartErr = s.LastErr
	case InfoMsg:
		s.Info = msg.Text
	case WarnMsg:
		s.Warn = msg.Text
	case SavedMsg:
		s.Saved = msg.Text
	default:
		return false
	}
	return true
}

// Messages that change the status line (Status.Apply).
type (
	// ErrMsg puts Err on the status line; a nil Err clears the error.
	ErrMsg struct{ Err error }
	// StartErrMsg puts Err on the status line as a bad flag found at
	// start, which stays until a run.
	StartErrMsg struct{ Err error }
	// InfoMsg makes Text the status line's note ("" clears it).
	InfoMsg struct{ Text string }
	// WarnMsg makes Text the status line's warning ("" clears it).
	WarnMsg struct{ Text string }
	// SavedMsg says where the last run was saved ("" : not saved).
	SavedMsg struct{ Text string }
)
