//go:build unix

package tui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
)

// rootsTree is a server's folders: base holds another user's sessions.db
// (outside every data root); base/data, a data root, holds a.csv, a
// folder sub/ with b.csv and a link out -> base; base/more, a second
// root, holds c.csv.
func rootsTree(t *testing.T) (base, data, more string) {
	t.Helper()
	base, _ = filepath.EvalSymlinks(t.TempDir())
	data, more = filepath.Join(base, "data"), filepath.Join(base, "other-root")
	for _, d := range []string{data, filepath.Join(data, "sub"), more} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(base, "sessions.db"), filepath.Join(data, "a.csv"),
		filepath.Join(data, "sub", "b.csv"), filepath.Join(more, "c.csv")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(base, filepath.Join(data, "out")); err != nil {
		t.Fatal(err)
	}
	return base, data, more
}

// rootsModel is the workbench as sweepbench serve configures it: loads
// refused outside roots (the check itself is serve's), the picker told
// the roots; the working folder is base (outside them).
func rootsModel(t *testing.T, base string, roots ...string) *driver {
	t.Helper()
	t.Chdir(base)
	f := DefaultFlags()
	f.Backend = "reference"
	cfg := Config{Registry: testRegistry(), Flags: f, DataRoots: roots, DataAllowed: func(spec string) error {
		if strings.HasPrefix(spec, "embedded:") {
			return nil
		}
		for _, r := range roots {
			if strings.HasPrefix(spec, r+string(filepath.Separator)) {
				return nil
			}
		}
		return errors.New("not allowed")
	}}
	d := &driver{t: t, m: newModel(t.Context(), cfg, termenv.Ascii, true, true)}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	return d
}

// pickerDir is the folder the picker lists ("" on the list of roots).
func pickerDir(d *driver) string { return d.m.setup.Datasets().PickerDir() }

// TestPickerStaysInDataRoots: over sweepbench serve the file picker browses
// the data roots only (found by a user: "Open a file..." started in the
// server's working folder and ← walked up to /tmp and into other users'
// folders, another user's sessions.db among the names shown). It starts in
// the root, ← at the root stays there, a link to a folder outside is not
// followed, and nothing outside is ever listed; a file inside still loads.
func TestPickerStaysInDataRoots(t *testing.T) {
	base, data, _ := rootsTree(t)
	d := rootsModel(t, base, data)
	m := d.m
	d.key("down", "down", "enter") // Open a file...
	if !m.setup.Datasets().Picking() || pickerDir(d) != data {
		t.Fatalf("the picker opened in %q (picking %v), want the data root %s", pickerDir(d), m.setup.Datasets().Picking(), data)
	}
	outside := func(what string) {
		t.Helper()
		if v := m.View(); strings.Contains(v, "sessions.db") || strings.Contains(v, "other-root") || strings.Contains(v, "> "+base+"\n") || strings.Contains(v, "> "+base+" ") {
			t.Fatalf("%s: the picker lists what is outside the root (in %q):\n%s", what, pickerDir(d), v)
		}
	}
	if v := m.View(); !strings.Contains(v, "a.csv") || !strings.Contains(v, "sub") {
		t.Fatalf("the root's files are not listed:\n%s", v)
	}
	outside("at the root")
	for _, k := range []string{"left", "h", "backspace"} {
		d.key(k)
		if pickerDir(d) != data {
			t.Fatalf("%s at the root went to %q, want to stay in %s", k, pickerDir(d), data)
		}
		outside(k + " at the root")
	}
	d.key("enter") // sub/, the first entry
	if pickerDir(d) != filepath.Join(data, "sub") || !strings.Contains(m.View(), "b.csv") {
		t.Fatalf("enter on sub/ went to %q:\n%s", pickerDir(d), m.View())
	}
	d.key("left")
	if pickerDir(d) != data {
		t.Fatalf("← from sub/ went to %q, want the root", pickerDir(d))
	}
	d.key("down", "down", "enter") // out -> base
	if pickerDir(d) != data {
		t.Fatalf("the link out of the root was followed to %q", pickerDir(d))
	}
	outside("the link out")
	if v := m.View(); !strings.Contains(v, "out: outside the data folders ("+data+")") {
		t.Fatalf("the refused link is not explained:\n%s", v)
	}
	d.key("up", "enter") // a.csv: inside, asked of DataAllowed and read
	if m.setup.Datasets().Picking() || !strings.Contains(m.status.LastErr, filepath.Join(data, "a.csv")) {
		t.Fatalf("a.csv was not loaded from the root (picking %v, error %q)", m.setup.Datasets().Picking(), m.status.LastErr)
	}
}

// TestPickerListsRoots: with several data roots the picker starts on the
// list of them; enter opens one, ← at its top comes back to the list, and
// ← on the list goes nowhere.
func TestPickerListsRoots(t *testing.T) {
	base, data, more := rootsTree(t)
	d := rootsModel(t, base, data, more)
	m := d.m
	d.key("down", "down", "enter")
	v := m.View()
	if !m.setup.Datasets().Picking() || pickerDir(d) != "" || !strings.Contains(v, data) || !strings.Contains(v, more) || strings.Contains(v, "sessions.db") {
		t.Fatalf("the picker opened in %q, want the list of the roots %s and %s:\n%s", pickerDir(d), data, more, v)
	}
	d.key("left")
	if pickerDir(d) != "" || !m.setup.Datasets().Picking() {
		t.Fatalf("← on the list of roots went to %q", pickerDir(d))
	}
	d.key("down", "enter")
	if pickerDir(d) != more || !strings.Contains(m.View(), "c.csv") {
		t.Fatalf("enter on the second root went to %q:\n%s", pickerDir(d), m.View())
	}
	d.key("left")
	if pickerDir(d) != "" || !strings.Contains(m.View(), data) {
		t.Fatalf("← at the top of a root went to %q, want the list of roots", pickerDir(d))
	}
	d.key("up", "enter")
	if pickerDir(d) != data || !strings.Contains(m.View(), "a.csv") {
		t.Fatalf("enter on the first root went to %q:\n%s", pickerDir(d), m.View())
	}
}

// TestPickerWithoutRoots: a server with no data root reads the embedded
// datasets only: Open a file lists no folder at all and says so.
func TestPickerWithoutRoots(t *testing.T) {
	base, _, _ := rootsTree(t)
	d := rootsModel(t, base)
	m := d.m
	d.key("down", "down", "enter")
	if v := m.View(); m.setup.Datasets().Picking() || strings.Contains(v, "sessions.db") || !strings.Contains(v, "only the embedded datasets") {
		t.Fatalf("without data roots: picking %v in %q:\n%s", m.setup.Datasets().Picking(), pickerDir(d), v)
	}
}
