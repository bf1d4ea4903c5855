package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// addDBFlag gives root the persistent --db flag: the sessions database
// every command that saves or reads sessions uses.
func addDBFlag(root *cobra.Command) {
	root.PersistentFlags().String("db", "", "sessions database file (default $XDG_DATA_HOME/sweepbench/sessions.db, i.e. ~/.local/share/sweepbench/sessions.db on Linux)")
}

// dbPath is --db, or the default path.
func dbPath(cmd *cobra.Command) (string, error) {
	if f := cmd.Flag("db"); f != nil && f.Value.String() != "" {
		return f.Value.String(), nil
	}
	return sessions.DefaultPath()
}

func openStore(cmd *cobra.Command) (*sessions.Store, error) {
	p, err := dbPath(cmd)
	if err != nil {
		return nil, err
	}
	return sessions.Open(p)
}

// openStoreToSave opens the store a command saves its study into, or
// warns on stderr that the study goes on unsaved and returns nil (a
// database that cannot be used never stops a computation). The caller
// closes a store it gets.
func openStoreToSave(cmd *cobra.Command, stderr io.Writer) *sessions.Store {
	st, err := openStore(cmd)
	if err != nil {
		warnNotSaved(stderr, &sessions.SaveError{Stage: sessions.SaveBegin, Err: err})
		return nil
	}
	return st
}

// openStoreToRead opens the store for ls, show, export and diff: as Open
// does, or read-only when the file cannot be written.
func openStoreToRead(cmd *cobra.Command) (*sessions.Store, error) {
	p, err := dbPath(cmd)
	if err != nil {
		return nil, err
	}
	st, err := sessions.Open(p)
	if err != nil && sessions.IsReadOnly(err) {
		if ro, roErr := sessions.OpenReadOnly(p); roErr == nil {
			return ro, nil
		}
	}
	return st, err
}

// noDatabaseError is the path of a sessions database that does not exist.
type noDatabaseError string

func (p noDatabaseError) Error() string {
	return fmt.Sprintf("no sessions database at %s: nothing has been saved there yet (`sweepbench run` saves every run unless --no-save; --db names another file)", string(p))
}

// openExistingStore opens the store for the sessions subcommands, which
// read or change what is saved: a database file that does not exist is an
// error naming it (opening would create an empty one as a side effect).
func openExistingStore(cmd *cobra.Command, write bool) (*sessions.Store, error) {
	p, err := dbPath(cmd)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, noDatabaseError(p)
	}
	if write {
		return openStore(cmd)
	}
	return openStoreToRead(cmd)
}

// warnNotSaved tells the user that a study goes on, or went on, unsaved:
// its results are still computed and printed.
func warnNotSaved(w io.Writer, e *sessions.SaveError) {
	switch e.Stage {
	case sessions.SaveBegin:
		fmt.Fprintf(w, "sweepbench: warning: this run is not saved: %v; it is still computed and printed (--no-save skips saving)\n", phrase(e.Err))
	case sessions.SaveSave:
		fmt.Fprintf(w, "sweepbench: warning: saving stopped: %v; the run goes on unsaved and is still printed\n", phrase(e.Err))
	default:
		fmt.Fprintf(w, "sweepbench: warning: session %d was not finished in the database: %v\n", e.ID, phrase(e.Err))
	}
}

// savedLine is the line to print once the report is out ("" when quiet
// or when the run is not wholly saved: a warning said so).
func savedLine(rec sessions.Recording, runErr error, quiet bool) string {
	if quiet || rec.ID == 0 || rec.Err != nil {
		return ""
	}
	if runErr != nil {
		return fmt.Sprintf("saved as session %d in %s; `sweepbench sessions resume %d` computes the combos not done", rec.ID, rec.Path, rec.ID)
	}
	return fmt.Sprintf("saved as session %d in %s (sweepbench sessions show %d)", rec.ID, rec.Path, rec.ID)
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%q: want a session id (sweepbench sessions ls)", s)
	}
	return id, nil
}

// openSessionReport opens the store read-only and the report of session
// arg (an id); the caller closes the store. With summary set (a table of
// the best top), the runs keep only their best and a summary
// (sessions.OpenSummary: memory flat in the grid); else every result.
func openSessionReport(cmd *cobra.Command, arg string, summary *engine.SummaryOptions) (*sessions.Store, int64, *engine.Report, error) {
	id, err := parseID(arg)
	if err != nil {
		return nil, 0, nil, err
	}
	st, err := openExistingStore(cmd, false)
	if err != nil {
		return nil, 0, nil, err
	}
	var rep *engine.Report
	if summary != nil {
		rep, err = st.OpenSummary(cmd.Context(), id, *summary)
	} else {
		rep, err = st.Open(cmd.Context(), id)
	}
	if err != nil {
		st.Close()
		return nil, 0, nil, err
	}
	if ss, err := st.Get(cmd.Context(), id); err == nil {
		warnUnverified(cmd.ErrOrStderr(), ss)
	}
	return st, id, rep, nil
}

// warnUnverified says on w which parts of session ss no digest covers (a
// session saved before schema version 12): they are shown as saved.
func warnUnverified(w io.Writer, ss *sessions.Session) {
	if note := ss.UnverifiedNote(); note != "" {
		fmt.Fprintf(newSanitized(w), "note: %s\n", note)
	}
}
