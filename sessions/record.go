package sessions

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// LoadSpec is the default Loader: the session's dataset read again as its
// Spec says (engine.Spec.LoadContext: ctx stops it).
func LoadSpec(ctx context.Context, ss *Session) (*data.Dataset, error) {
	return ss.Spec.LoadContext(ctx)
}

// Rebuild builds the study of saved session ss again, from its Spec: the
// dataset loaded again through load (nil: LoadSpec) and refused with
// *DatasetChangedError when its bars are not the ones saved, the backend
// resolved through reg. backend, when not "", replaces the saved backend;
// when it is "" and the saved one cannot run here, auto picks one and the
// study's note says so. The study is built by engine.Spec.Study, as a new
// one is, from the values the session used (its backend and bars per year
// as resolved, so that a resume computes what was computed); its Spec is
// then the session's as the user gave it (Session.Asked: auto, bars per
// year 0 when derived), as a new study's is, so that the form that edits
// it and a new session saved from it see what the user asked.
func Rebuild(ctx context.Context, ss *Session, reg *engine.Registry, backend string, load Loader) (*engine.Study, error) {
	if load == nil {
		load = LoadSpec
	}
	spec := ss.Spec
	var note string
	switch {
	case backend != "":
		spec.Backend = backend
	case reg != nil:
		if _, _, err := reg.Lookup(spec.Backend); err != nil {
			var be engine.Backend
			if be, _, err = reg.Lookup("auto"); err == nil {
				note = fmt.Sprintf("%s cannot run here: %s computes instead", spec.Backend, be.Name())
				spec.Backend = "auto"
			}
		}
	}
	ds, err := load(ctx, ss)
	if err != nil {
		return nil, &DatasetLoadError{ID: ss.ID, Data: ss.Spec.Data, Err: err}
	}
	if err := sameBars(ss, &ds.Info); err != nil {
		return nil, err
	}
	st, err := spec.Study(ds, reg)
	if err != nil {
		return nil, err
	}
	st.Note = engine.JoinNote(note, st.Note)
	asked := ss.Asked
	if spec.Backend != ss.Spec.Backend {
		asked.Backend = spec.Backend // replaced, or auto instead
	}
	st.Spec = asked
	return st, nil
}

// DatasetLoadError is a saved session whose dataset cannot be read again.
type DatasetLoadError struct {
	ID   int64
	Data string // the session's Spec.Data
	Err  error
}

func (e *DatasetLoadError) Error() string {
	return fmt.Sprintf("session %d: the dataset %s could not be loaded again: %v", e.ID, e.Data, e.Err)
}

func (e *DatasetLoadError) Unwrap() error { return e.Err }

// Recording says how saving a study went.
type Recording struct {
	ID   int64  // the session; 0 when nothing was saved
	Path string // the database file
	// Err is why the study is not (wholly) saved, a *SaveError; nil when
	// it is. The study itself ran whatever Err says.
	Err *SaveError
	// Robustness is why the robustness statistics the study asked for
	// (Study.Blocks) are not in the report although its per-block
	// statistics are (Report.Blocks): the analysis failed. nil when they
	// are in Report.Robustness, or when there are none to compute (no
	// blocks asked for, or the lane with them did not complete).
	Robustness error
}

// Save stages of a SaveError.
const (
	SaveBegin  = "begin"  // the study could not be recorded: nothing is saved
	SaveSave   = "save"   // saving stopped part way: the study went on unsaved
	SaveFinish = "finish" // the results are saved but the final state is not
)

// SaveError is a study that ran but is not (wholly) saved.
type SaveError struct {
	Stage string // SaveBegin, SaveSave or SaveFinish
	ID    int64  // the session, when it was recorded
	Err   error
}

func (e *SaveError) Error() string {
	switch e.Stage {
	case SaveBegin:
		return fmt.Sprintf("not saved: %v", e.Err)
	case SaveSave:
		return fmt.Sprintf("saving session %d stopped: %v", e.ID, e.Err)
	}
	return fmt.Sprintf("session %d was not finished in the database: %v", e.ID, e.Err)
}

func (e *SaveError) Unwrap() error { return e.Err }

// RecordOptions tell a front end how saving goes while the study runs.
type RecordOptions struct {
	// Begun, when set, is told the session's id once it is recorded,
	// before anything is computed (say it now: a killed run prints no
	// report).
	Begun func(id int64, path string)
	// SaveError, when set, is told of the first SaveError as soon as it
	// happens, while the study goes on unsaved; and of a robustness
	// summary that could not be saved (SaveFinish: the session holds the
	// study without it), which Recording.Err does not record.
	SaveError func(*SaveError)
	// Robustness, when set, is told when the robustness statistics of st
	// start (the lane with the per-block statistics done; the other lane
	// and the parity report may still run), on the goroutine that
	// computes them.
	Robustness func(st *engine.Study)
}

// RunStudy runs st through engine.RunStudy (the one run path) and, when s
// is not nil, saves it in s while it computes, batch by batch, then its
// final state and parity report: what `sweepbench run` and the workbench
// both do. Saving never stops the study: a database that cannot be used
// is reported in Recording.Err (and to ro.SaveError at once) while the
// study goes on unsaved. opt.Sink, when set, sees every chunk too.
//
// A study with Study.Blocks has its robustness statistics computed too
// (robust.go), beside the rest of it once the lane with the per-block
// statistics is done: their summary is in the report's Robustness and the
// session, or Recording.Robustness says why not. opt.AfterBlocks, when
// set, is called after them.
func RunStudy(ctx context.Context, s *Store, st *engine.Study, opt engine.StudyOptions, ro RecordOptions) (*engine.Report, Recording, error) {
	var rec Recording
	var mu sync.Mutex
	report := func(e *SaveError) {
		mu.Lock()
		first := rec.Err == nil
		if first {
			rec.Err = e
		}
		mu.Unlock()
		if first && ro.SaveError != nil {
			ro.SaveError(e)
		}
	}
	var w *Writer
	if s != nil {
		rec.Path = s.Path()
		var err error
		if w, err = s.Begin(ctx, st); err != nil {
			report(&SaveError{Stage: SaveBegin, Err: err})
			w = nil
		} else {
			rec.ID = w.ID()
			if ro.Begun != nil {
				ro.Begun(rec.ID, rec.Path)
			}
		}
	}
	if w != nil {
		save := w.Sink(func(err error) { report(&SaveError{Stage: SaveSave, ID: w.ID(), Err: err}) })
		next := opt.Sink
		opt.Sink = func(p engine.Precision, rs []engine.ComboResult) error {
			_ = save(p, rs)
			if next != nil {
				return next(p, rs)
			}
			return nil
		}
	}
	var rob *robustRun
	if st.Blocks > 0 {
		rob = &robustRun{}
		opt.AfterBlocks = rob.after(ctx, st, ro.Robustness, opt.AfterBlocks)
	}
	rep, runErr := engine.RunStudy(ctx, st, opt)
	if w != nil && opt.Progress != nil {
		select { // the last batches and the parity report go in now: say so
		case opt.Progress <- engine.Progress{Backend: st.Backend.Name(), Total: st.Grid.Len(), Phase: engine.PhaseSaving}:
		default:
		}
	}
	if w != nil {
		finishErr := runErr
		var in *engine.Interrupted
		if runErr != nil && errors.As(context.Cause(ctx), &in) {
			finishErr = in // saved as interrupted: resumable, not the user's cancel
		}
		err := w.Finish(rep, finishErr)
		if saveErr := w.Err(); saveErr != nil {
			// Found by the committer after the last chunk: no Save saw it.
			report(&SaveError{Stage: SaveSave, ID: w.ID(), Err: saveErr})
		}
		if err != nil {
			report(&SaveError{Stage: SaveFinish, ID: w.ID(), Err: err})
		}
	}
	if rob != nil {
		err := rob.keep(ctx, s, rec.ID, rep)
		var se *SaveError
		switch {
		case errors.As(err, &se):
			if ro.SaveError != nil {
				ro.SaveError(se)
			}
		default:
			rec.Robustness = err
		}
	}
	return rep, rec, runErr
}
