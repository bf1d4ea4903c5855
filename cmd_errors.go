package main

import (
	"strconv"
	"strings"

	"sweepbench/engine"
)

// phrase words an error for the command line: each study field the
// engine names (an *engine.FieldError, "hma3 \"5:10\": ...") reads as the
// flag that sets it ("--hma3 \"5:10\": ..."). Only the front end phrases;
// the library's errors stay neutral.
func phrase(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, fe := range engine.FieldErrors(err) {
		msg = strings.Replace(msg, fe.Error(), flagText(fe), 1)
	}
	return msg
}

// flagText is one field error as the flag's: --NAME VALUE: reason.
func flagText(fe *engine.FieldError) string {
	v := fe.Value
	if v == "" {
		return "--" + fe.Field + ": " + fe.Err.Error()
	}
	if strings.ContainsAny(v, " \t") && !strings.HasPrefix(v, `"`) {
		v = strconv.Quote(v)
	}
	return "--" + fe.Field + " " + v + ": " + fe.Err.Error()
}
