//go:build unix

package cli

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// barsCSV is n one-minute bars from start (Unix seconds), with a header.
func barsCSV(start, n int) string {
	var b strings.Builder
	b.WriteString("timestamp,open,high,low,close,volume\n")
	for i := range n {
		b.WriteString(strconv.Itoa(start+60*i) + ",4.255,4.256,4.252,4.252,25259.1\n")
	}
	return b.String()
}

// TestOutRefusesInputData: --out (and --blocks-out) refuse every file a
// --data spec reads, not only a single file: a file of a folder or a
// glob, the zip archive of a member, through a symbolic link too; and a
// new file a folder or a glob would take in on its next load. Each is
// refused with exit 1 before anything runs, naming the input, and the
// input is byte-identical afterwards. An --out elsewhere still works.
func TestOutRefusesInputData(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(folder, "a.csv"), filepath.Join(folder, "b.csv")
	inputs := map[string][]byte{a: []byte(barsCSV(1690848000, 30)), b: []byte(barsCSV(1690848000+60*30, 30))}
	zipPath := filepath.Join(dir, "z.zip")
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for _, name := range []string{"a.csv", "b.csv"} {
		w, _ := zw.Create(name)
		w.Write(inputs[filepath.Join(folder, name)])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	inputs[zipPath] = zb.Bytes()
	for p, body := range inputs {
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	linkDir := filepath.Join(dir, "link")
	links := runtime.GOOS != "windows" && os.Symlink(folder, linkDir) == nil
	xdg := t.TempDir()
	small := []string{"--hma", "2:3", "--hma3", "6:7", "--backend", "reference", "--no-save", "-q", "--format", "csv"}
	run := func(args ...string) result {
		return cli(t, xdg, append(append([]string{"run"}, args...), small...)...)
	}
	type refusal struct {
		name string
		args []string
		says string
	}
	cases := []refusal{
		{"folder member", []string{"--data", folder, "--out", b}, "--out " + b + " is a file of the input data " + folder + ": refusing to overwrite it"},
		{"glob match", []string{"--data", filepath.Join(folder, "*.csv"), "--out", a}, "--out " + a + " is a file of the input data " + filepath.Join(folder, "*.csv") + ": refusing"},
		{"zip archive of a member", []string{"--data", zipPath + "#a.csv", "--out", zipPath}, "--out " + zipPath + " is the zip archive of the input data " + zipPath + "#a.csv: refusing"},
		{"new file in the folder", []string{"--data", folder, "--out", filepath.Join(folder, "res.csv")}, "would become part of the input data " + folder},
		{"new file the glob matches", []string{"--data", filepath.Join(folder, "*.csv"), "--out", filepath.Join(folder, "res.csv")}, "would become part of the input data"},
		{"--blocks-out in the folder", []string{"--data", folder, "--blocks", "2", "--blocks-out", filepath.Join(folder, "blocks.parquet")}, "--blocks-out: --out " + filepath.Join(folder, "blocks.parquet") + " would become part of the input data"},
	}
	if links {
		cases = append(cases,
			refusal{"folder file through a link", []string{"--data", folder, "--out", filepath.Join(linkDir, "a.csv")}, "is a file of the input data " + folder},
			refusal{"new file through a linked folder", []string{"--data", linkDir, "--out", filepath.Join(folder, "res.csv")}, "would become part of the input data " + linkDir},
			refusal{"glob through a link", []string{"--data", filepath.Join(linkDir, "*.csv"), "--out", filepath.Join(folder, "new.csv")}, "would become part of the input data"},
		)
	}
	for _, c := range cases {
		r := run(c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.says) || r.stdout != "" {
			t.Errorf("%s: %v: exit %d, stderr %q, %d bytes on stdout; want exit 1 saying %q", c.name, c.args, r.code, r.stderr, len(r.stdout), c.says)
		}
	}
	for p, body := range inputs {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
			t.Errorf("%s changed", p)
		}
	}
	for _, p := range []string{"res.csv", "blocks.parquet", "new.csv"} {
		if _, err := os.Stat(filepath.Join(folder, p)); err == nil {
			t.Errorf("%s written in the input folder", p)
		}
	}
	// The dataset still loads, and an --out elsewhere (beside the folder,
	// with a name the glob would match were it in the folder; a file the
	// folder would not read) is written.
	for _, c := range [][]string{
		{"--data", folder, "--out", filepath.Join(dir, "res.csv")},
		{"--data", filepath.Join(folder, "*.csv"), "--out", filepath.Join(dir, "a.csv")},
		{"--data", zipPath + "#a.csv", "--out", filepath.Join(dir, "z.csv")},
		{"--data", folder, "--out", filepath.Join(folder, "notes.md")},
	} {
		r := run(c...)
		if r.code != 0 {
			t.Errorf("%v: exit %d: %s", c, r.code, r.stderr)
			continue
		}
		if got, err := os.ReadFile(c[3]); err != nil || len(got) == 0 {
			t.Errorf("%v: %v, %d bytes written", c, err, len(got))
		}
	}
	// The sessions commands that write a file keep the saved session's
	// input data as well.
	db := filepath.Join(dir, "s.db")
	if r := cli(t, xdg, "run", "--data", folder, "--hma", "2:3", "--hma3", "6:7", "--backend", "reference", "-q", "--db", db); r.code != 0 {
		t.Fatalf("the folder after the refusals: exit %d: %s", r.code, r.stderr)
	}
	for _, c := range []refusal{
		{"export over a folder file", []string{"sessions", "export", "1", "--db", db, "--out", b}, "is a file of the session's input data " + folder},
		{"export into the folder", []string{"sessions", "export", "1", "--db", db, "--out", filepath.Join(folder, "res.csv")}, "would become part of the session's input data " + folder},
		{"report over a folder file", []string{"sessions", "report", "1", "--db", db, "--out", a}, "is a file of the session's input data " + folder},
	} {
		r := cli(t, xdg, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.says) || r.stdout != "" {
			t.Errorf("%s: %v: exit %d, stderr %q, %d bytes on stdout; want exit 1 saying %q", c.name, c.args, r.code, r.stderr, len(r.stdout), c.says)
		}
	}
	for p, body := range inputs {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
			t.Errorf("%s changed by sessions", p)
		}
	}
}
