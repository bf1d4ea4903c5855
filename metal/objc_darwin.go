//go:build darwin

package metal

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// The Objective-C side of the backend: the Metal framework opened with
// purego.Dlopen, messages sent with objc.Send. Every object this file
// creates with new*/alloc is released by its owner; everything else is
// autoreleased and lives until the pool of the calling function drains.

const (
	metalFramework      = "/System/Library/Frameworks/Metal.framework/Metal"
	foundationFramework = "/System/Library/Frameworks/Foundation.framework/Foundation"

	storageModeShared   = 0 // MTLResourceStorageModeShared (and default CPU cache mode)
	mathModeSafe        = 0 // MTLMathModeSafe
	mathFunctionPrecise = 1 // MTLMathFloatingPointFunctionsPrecise
	cbStatusCompleted   = 4 // MTLCommandBufferStatusCompleted
	cbStatusError       = 5 // MTLCommandBufferStatusError
)

var (
	loadOnce sync.Once
	loadErr  error
	// mtlCreateSystemDefaultDevice is MTLCreateSystemDefaultDevice (returns +1).
	mtlCreateSystemDefaultDevice func() objc.ID
)

// Selectors, registered once.
var (
	selAlloc, selInit, selNew, selRelease, selDrain          objc.SEL
	selStringWithUTF8String, selUTF8String, selLocalizedDesc objc.SEL
	selRespondsToSelector                                    objc.SEL
	selName, selMaxWorkingSet, selMaxBufferLength            objc.SEL
	selNewCommandQueue, selNewLibrary, selNewFunction        objc.SEL
	selNewPipeline, selMaxThreads                            objc.SEL
	selSetFastMath, selSetMathMode, selSetMathFunctions      objc.SEL
	selNewBufferLength, selNewBufferBytes, selContents       objc.SEL
	selLength                                                objc.SEL
	selCommandBuffer, selComputeEncoder, selSetPipeline      objc.SEL
	selSetBuffer, selSetBytes, selDispatch, selEndEncoding   objc.SEL
	selCommit, selWaitUntilCompleted, selStatus, selError    objc.SEL
	selGPUStart, selGPUEnd                                   objc.SEL
)

// loadMetal opens Foundation and Metal and registers the selectors.
func loadMetal() error {
	loadOnce.Do(func() {
		if _, err := purego.Dlopen(foundationFramework, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
			loadErr = fmt.Errorf("Foundation framework not found (%s): %w", foundationFramework, err)
			return
		}
		h, err := purego.Dlopen(metalFramework, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = fmt.Errorf("Metal framework not found (%s): %w", metalFramework, err)
			return
		}
		sym, err := purego.Dlsym(h, "MTLCreateSystemDefaultDevice")
		if err != nil {
			loadErr = fmt.Errorf("Metal framework: MTLCreateSystemDefaultDevice: %w", err)
			return
		}
		purego.RegisterFunc(&mtlCreateSystemDefaultDevice, sym)
		for _, s := range []struct {
			p    *objc.SEL
			name string
		}{
			{&selAlloc, "alloc"}, {&selInit, "init"}, {&selNew, "new"}, {&selRelease, "release"}, {&selDrain, "drain"},
			{&selStringWithUTF8String, "stringWithUTF8String:"}, {&selUTF8String, "UTF8String"},
			{&selLocalizedDesc, "localizedDescription"}, {&selRespondsToSelector, "respondsToSelector:"},
			{&selName, "name"}, {&selMaxWorkingSet, "recommendedMaxWorkingSetSize"}, {&selMaxBufferLength, "maxBufferLength"},
			{&selNewCommandQueue, "newCommandQueue"}, {&selNewLibrary, "newLibraryWithSource:options:error:"},
			{&selNewFunction, "newFunctionWithName:"}, {&selNewPipeline, "newComputePipelineStateWithFunction:error:"},
			{&selMaxThreads, "maxTotalThreadsPerThreadgroup"},
			{&selSetFastMath, "setFastMathEnabled:"}, {&selSetMathMode, "setMathMode:"},
			{&selSetMathFunctions, "setMathFloatingPointFunctions:"},
			{&selNewBufferLength, "newBufferWithLength:options:"}, {&selNewBufferBytes, "newBufferWithBytes:length:options:"},
			{&selContents, "contents"}, {&selLength, "length"},
			{&selCommandBuffer, "commandBuffer"}, {&selComputeEncoder, "computeCommandEncoder"},
			{&selSetPipeline, "setComputePipelineState:"}, {&selSetBuffer, "setBuffer:offset:atIndex:"},
			{&selSetBytes, "setBytes:length:atIndex:"}, {&selDispatch, "dispatchThreadgroups:threadsPerThreadgroup:"},
			{&selEndEncoding, "endEncoding"}, {&selCommit, "commit"}, {&selWaitUntilCompleted, "waitUntilCompleted"},
			{&selStatus, "status"}, {&selError, "error"}, {&selGPUStart, "GPUStartTime"}, {&selGPUEnd, "GPUEndTime"},
		} {
			*s.p = objc.RegisterName(s.name)
		}
	})
	return loadErr
}

// withPool runs f on a locked OS thread inside an autorelease pool, so
// that the autoreleased objects f receives (strings, errors, command
// buffers, encoders) are released when it returns.
func withPool(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pool := objc.ID(objc.GetClass("NSAutoreleasePool")).Send(selNew)
	defer pool.Send(selDrain)
	return f()
}

// nsString returns an autoreleased NSString holding s.
func nsString(s string) objc.ID {
	return objc.ID(objc.GetClass("NSString")).Send(selStringWithUTF8String, s)
}

// goString copies an NSString into Go ("" for nil).
func goString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	p := objc.Send[*byte](s, selUTF8String)
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// nsError turns an NSError into a Go error with its localizedDescription
// (nil for nil), prefixed with what was being done.
func nsError(what string, e objc.ID) error {
	if e == 0 {
		return nil
	}
	msg := goString(e.Send(selLocalizedDesc))
	if msg == "" {
		msg = "unknown error (no description)"
	}
	return fmt.Errorf("%s: %s", what, msg)
}

// release sends release to a non-nil object this package owns.
func release(o objc.ID) {
	if o != 0 {
		o.Send(selRelease)
	}
}

var errNoDevice = errors.New("no Metal device (MTLCreateSystemDefaultDevice returned nil): this Mac has no GPU Metal can use")
