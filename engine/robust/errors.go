package robust

import (
	"errors"
	"fmt"

	"sweepbench/engine"
)

// The kinds of bad input, for errors.Is; every error this package returns
// for bad input is an *InputError wrapping one of them.
var (
	// ErrBlocks: a block count that the computation cannot use (odd for
	// PBO, below the minimum, above MaxBlocks or MaxPBOBlocks), or a block
	// index or mask outside the statistics' blocks.
	ErrBlocks = errors.New("bad block count")
	// ErrEmpty: no combos, no bars, or an empty grid.
	ErrEmpty = errors.New("empty input")
	// ErrLength: slices whose lengths do not match the shapes they
	// describe (a BlockStats field, a mask of selectable combos, a grid).
	ErrLength = errors.New("mismatched lengths")
	// ErrValue: a value out of its domain (a NaN sum, a negative count, a
	// kurtosis below 1, an even neighbourhood size, bounds not increasing).
	ErrValue = errors.New("value out of range")
	// ErrNoSelectable: every combo is excluded by the constraints, so
	// nothing can be chosen.
	ErrNoSelectable = errors.New("no selectable combo")
	// ErrNotDecomposable: a metric that the block statistics cannot give
	// over a union of blocks (max_drawdown, calmar, var_95, cvar_95, omega,
	// the bar counts by side), or an unknown name.
	ErrNotDecomposable = errors.New("metric is not decomposable over blocks")
)

// InputError names the argument (Arg: a parameter or field name such as
// "blocks", "Sum", "selectable"), what was wrong with it (Detail, in words
// with the numbers) and its kind (Err, one of the Err* values above).
type InputError struct {
	Arg    string
	Detail string
	Err    error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("robust: %s: %s (%v)", e.Arg, e.Detail, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// inputErr builds an *InputError with a formatted detail.
func inputErr(kind error, arg, format string, args ...any) error {
	return &InputError{Arg: arg, Detail: fmt.Sprintf(format, args...), Err: kind}
}

// reason is an *InputError's detail as the reason of an
// engine.FieldError, which names the field itself; errors.Is still finds
// its kind.
type reason struct {
	text string
	kind error
}

func (e *reason) Error() string { return e.text }
func (e *reason) Unwrap() error { return e.kind }

// fieldErr is err (an *InputError, or any error) as the *engine.FieldError
// of field with value: the detail without the package's prefix.
func fieldErr(field, value string, err error) *engine.FieldError {
	var ie *InputError
	if errors.As(err, &ie) {
		err = &reason{ie.Detail, ie.Err}
	}
	return &engine.FieldError{Field: field, Value: value, Err: err}
}
