package setup

import (
	"testing"

	"sweepbench/tui/common"
	"sweepbench/tui/components/form"
)

// TestRunKeyOnChoiceAsksRoot: in a text field r is text (the range gets
// it, no run is asked); on a choice field (the backend) r asks the root to
// run the form's study (a RunMsg with no study of its own), and the study
// the form then builds is the one on screen: the backend chosen and the
// ranges typed.
func TestRunKeyOnChoiceAsksRoot(t *testing.T) {
	s := newScreen(t, 80, 30)
	m := s.m
	s.key("r")
	if v := m.Form().Values()[form.HMA]; v != "10:30:10r" || len(s.host.Intents) != 0 {
		t.Fatalf("r in the HMA range: field %q, intents %v; want it typed, nothing asked", v, s.host.Intents)
	}
	s.key("backspace")
	for i := 0; m.Form().Focused() != form.Backend; i++ {
		if i > 20 {
			t.Fatal("down never reached the backend field")
		}
		s.key("down")
	}
	s.key("r")
	if len(s.host.Intents) != 1 {
		t.Fatalf("r on the backend field: intents %v, want one run", s.host.Intents)
	}
	if run, ok := s.host.Intents[0].(common.RunMsg); !ok || run.Study != nil {
		t.Fatalf("r on the backend field asked %#v, want the form's study run", s.host.Intents[0])
	}
	st := m.Submit()
	if st == nil {
		t.Fatalf("the form builds no study: %q", s.host.St.LastErr)
	}
	if st.Backend.Name() != "reference" || st.Grid.HMA.String() != "10:30:10" || st.Grid.HMA3.String() != "12:36:12" || st.Dataset.Bars.Len() != 2000 {
		t.Fatalf("the study run is %s hma %v hma3 %v on %d bars, want reference 10:30:10 x 12:36:12 on 2000",
			st.Backend.Name(), st.Grid.HMA, st.Grid.HMA3, st.Dataset.Bars.Len())
	}
}
