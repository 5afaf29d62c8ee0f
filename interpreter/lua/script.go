package lua

import (
	"context"
	"fmt"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Script is a compiled script defining the global function Function.
// Calls borrow a state from a pool where the script has already run, so the
// script is neither parsed nor compiled nor executed per call. It is safe
// for concurrent use.
type Script struct {
	// Function is the global function calls invoke.
	Function string
	proto    *lua.FunctionProto
	states   chan *state
	// limits bound each call (Limits); limits.Timeout is its deadline.
	limits Limits
	// args says how much of each argument the function can reach.
	args analysis
	// opaqueHelpers says the script only hands back what the kube helpers
	// taking a pod template return: they return it as the Go value.
	opaqueHelpers bool
}

// returnsObject are the functions whose result is the object to use,
// merged into the original when they return their first argument.
var returnsObject = map[string]bool{"Retain": true, "ReviseReplica": true, "AggregateStatus": true}

// Compile parses and compiles source, which must define the global
// function fn; poolSize bounds the idle states kept (0: 8). Calls run
// within the default Limits.
func Compile(source, fn string, poolSize int) (*Script, error) {
	return CompileWithLimits(source, fn, poolSize, Limits{})
}

// CompileWithLimits is Compile with the limits of each call (a zero field
// takes its default).
func CompileWithLimits(source, fn string, poolSize int, limits Limits) (*Script, error) {
	chunk, err := parse.Parse(strings.NewReader(source), "luaScript")
	if err != nil {
		return nil, fmt.Errorf("Lua syntax error: %w", err) //nolint:staticcheck // ST1005: Lua is a proper noun; apis/config/validation says the same
	}
	// The analyses read the script as written, before it is rewritten.
	f, kube := findFunction(chunk, fn), kubeAliases(chunk)
	args, opaque := analyze(f, kube, returnsObject[fn]), opaqueHelperResults(chunk, fn, f, kube)
	proto, err := lua.Compile(rewrite(chunk), "luaScript")
	if err != nil {
		return nil, fmt.Errorf("Lua compile error: %w", err) //nolint:staticcheck // ST1005: Lua is a proper noun
	}
	if poolSize <= 0 {
		poolSize = 8
	}
	s := &Script{Function: fn, proto: proto, states: make(chan *state, poolSize), limits: limits.withDefaults(),
		args: args, opaqueHelpers: opaque}
	// Load one state now: a script that fails when run, or that does not
	// define the function, is reported here rather than on the first call.
	L, err := s.newState()
	if err != nil {
		return nil, err
	}
	s.put(L)
	return s, nil
}

// state is a sandboxed state where the script has run, with its deadline:
// the state keeps one cancellable context for its life, and a timer armed
// for each call cancels it. A state whose timer fired is never reused, so a
// call costs no new context or timer.
type state struct {
	L      *lua.LState
	timer  *time.Timer
	budget *budget
}

// newState returns a state in which the script has run.
func (s *Script) newState() (*state, error) {
	L, b := newSandbox(s.opaqueHelpers, s.limits)
	ctx, cancel := context.WithCancel(context.Background())
	b.ctx = ctx
	st := &state{L: L, timer: time.AfterFunc(s.limits.Timeout, cancel), budget: b}
	L.SetContext(ctx)
	err := protectedCall(L, L.NewFunctionFromProto(s.proto), lua.MultRet)
	if err == nil {
		err = b.err
	}
	if !st.timer.Stop() || err != nil {
		st.close()
		if err == nil {
			return nil, fmt.Errorf("running the script: did not finish within %v", s.limits.Timeout)
		}
		return nil, fmt.Errorf("running the script: %s", errorString(err))
	}
	L.SetTop(0)
	if _, ok := L.GetGlobal(s.Function).(*lua.LFunction); !ok {
		st.close()
		return nil, fmt.Errorf("the script does not define the global function %s", s.Function)
	}
	return st, nil
}

func (st *state) close() {
	st.timer.Stop()
	st.L.Close()
}

func (s *Script) get() (*state, error) {
	select {
	case st := <-s.states:
		return st, nil
	default:
		return s.newState()
	}
}

func (s *Script) put(st *state) {
	st.L.SetTop(0)
	select {
	case s.states <- st:
	default:
		st.close()
	}
}

// Call invokes the function with args built by the caller in the borrowed
// state (args receives the state) and hands its nret results to results
// while the state is still borrowed. The function and results, which
// converts the results within the call's budget b, run under the script's
// deadline: a conversion is work the script chose too. A state whose call
// failed or ran out of time is discarded rather than pooled.
func (s *Script) Call(nret int, args func(L *lua.LState) []lua.LValue, results func(ret []lua.LValue, b *budget) error) error {
	st, err := s.get()
	if err != nil {
		return err
	}
	L, b := st.L, st.budget
	in := args(L)
	b.reset()
	st.timer.Reset(s.limits.Timeout)
	err = protectedCall(L, L.GetGlobal(s.Function), nret, in...)
	if err == nil && b.err != nil {
		err = b.err // the script caught the error
	}
	if err != nil {
		inTime := st.timer.Stop()
		st.close()
		if !inTime {
			return fmt.Errorf("%s: did not finish within %v", s.Function, s.limits.Timeout)
		}
		return fmt.Errorf("%s: %s", s.Function, errorString(err))
	}
	var buf [2]lua.LValue
	ret := buf[:0]
	for i := range nret {
		ret = append(ret, L.Get(i-nret))
	}
	err = results(ret, b)
	if !st.timer.Stop() {
		st.close()
		if err != nil {
			return fmt.Errorf("%s: did not finish within %v", s.Function, s.limits.Timeout)
		}
		return nil
	}
	s.put(st)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Function, err)
	}
	return nil
}

// Arg converts v, the i-th argument of the function, to Lua as far as
// the function can reach it (all of it when the analysis could not tell).
func (s *Script) Arg(L *lua.LState, i int, v any) lua.LValue { return s.arg(L, i, v, nil) }

// ObjectArg converts the first argument of a function returning the object,
// and says which of the tables it made are the projection's own, for
// ObjectResult.
func (s *Script) ObjectArg(L *lua.LState, v any) (lua.LValue, map[*lua.LTable]bool) {
	own := map[*lua.LTable]bool{}
	return s.arg(L, 0, v, own), own
}

func (s *Script) arg(L *lua.LState, i int, v any, own map[*lua.LTable]bool) lua.LValue {
	if s.args.whole || i >= len(s.args.params) {
		return toLua(L, v)
	}
	return projectToLua(L, v, s.args.params[i], own)
}

// ObjectResult converts the object the function returned, within b. When it is the
// first argument as passed (arg0, made by ObjectArg with own), the parts the
// function could reach are merged into original, the object arg0 was made
// from.
func (s *Script) ObjectResult(b *budget, ret, arg0 lua.LValue, own map[*lua.LTable]bool, original map[string]any) (map[string]any, error) {
	if t, ok := ret.(*lua.LTable); ok && ret == arg0 && own[t] && !s.args.whole && len(s.args.params) > 0 {
		if p := s.args.params[0]; !p.full {
			return b.mergeResult(original, t, p, own)
		}
	}
	conv, err := b.fromLua(ret, original)
	if err != nil {
		return nil, err
	}
	m, ok := conv.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("returned %s, want an object", ret.Type())
	}
	return m, nil
}

// Close drops the pooled states.
func (s *Script) Close() {
	for {
		select {
		case st := <-s.states:
			st.close()
		default:
			return
		}
	}
}
