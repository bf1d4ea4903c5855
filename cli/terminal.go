package cli

import (
	"bytes"
	"io"
	"sync"
	"unicode/utf8"

	"sweepbench/engine/data"
)

// sanitized is a writer for text meant to be read on a terminal (the
// table `run` and `sessions show` print, `sessions ls`, notes, paths): each
// line's text passes through data.Sanitize, the one sanitiser, so that a
// control character from outside (a file name, a CSV header, a saved
// note) shows as \x1b instead of moving the cursor, retitling the window
// or turning the text red. Newlines pass; a tab shows as \x09 (the tables
// align with spaces). Machine formats (JSON, CSV, Parquet) are written
// without it to a pipe or a file: they keep the bytes, escaped by their
// own syntax; on a terminal the text ones pass it too (toStdout).
//
// A character split across two writes is held back until the next one
// (Flush writes what is held). Writes may come from several goroutines
// (a save warning from the sessions writer).
type sanitized struct {
	w    io.Writer
	mu   sync.Mutex
	held []byte // the start of a UTF-8 sequence cut by the end of a write
	buf  []byte
}

func newSanitized(w io.Writer) *sanitized { return &sanitized{w: w} }

func (s *sanitized) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	if len(s.held) > 0 {
		p = append(s.held, p...)
		s.held = nil
	}
	// Hold back an incomplete UTF-8 sequence at the end.
	if k := incompleteTail(p); k > 0 {
		s.held = append([]byte(nil), p[len(p)-k:]...)
		p = p[:len(p)-k]
	}
	s.buf = s.buf[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.buf = append(s.buf, data.Sanitize(string(p))...)
			break
		}
		s.buf = append(append(s.buf, data.Sanitize(string(p[:i]))...), '\n')
		p = p[i+1:]
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a held incomplete sequence (escaped as the invalid bytes
// it is).
func (s *sanitized) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held) == 0 {
		return nil
	}
	_, err := io.WriteString(s.w, data.Sanitize(string(s.held)))
	s.held = nil
	return err
}

// incompleteTail is the length of a UTF-8 sequence that p ends in the
// middle of (0 when p ends on a whole character or invalid bytes).
func incompleteTail(p []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0 // ASCII: whole
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(p[len(p)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
