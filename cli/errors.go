package cli

import (
	"errors"
	"fmt"
	"strings"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// phrase words an error for the command line: each study field the
// engine names (an *engine.FieldError, "hma3 \"5:10\": ...") reads as the
// flag that sets it ("--hma3 \"5:10\": ..."), and the sessions store's
// typed errors get the command or flag that helps. Only the front end
// phrases; the library's errors stay neutral.
func phrase(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, fe := range engine.FieldErrors(err) {
		msg = strings.Replace(msg, fe.Error(), flagText(fe), 1)
	}
	var (
		dbErr  *sessions.DBError
		runErr *sessions.RunningError
		digErr *sessions.DigestError
		batErr *sessions.BatchError
		recErr *sessions.RecordError
	)
	switch {
	case errors.As(err, &dbErr):
		msg += "; --db FILE uses another database"
	case errors.As(err, &runErr) && !runErr.Checked:
		msg += " (--force)"
	case errors.As(err, &digErr):
		msg += fmt.Sprintf(" (sweepbench sessions rm %d removes the session; run the study again to compute it anew)", digErr.ID)
	case errors.As(err, &batErr):
		msg += fmt.Sprintf(" (sweepbench sessions rm %d removes the session; run the study again to compute it anew)", batErr.ID)
	case errors.As(err, &recErr) && !recErr.Newer:
		msg += fmt.Sprintf(" (sweepbench sessions rm %d removes the session; run the study again to compute it anew)", recErr.ID)
	case errors.Is(err, sessions.ErrNotFound):
		msg += " (sweepbench sessions ls lists them)"
	case errors.Is(err, sessions.ErrComplete):
		msg += " (sweepbench sessions show prints it)"
	}
	return msg
}

// flagText is one field error as the flag's: --NAME VALUE: reason.
// The formulation's field keeps its old name, wma (Spec's JSON key); the
// flag that sets it is --formulation (--wma its alias).
func flagText(fe *engine.FieldError) string {
	flag := "--" + fe.Field
	if fe.Field == engine.FieldWMA {
		flag = "--formulation"
	}
	if fe.Value == "" {
		return flag + ": " + fe.Err.Error()
	}
	return flag + " " + fe.Shown() + ": " + fe.Err.Error()
}

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func (e *exitError) Unwrap() error { return e.err }
