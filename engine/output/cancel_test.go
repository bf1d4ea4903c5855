package output

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"sweepbench/engine"
)

// TestRunStudyCancelledBeforeFP32: a cancel in the fp64 lane leaves fp32
// never started; the report says so in every format: NotStarted, not
// Complete, the table's "not started" and INCOMPLETE lines and its top
// list qualified, the JSON's complete=false and not_started, and the
// cancel read as the user's, not Go's "context canceled".
func TestRunStudyCancelledBeforeFP32(t *testing.T) {
	rep := cancelledStudy(t, engine.FP64, 40)
	if ns := rep.NotStarted(); len(ns) != 1 || ns[0] != engine.FP32 || rep.Complete() || rep.Parity != nil {
		t.Fatalf("not started %v, complete %v, parity %v", ns, rep.Complete(), rep.Parity)
	}
	var tab strings.Builder
	if err := WriteTable(&tab, rep, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fp64 cancelled: cancelled by the user", "fp32 not started", "INCOMPLETE:",
		"no parity report", "combos of the 40 computed (of 100)"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
	if strings.Contains(tab.String(), "context canceled") {
		t.Errorf("table shows Go's error text:\n%s", tab.String())
	}
	var js strings.Builder
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"complete": false`, `"not_started": [`, `"error": "cancelled by the user"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

// TestRunStudyInterruptedReadsInterrupted: a study cancelled by an
// *engine.Interrupted (SIGTERM) reads as interrupted, as the sessions store
// records it: the run's status in the table (and its error line, without
// saying "interrupted" twice), in the JSON and in the rows; its Status is
// still cancelled, which every path that handles a cancel handles.
func TestRunStudyInterruptedReadsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	b := precisionAware(func(p engine.Precision, ctx context.Context, first int, out []engine.Metrics) error {
		if p == engine.FP64 && first >= 40 {
			cancel(&engine.Interrupted{Signal: "terminated"})
			return ctx.Err()
		}
		fillIndex(first, out)
		return nil
	})
	rep, err := engine.RunStudy(ctx, fakeStudy(b), engine.StudyOptions{})
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("err %v rep %v", err, rep)
	}
	run := rep.Run(engine.FP64)
	if run.Status != engine.StatusCancelled || run.Shown() != engine.StatusInterrupted {
		t.Fatalf("status %s, shown %s", run.Status, run.Shown())
	}
	var tab strings.Builder
	if err := WriteTable(&tab, rep, 5); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ *\S+ +fp64 +\S+ +interrupted `).MatchString(tab.String()) ||
		!strings.Contains(tab.String(), "\nfp64 interrupted (terminated)\n") || strings.Contains(tab.String(), "cancelled") {
		t.Errorf("table does not read interrupted:\n%s", tab.String())
	}
	var js, csv strings.Builder
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"status": "interrupted"`) {
		t.Errorf("JSON lacks the interrupted status")
	}
	if err := WriteRows(&csv, rep, RowsCSV); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv.String(), ",interrupted,") || strings.Contains(csv.String(), ",cancelled,") {
		t.Errorf("rows do not say interrupted")
	}
}
