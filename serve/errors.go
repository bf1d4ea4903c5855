package serve

import (
	"fmt"
	"strconv"
)

// Limit names a per-user limit of the queue.
type Limit string

const (
	// LimitStudies is the studies one user may have computing or waiting
	// at once, over all their connections.
	LimitStudies Limit = "studies"
	// LimitCombos is the combos x precisions one study may hold.
	LimitCombos Limit = "combos"
)

// LimitError is a study the queue refused: Value would exceed Max.
type LimitError struct {
	Limit Limit
	Value int
	Max   int
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitStudies:
		return fmt.Sprintf("server limit: %d studies of yours computing or waiting at once (this would be your %s); wait for one to end or cancel it", e.Max, ordinal(e.Value))
	case LimitCombos:
		return fmt.Sprintf("server limit: a study of %s combos x precisions is over this server's %s; use a coarser grid or one precision", thousands(e.Value), thousands(e.Max))
	}
	return fmt.Sprintf("server limit %s: %d over %d", e.Limit, e.Value, e.Max)
}

// KeysError is an authorized_keys file that cannot be used: Line is the
// 1-based line at fault, 0 for the file as a whole.
type KeysError struct {
	Path string
	Line int
	Err  error
}

func (e *KeysError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("authorized keys %s: line %d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("authorized keys %s: %v", e.Path, e.Err)
}

func (e *KeysError) Unwrap() error { return e.Err }

// HostKeyError is a host key file that cannot be created, read or used.
type HostKeyError struct {
	Path string
	Op   string // "create", "read", "parse", "check"
	Err  error
}

func (e *HostKeyError) Error() string { return fmt.Sprintf("host key %s: %s: %v", e.Path, e.Op, e.Err) }
func (e *HostKeyError) Unwrap() error { return e.Err }

// ConfigError is a Config field with a value the server cannot run with.
type ConfigError struct {
	Field string // the Config field, e.g. "MaxSessions"
	Value string
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

func ordinal(n int) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	return strconv.Itoa(n) + suf
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
