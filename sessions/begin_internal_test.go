package sessions

import (
	"context"

	"sweepbench/engine"
)

// testOrigin is how a test study's dataset was loaded (its Spec's Data and
// Head): tests build studies directly, not through engine.Spec.Study.
type testOrigin struct {
	Data string
	Head int
}

// begin records st as loaded from o, with note, as Begin does for a study
// built from a Spec.
func begin(ctx context.Context, s *Store, st *engine.Study, o testOrigin, note string) (*Writer, error) {
	st.Spec.Data, st.Spec.Head, st.Note = o.Data, o.Head, note
	return s.Begin(ctx, st)
}
