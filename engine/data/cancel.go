package data

import (
	"context"
	"errors"
	"io"
)

// A load honours a context (OpenContext, LoadFileContext, ParseContext):
// every read of the stored bytes and of the decompressed text checks it,
// so a load of a huge or slowly decompressing file stops within one read
// (a few KiB) of the context being done, with an *Error that wraps the
// context's error (errors.Is(err, context.Canceled)).

// interrupted is the error of a load stopped by its context.
func interrupted(name string, err error) *Error {
	return &Error{File: name, Reason: "loading interrupted", Err: err}
}

// ctxErr is the context's error, nil for a nil context.
func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

// cancellable is a file (or the bytes of one) whose reads fail once ctx
// is done: Read and ReadAt check it first.
type cancellable struct {
	ctx  context.Context
	r    readerAtSeeker
	name string
}

// withContext returns r reading under ctx, or r itself when ctx is nil or
// can never be done.
func withContext(ctx context.Context, r readerAtSeeker, name string) readerAtSeeker {
	if ctx == nil || ctx.Done() == nil {
		return r
	}
	return &cancellable{ctx: ctx, r: r, name: name}
}

func (c *cancellable) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, interrupted(c.name, err)
	}
	return c.r.Read(p)
}

func (c *cancellable) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, interrupted(c.name, err)
	}
	return c.r.ReadAt(p, off)
}

func (c *cancellable) Seek(off int64, whence int) (int64, error) { return c.r.Seek(off, whence) }

// readerWithContext is a plain reader under ctx (Parse's input).
type readerWithContext struct {
	ctx  context.Context
	r    io.Reader
	name string
}

func (c *readerWithContext) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, interrupted(c.name, err)
	}
	return c.r.Read(p)
}

// readError is a failed read of name as an *Error; an *Error from below
// (a limit, an interrupted load) passes as it is.
func readError(name string, err error) *Error {
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	return &Error{File: name, Reason: "read: " + err.Error(), Err: err}
}
