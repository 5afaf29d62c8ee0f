package lua

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// unsafeBase are the base functions replaced by functions raising an
// error: they reach the file system, other chunks' environments or the
// metatables, or the collector.
var unsafeBase = []string{
	"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
	"rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy", "_printregs",
}

// safeString are the string functions scripts may use (no gmatch/gfind).
var safeString = map[string]bool{
	"byte": true, "char": true, "dump": true, "find": true, "format": true, "gsub": true, "len": true,
	"lower": true, "match": true, "rep": true, "reverse": true, "sub": true, "upper": true,
}

// chargedString are the string functions wrapped to have the strings they
// return charged to the call's budget: the others return numbers or
// substrings, which share their subject's bytes.
var chargedString = map[string]bool{"char": true, "lower": true, "reverse": true, "upper": true}

// newState returns a sandboxed state with the kube module preloaded and
// the default limits, for tests.
func newState() *lua.LState {
	L, _ := newSandbox(false, Limits{})
	return L
}

// newSandbox returns a sandboxed state with the kube module preloaded, its
// pod-template helpers returning Go values when opaque (kubeModule), and
// the budget its bounded functions charge.
func newSandbox(opaque bool, lim Limits) (*lua.LState, *budget) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, IncludeGoStackTrace: false,
		CallStackSize: callStackSize, RegistrySize: registrySize, RegistryMaxSize: registryMaxSize})
	// An error outside any pcall carries no traceback: gopher-lua's lists
	// one line per tail call made in a frame, millions within the deadline.
	L.Panic = panicWithoutTraceback
	b := newBudget(lim)
	lib := strlib{b: b}
	for _, open := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		L.Push(L.NewFunction(open.open))
		L.Push(lua.LString(open.name))
		L.Call(1, 0)
	}
	for _, name := range unsafeBase {
		L.SetGlobal(name, forbidden(L, name))
	}
	L.SetGlobal("pcall", L.NewFunction(pcall))
	L.SetGlobal("xpcall", L.NewFunction(xpcall))
	if print, ok := L.GetGlobal("print").(*lua.LFunction); ok {
		L.SetGlobal("print", L.NewFunction(lib.print(print)))
	}
	// The functions scripts are compiled to call (rewrite).
	for name, f := range map[string]lua.LGFunction{
		concatGlobal: lib.concat, setGlobal: lib.set, newGlobal: lib.new, keyGlobal: lib.key,
	} {
		L.SetGlobal(name, L.NewFunction(f))
	}

	// The string module is also the __index of every string value, so
	// trimming it in place restricts s:gmatch() as well.
	if str, ok := L.GetGlobal(lua.StringLibName).(*lua.LTable); ok {
		var drop []string
		str.ForEach(func(k, _ lua.LValue) {
			if name := k.String(); !safeString[name] && name != "__index" {
				drop = append(drop, name)
			}
		})
		for _, name := range drop {
			str.RawSetString(name, lua.LNil)
		}
		format, _ := str.RawGetString("format").(*lua.LFunction)
		own := map[string]lua.LGFunction{
			"rep": lib.rep, "format": lib.format(format), "find": lib.find, "match": lib.match, "gsub": lib.gsub,
		}
		for name := range safeString {
			if f, ok := own[name]; ok {
				str.RawSetString(name, L.NewFunction(f))
			} else if f, ok := str.RawGetString(name).(*lua.LFunction); ok {
				str.RawSetString(name, lib.wrap(L, "string."+name, f, chargedString[name]))
			}
		}
	}
	if tbl, ok := L.GetGlobal(lua.TabLibName).(*lua.LTable); ok {
		tbl.RawSetString("concat", L.NewFunction(lib.tableConcat))
		tbl.RawSetString("sort", L.NewFunction(lib.sort))
		tbl.RawSetString("insert", L.NewFunction(lib.insert))
	}

	os := L.NewTable()
	if full, ok := L.GetGlobal(lua.OsLibName).(*lua.LTable); ok {
		os.RawSetString("time", full.RawGetString("time"))
		if date, ok := full.RawGetString("date").(*lua.LFunction); ok {
			os.RawSetString("date", L.NewFunction(lib.date(date)))
		}
	}
	L.SetGlobal(lua.OsLibName, os)

	// require finds preloaded modules only: the Lua file loader goes, and
	// so does loadlib.
	if pkg, ok := L.GetGlobal(lua.LoadLibName).(*lua.LTable); ok {
		pkg.RawSetString("loadlib", forbidden(L, "package.loadlib"))
		pkg.RawSetString("path", lua.LString(""))
		pkg.RawSetString("cpath", lua.LString(""))
		if loaders, ok := pkg.RawGetString("loaders").(*lua.LTable); ok {
			for i := loaders.Len(); i > 1; i-- {
				loaders.RawSetInt(i, lua.LNil)
			}
		}
	}
	L.PreloadModule("kube", kubeModule(opaque, b))
	return L, b
}

// forbidden returns a function raising an error naming what was called.
func forbidden(L *lua.LState, name string) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s is not allowed in resource interpreter scripts", name)
		return 0
	})
}

func panicWithoutTraceback(L *lua.LState) {
	panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: L.Get(-1)})
}

// keepError is the error handler of protected calls: it returns the error
// as it is. With no handler, gopher-lua adds a traceback to the error,
// whose length grows with the tail calls made (see newSandbox).
func keepError(L *lua.LState) int { return 1 }

// pcall is the base pcall with keepError as the handler. When the error
// is a call stack overflow, the handler itself cannot be called and
// gopher-lua still builds a traceback.
func pcall(L *lua.LState) int {
	L.CheckAny(1)
	if err := L.PCall(L.GetTop()-1, lua.MultRet, L.NewFunction(keepError)); err != nil {
		L.Push(lua.LFalse)
		L.Push(errorValue(err))
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// xpcall is the base xpcall calling the script's handler protected, so
// that an error in the handler does not make gopher-lua build a traceback.
func xpcall(L *lua.LState) int {
	fn := L.CheckFunction(1)
	handler := L.CheckFunction(2)
	top := L.GetTop()
	L.Push(fn)
	err := L.PCall(0, lua.MultRet, L.NewFunction(func(L *lua.LState) int {
		msg := L.Get(1)
		L.Push(handler)
		L.Push(msg)
		if err := L.PCall(1, 1, L.NewFunction(keepError)); err != nil {
			L.Push(errorValue(err))
		}
		return 1
	}))
	if err != nil {
		L.Push(lua.LFalse)
		L.Push(errorValue(err))
		return 2
	}
	L.Insert(lua.LTrue, top+1)
	return L.GetTop() - top
}

// errorValue is the Lua value of a protected call's error.
func errorValue(err error) lua.LValue {
	if apiErr, ok := err.(*lua.ApiError); ok {
		return apiErr.Object
	}
	return lua.LString(err.Error())
}

// protectedCall calls fn with args and leaves nret results on the stack.
// Unlike PCall, it recovers the error itself: PCall calls a handler, which
// fails when the error is a call stack overflow, and gopher-lua then
// builds a traceback. The state is left as the error found it, so the
// caller must close it after an error.
func protectedCall(L *lua.LState, fn lua.LValue, nret int, args ...lua.LValue) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if apiErr, ok := r.(*lua.ApiError); ok {
				err = apiErr
				return
			}
			err = fmt.Errorf("%v", r)
		}
	}()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	L.Call(len(args), nret)
	return nil
}

// errorString turns a Lua error into a short message: the script's
// message with its line, without gopher-lua's stack traceback.
func errorString(err error) string {
	if apiErr, ok := err.(*lua.ApiError); ok {
		msg := apiErr.Object.String()
		return strings.TrimSpace(msg)
	}
	return fmt.Sprint(err)
}
