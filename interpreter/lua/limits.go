package lua

import (
	"context"
	"errors"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The default limits of one call of a script (see Limits).
const (
	// DefaultTimeout bounds each call of a script, as Karmada's one second.
	DefaultTimeout = time.Second
	// DefaultMaxStringBytes bounds any one string a script builds. Objects
	// are stored in etcd, whose requests are at most 1.5 MiB: no field of
	// an object needs a longer string.
	DefaultMaxStringBytes = 1 << 20
	// DefaultMaxCallBytes bounds the bytes all the strings a call builds add
	// up to, garbage included.
	DefaultMaxCallBytes = 16 << 20
	// DefaultMaxResultValues bounds the Lua values visited converting a
	// call's results to Go: a Deployment is a few hundred.
	DefaultMaxResultValues = 100_000
	// DefaultMaxResultBytes bounds the string bytes of a call's converted
	// results, each string counted each time it is met.
	DefaultMaxResultBytes = 16 << 20
	// DefaultMaxTableValues bounds the values a call adds to tables,
	// garbage included. A script copying a whole Deployment adds a few
	// hundred, and a result holds at most DefaultMaxResultValues: twice
	// that lets a script build the largest result it may return, and as
	// much again of working tables.
	DefaultMaxTableValues = 200_000
)

// The sizes of a state's stacks. gopher-lua's registry (the value stack)
// is fixed at RegistrySize when RegistryMaxSize is 0: a call pushing more
// values (unpack, string.byte over a long string, deep recursion) fails
// with "registry overflow" instead of growing it.
const (
	callStackSize   = 256
	registrySize    = 256 * 20
	registryMaxSize = 0
)

// Limits bound the work one call of a script may do; a zero field takes
// its default. Every limit is checked before the work it bounds is done,
// except where a comment says otherwise.
type Limits struct {
	// Timeout bounds the call, the conversion of its results included.
	Timeout time.Duration
	// MaxStringBytes bounds any one string built by a string function,
	// table.concat or the .. operator, and the strings given to them.
	MaxStringBytes int
	// MaxCallBytes bounds the bytes those strings add up to in one call.
	MaxCallBytes int64
	// MaxResultValues bounds the values visited converting the results; a
	// table reached twice is visited twice.
	MaxResultValues int
	// MaxResultBytes bounds the string bytes of the converted results.
	MaxResultBytes int64
	// MaxTableValues bounds the values the script adds to tables in one
	// call, garbage included: each value stored under a key its table did
	// not have, each table built with its entries, each closure made with
	// its upvalues, and the nils gopher-lua fills an array with up to an
	// index past its end (tables.go).
	MaxTableValues int
}

// withDefaults returns l with its zero fields set to their defaults.
func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = DefaultMaxStringBytes
	}
	if l.MaxCallBytes <= 0 {
		l.MaxCallBytes = DefaultMaxCallBytes
	}
	if l.MaxResultValues <= 0 {
		l.MaxResultValues = DefaultMaxResultValues
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	if l.MaxTableValues <= 0 {
		l.MaxTableValues = DefaultMaxTableValues
	}
	return l
}

// budget is what the call running in a state may still do. Each state has
// one, reset before each call; the sandbox's string functions charge the
// bytes they build and the steps of their pattern matching, its table
// functions the values the script adds to tables, and the conversion of
// the results the values it visits.
type budget struct {
	lim Limits
	// ctx is the state's context, cancelled when a call's deadline passes.
	ctx context.Context
	// bytes are those the bounded functions built in this call.
	bytes int64
	// steps counts pattern-matching steps, to look at ctx every so often.
	steps int
	// tableValues are the values the script added to tables in this call.
	tableValues int
	// values and resultBytes are what the conversion of the results met.
	values      int
	resultBytes int64
	// err is set when the call went over MaxCallBytes or MaxTableValues:
	// the call fails with it even when the script caught the Lua error.
	err error
}

func newBudget(lim Limits) *budget {
	return &budget{lim: lim.withDefaults(), ctx: context.Background()}
}

func (b *budget) reset() {
	b.bytes, b.steps, b.tableValues, b.values, b.resultBytes, b.err = 0, 0, 0, 0, 0, nil
}

// errDeadline is returned by a conversion stopped by the call's deadline.
var errDeadline = errors.New("deadline passed while converting the result")

// stepsPerCheck is how many pattern-matching steps run between two looks
// at the deadline (a power of two): a step is a few nanoseconds, a look at
// a cancellable context takes a lock.
const stepsPerCheck = 1 << 12

// step counts n steps of native work and raises a Lua error once the
// call's deadline has passed, so that no string function outlives it by
// more than stepsPerCheck steps.
func (b *budget) step(L *lua.LState, n int) {
	before := b.steps
	b.steps += n
	if before/stepsPerCheck != b.steps/stepsPerCheck {
		if err := b.ctx.Err(); err != nil {
			L.RaiseError("%v", err)
		}
	}
}

// checkString raises a Lua error when what would build a string of n bytes,
// over MaxStringBytes.
func (b *budget) checkString(L *lua.LState, what string, n int) {
	if n > b.lim.MaxStringBytes || n < 0 {
		L.RaiseError("%s: result longer than %d bytes (MaxStringBytes)", what, b.lim.MaxStringBytes)
	}
}

// alloc charges a string of n bytes that what is about to build. It
// raises a Lua error, before anything is built, when the string would be
// longer than MaxStringBytes or the call's strings would add up to more
// than MaxCallBytes.
func (b *budget) alloc(L *lua.LState, what string, n int) {
	b.checkString(L, what, n)
	b.bytes += int64(n)
	if b.bytes > b.lim.MaxCallBytes {
		if b.err == nil {
			b.err = fmt.Errorf("the strings built add up to more than %d bytes (MaxCallBytes)", b.lim.MaxCallBytes)
		}
		L.RaiseError("%s: %v", what, b.err)
	}
}

// store charges n values that what is about to add to a table. It raises
// a Lua error, before they are added, once the call's values would add up
// to more than MaxTableValues.
func (b *budget) store(L *lua.LState, what string, n int) {
	b.tableValues += n
	if b.tableValues > b.lim.MaxTableValues {
		if b.err == nil {
			b.err = fmt.Errorf("more than %d values added to tables (MaxTableValues)", b.lim.MaxTableValues)
		}
		L.RaiseError("%s: %v", what, b.err)
	}
}

// visit counts one value met converting a result, and its string bytes.
func (b *budget) visit(stringBytes int) error {
	b.values++
	if b.values > b.lim.MaxResultValues {
		return fmt.Errorf("result has more than %d values (MaxResultValues; a table reached twice counts twice)",
			b.lim.MaxResultValues)
	}
	b.resultBytes += int64(stringBytes)
	if b.resultBytes > b.lim.MaxResultBytes {
		return fmt.Errorf("result has more than %d bytes of strings (MaxResultBytes)", b.lim.MaxResultBytes)
	}
	if b.values%1024 == 0 && b.ctx.Err() != nil {
		return errDeadline
	}
	return nil
}
