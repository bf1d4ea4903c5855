package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// recordSpec is a small study with both precisions, its fp32 run in the
// prefix formulation: its parity report has flips.
func recordSpec() engine.Spec {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 3000
	spec.HMA, spec.HMA3, spec.Backend, spec.WMA = "10:60:10", "12:48:12", "reference", "prefix"
	return spec
}

// recordEdits are edits through SQL of what show, export, diff and resume
// print besides the results, each with the part of the session the
// refusal names.
var recordEdits = []struct {
	name, part, sql string
}{
	{"parity verdict", "parity report", `UPDATE parities SET verdict = CASE verdict WHEN 'pass' THEN 'collapse' ELSE 'pass' END`},
	{"parity max_abs_dpnl_pp", "parity report", `UPDATE parities SET max_abs_dpnl_pp = coalesce(max_abs_dpnl_pp, 0) + 1`},
	{"parity flip_count", "parity report", `UPDATE parities SET flip_count = flip_count + 1`},
	{"a flip's margin", "parity report", `UPDATE flips SET margin = coalesce(margin, 0) + 0.5 WHERE rank = 0`},
	// The last combo's dn_limit_breached (the blob's last byte) flipped:
	// a blob that still reads.
	{"a combo's parity", "parity report", `UPDATE parity_batches SET data = unhex(substr(hex(data), 1, length(hex(data)) - 2) ||
		CASE substr(hex(data), -2) WHEN '00' THEN '01' ELSE '00' END)`},
	{"a combo's parity row added", "parity report", `INSERT INTO parity_combos (parity_id, idx, hma, hma3, trades_ref, trades_test, dn,
		flips, non_borderline, dn_limit_breached) SELECT id, 0, 10, 12, 1, 1, 0, 0, 0, 0 FROM parities`},
	{"an indicator error", "parity report", `UPDATE indicator_errors SET max_rel = coalesce(max_rel, 0) * 2 + 1 WHERE rank = 0`},
	{"the parity deleted", "parity report", `DELETE FROM parities`},
	{"studies.fee", "settings", `UPDATE studies SET fee = fee * 2`},
	{"studies.bars_per_year", "settings", `UPDATE studies SET bars_per_year = bars_per_year + 1`},
	{"the note", "note", `UPDATE studies SET note = note || ' (edited)'`},
	{"the robustness", "robustness summary", `UPDATE studies SET robustness = '{"edited":true}'`},
	{"the dataset's name", "dataset", `UPDATE datasets SET name = 'embedded:other'`},
	{"the dataset's bar count", "dataset", `UPDATE datasets SET bars = bars + 1`},
}

// completeRecordSession saves recordSpec complete, with a note and a
// robustness summary, and checks that its parity has flips and indicator
// errors (what the edits change).
func completeRecordSession(t *testing.T, s *sessions.Store) int64 {
	t.Helper()
	st, err := recordSpec().Build(pipelineRegistry())
	if err != nil {
		t.Fatal(err)
	}
	st.Note = "a note"
	_, rec, err := sessions.RunStudy(context.Background(), s, st, engine.StudyOptions{},
		sessions.RecordOptions{SaveError: func(e *sessions.SaveError) { t.Errorf("save: %v", e) }})
	if err != nil || rec.ID == 0 {
		t.Fatalf("run: %v, session %d", err, rec.ID)
	}
	if err := s.SetRobustness(context.Background(), rec.ID, []byte(`{"blocks":4}`)); err != nil {
		t.Fatal(err)
	}
	db := rawSQL(t, s.Path())
	for _, table := range []string{"flips", "indicator_errors", "parity_batches"} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil || n == 0 {
			t.Fatalf("%s: %d rows (%v): the study should have some", table, n, err)
		}
	}
	// The row per combo is in parity_batches only (schema v16).
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM parity_combos`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("parity_combos: %d rows (%v), want none", n, err)
	}
	return rec.ID
}

// wantRecordError checks that err refuses session id by its record
// digest, naming part.
func wantRecordError(t *testing.T, what string, err error, id int64, part string) {
	t.Helper()
	var re *sessions.RecordError
	if !errors.As(err, &re) || re.ID != id || len(re.Parts) != 1 || re.Parts[0] != part {
		t.Errorf("%s: %v, want a *RecordError of session %d naming its %s", what, err, id, part)
		return
	}
	if want := fmt.Sprintf("session %d: its %s ", id, part); !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %q does not say %q", what, err, want)
	}
}

// TestRecordDigestRefusesEdits: an edit through SQL of a saved session's
// settings, dataset, note, robustness or parity report (its summary, a
// combo's row, a flip, an indicator error) is refused by every reader, as
// an edit of its results is, naming what changed. They were shown as
// computed: only the results were digested.
func TestRecordDigestRefusesEdits(t *testing.T) {
	bg := context.Background()
	// Unchanged, every reader reads it.
	s := openStore(t, "")
	id := completeRecordSession(t, s)
	if _, err := s.Open(bg, id); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	if ss, err := s.Get(bg, id); err != nil || len(ss.Unverified) != 0 {
		t.Fatalf("unchanged: unverified %v (%v), want none", ss.Unverified, err)
	}
	for _, c := range recordEdits {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			id := completeRecordSession(t, s)
			db := rawSQL(t, s.Path())
			mustExec(t, db, c.sql)

			_, err := s.Open(bg, id)
			wantRecordError(t, "Open", err, id, c.part)
			_, err = s.OpenSummary(bg, id, engine.SummaryOptions{})
			wantRecordError(t, "OpenSummary", err, id, c.part)
			_, _, err = s.OpenRun(bg, id, engine.FP64)
			wantRecordError(t, "OpenRun", err, id, c.part)
			_, err = s.OpenRunReader(bg, id, engine.FP32)
			wantRecordError(t, "OpenRunReader", err, id, c.part)
			ref := sessions.RunRef{ID: id, Precision: engine.FP64, Explicit: true}
			_, err = s.Diff(bg, ref, ref, nil)
			wantRecordError(t, "diff", err, id, c.part)
			// rm still removes it.
			if err := s.Delete(bg, id, false); err != nil {
				t.Errorf("rm: %v", err)
			}
		})
	}
}

// TestRecordDigestResume: resume refuses an interrupted session whose
// settings or note were edited; one left as saved resumes, its note (which
// resume may change: "resumed on") and parity digested anew, and reads
// back verified.
func TestRecordDigestResume(t *testing.T) {
	bg := context.Background()
	reg := pipelineRegistry()
	spec := recordSpec()
	for _, c := range []struct{ name, part, sql string }{
		{"studies.fee", "settings", `UPDATE studies SET fee = fee * 2`},
		{"the note", "note", `UPDATE studies SET note = 'edited'`},
		{"the dataset's bar count", "dataset", `UPDATE datasets SET bars = bars + 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			id := interruptedSession(t, s, reg, spec, 30)
			ss, err := s.Get(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			st, err := sessions.Rebuild(bg, ss, reg, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			mustExec(t, rawSQL(t, s.Path()), c.sql)
			_, _, err = s.Resume(bg, id, st, sessions.ResumeOptions{})
			wantRecordError(t, "resume", err, id, c.part)
			if after, err := s.Get(bg, id); err != nil || after.Status != ss.Status || after.PID != ss.PID {
				t.Errorf("the refused resume changed the session: %v", err)
			}
		})
	}
	t.Run("unchanged", func(t *testing.T) {
		s := openStore(t, "")
		id := interruptedSession(t, s, reg, spec, 30)
		ss, err := s.Get(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sessions.Rebuild(bg, ss, reg, "reference", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Resume(bg, id, st, sessions.ResumeOptions{}); err != nil {
			t.Fatalf("resume: %v", err)
		}
		rep, err := s.Open(bg, id)
		if err != nil || rep.Parity == nil {
			t.Fatalf("after the resume: %v", err)
		}
	})
}

// TestRecordDigestOldSessions: a session saved before the record digest
// (digest_version 0, as every session of schema version 11 and older
// reads after the migration) is read as before, its edits not caught,
// and says which parts are unverified.
func TestRecordDigestOldSessions(t *testing.T) {
	bg := context.Background()
	s := openStore(t, "")
	id := completeRecordSession(t, s)
	db := rawSQL(t, s.Path())
	// As the migration to v13 leaves a session saved before v12: no
	// record digests, the record epoch after it (its runs keep theirs).
	mustExec(t, db, `UPDATE studies SET digest_version = 0, settings_digest = NULL, dataset_digest = NULL, note_digest = NULL,
		robustness_digest = NULL, parity_digest = NULL`)
	mustExec(t, db, `UPDATE meta SET value = ? WHERE name = 'record_digests_from'`, id+1)
	mustExec(t, db, `UPDATE parities SET flip_count = 12345`)
	rep, err := s.Open(bg, id)
	if err != nil {
		t.Fatalf("an old session: %v, want it read unverified", err)
	}
	if rep.Parity.FlipCount != 12345 {
		t.Errorf("flip count %d, want the edited 12345", rep.Parity.FlipCount)
	}
	ss, err := s.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"settings", "dataset", "note", "robustness summary", "parity report"}; fmt.Sprint(ss.Unverified) != fmt.Sprint(want) {
		t.Errorf("unverified %q, want %q", ss.Unverified, want)
	}
}

// TestRecordDigestCannotBeTurnedOff: the digests of a session saved since
// this file began digesting cannot be turned off from inside its rows.
// Lowering its digest_version (the finding: the forged parity verdict and
// fee shown, with a note that the session predates the digests), also
// with its digests removed, or removing one part's digest is refused,
// naming what; a version newer than this build's is refused as saved by
// a newer sweepbench; removing the epochs from meta reads every session
// as digested.
func TestRecordDigestCannotBeTurnedOff(t *testing.T) {
	bg := context.Background()
	allParts := []string{"settings", "dataset", "note", "robustness summary", "parity report"}
	for _, c := range []struct {
		name, sql string
		want      func(*sessions.RecordError) bool
		says      string
	}{
		{"digest_version lowered", `UPDATE studies SET digest_version = 0; UPDATE parities SET verdict = 'collapse', reasons = '["forged"]'; UPDATE studies SET fee = 0.1`,
			func(e *sessions.RecordError) bool {
				return e.Lowered && e.Version == 0 && fmt.Sprint(e.Parts) == fmt.Sprint(allParts)
			},
			"its digest version reads 0, but the session was saved with record digests"},
		{"digest_version lowered and every digest removed", `UPDATE studies SET digest_version = 0, settings_digest = NULL, dataset_digest = NULL, note_digest = NULL,
			robustness_digest = NULL, parity_digest = NULL; UPDATE studies SET fee = 0.1`,
			func(e *sessions.RecordError) bool { return e.Lowered && e.Version == 0 },
			"its digest version reads 0"},
		{"digest_version negative", `UPDATE studies SET digest_version = -1`,
			func(e *sessions.RecordError) bool { return e.Lowered && e.Version == -1 },
			"its digest version reads -1"},
		{"the parity digest removed", `UPDATE studies SET parity_digest = NULL; UPDATE parities SET verdict = 'collapse'`,
			func(e *sessions.RecordError) bool {
				return len(e.Parts) == 0 && fmt.Sprint(e.Removed) == "[parity report]"
			},
			"session 1: the digest of its parity report is missing: it was removed from the database after the session was saved, so the session is not used"},
		{"the settings digest emptied, the note edited", `UPDATE studies SET settings_digest = x'', note = 'edited'`,
			func(e *sessions.RecordError) bool {
				return fmt.Sprint(e.Parts) == "[note]" && fmt.Sprint(e.Removed) == "[settings]"
			},
			"session 1: its note does not match the digest saved with it: it was changed or damaged in the database after it was saved; the digest of its settings is missing"},
		{"digest_version newer", `UPDATE studies SET digest_version = 5`,
			func(e *sessions.RecordError) bool { return e.Newer && e.Version == 5 },
			"session 1 was saved by a newer sweepbench (record digest version 5; this one knows 4), so it is not used"},
		{"the epochs removed", `DELETE FROM meta; UPDATE studies SET digest_version = 0`,
			func(e *sessions.RecordError) bool { return e.Lowered },
			"its digest version reads 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, "")
			id := completeRecordSession(t, s)
			if id != 1 {
				t.Fatalf("session %d, want 1", id)
			}
			mustExec(t, rawSQL(t, s.Path()), c.sql)
			readers := map[string]func() error{
				"Open":          func() error { _, err := s.Open(bg, id); return err },
				"OpenSummary":   func() error { _, err := s.OpenSummary(bg, id, engine.SummaryOptions{}); return err },
				"OpenRunReader": func() error { _, err := s.OpenRunReader(bg, id, engine.FP32); return err },
				"diff": func() error {
					ref := sessions.RunRef{ID: id, Precision: engine.FP64, Explicit: true}
					_, err := s.Diff(bg, ref, ref, nil)
					return err
				},
			}
			for name, read := range readers {
				err := read()
				var re *sessions.RecordError
				if !errors.As(err, &re) || re.ID != id || !c.want(re) {
					t.Errorf("%s: %v (%+v), want it refused", name, err, re)
				} else if !strings.Contains(err.Error(), c.says) {
					t.Errorf("%s: %q does not say %q", name, err, c.says)
				}
			}
			ss, err := s.Get(bg, id)
			if err != nil || len(ss.Unverified) != 0 || ss.UnverifiedNote() != "" {
				t.Errorf("get: unverified %q, note %q (%v): want none, the session is not an old one", ss.Unverified, ss.UnverifiedNote(), err)
			}
			if list, err := s.List(bg, sessions.ListOptions{}); err != nil || len(list) != 1 || len(list[0].Unverified) != 0 {
				t.Errorf("list: %v, want the session without unverified parts", err)
			}
		})
	}
}
