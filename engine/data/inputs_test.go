package data

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSourcesAndTakes: Sources names the files a spec reads (a zip
// member's archive, a folder's or a glob's data files) and Takes the new
// files a folder or a glob would read next time.
func TestSourcesAndTakes(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "f")
	os.Mkdir(folder, 0o755)
	for _, n := range []string{"a.csv", "b.json", "notes.md", ".hidden.csv"} {
		os.WriteFile(filepath.Join(folder, n), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "z.zip"), []byte("x"), 0o644)
	for _, c := range []struct {
		spec  string
		files []string
		many  bool
	}{
		{"embedded:btcusdt-1m", nil, false},
		{filepath.Join(dir, "z.zip") + "#a.csv", []string{filepath.Join(dir, "z.zip")}, false},
		{folder, []string{filepath.Join(folder, "a.csv"), filepath.Join(folder, "b.json")}, true},
		{filepath.Join(folder, "*.csv"), []string{filepath.Join(folder, ".hidden.csv"), filepath.Join(folder, "a.csv")}, true},
	} {
		s := Sources(c.spec)
		if !slices.Equal(s.Files, c.files) || s.Many != c.many {
			t.Errorf("Sources(%s) = %v many %v; want %v many %v", c.spec, s.Files, s.Many, c.files, c.many)
		}
	}
	for _, c := range []struct {
		spec, path string
		want       bool
	}{
		{folder, filepath.Join(folder, "res.csv"), true},
		{folder, folder + "/sub/../res.parquet", true},
		{folder, filepath.Join(folder, "res.md"), false},
		{folder, filepath.Join(folder, ".res.csv"), false},
		{folder, filepath.Join(dir, "res.csv"), false},
		{filepath.Join(folder, "*.csv"), filepath.Join(folder, "res.csv"), true},
		{filepath.Join(folder, "*.csv"), filepath.Join(folder, "res.json"), false},
		{filepath.Join(dir, "*", "*.csv"), filepath.Join(folder, "res.csv"), true},
		{filepath.Join(dir, "z.zip") + "#a.csv", filepath.Join(dir, "a.csv"), false},
		{"embedded:btcusdt-1m", "res.csv", false},
	} {
		if got := Takes(c.spec, c.path); got != c.want {
			t.Errorf("Takes(%s, %s) = %v, want %v", c.spec, c.path, got, c.want)
		}
	}
}
