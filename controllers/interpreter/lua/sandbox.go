package lua

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// maxStringResult bounds the strings string.rep may build.
const maxStringResult = 1 << 20

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

// newState returns a sandboxed state with the kube module preloaded.
func newState() *lua.LState { return newSandbox(false) }

// newSandbox returns a sandboxed state with the kube module preloaded, its
// pod-template helpers returning Go values when opaque (kubeModule).
func newSandbox(opaque bool) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, IncludeGoStackTrace: false})
	for _, lib := range []struct {
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
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range unsafeBase {
		L.SetGlobal(name, forbidden(L, name))
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
		// Arguments are bounded: no string over maxStringResult goes in,
		// and format widths and precisions stay small, so no call can
		// build a huge string.
		for name := range safeString {
			if name == "rep" {
				continue // replaced below
			}
			if f, ok := str.RawGetString(name).(*lua.LFunction); ok {
				str.RawSetString(name, bounded(L, "string."+name, f))
			}
		}
		str.RawSetString("rep", L.NewFunction(boundedRep))
	}

	os := L.NewTable()
	if full, ok := L.GetGlobal(lua.OsLibName).(*lua.LTable); ok {
		os.RawSetString("time", full.RawGetString("time"))
		os.RawSetString("date", full.RawGetString("date"))
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
	L.PreloadModule("kube", kubeModule(opaque))
	return L
}

// forbidden returns a function raising an error naming what was called.
func forbidden(L *lua.LState, name string) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s is not allowed in resource interpreter scripts", name)
		return 0
	})
}

// maxFormatWidth bounds the width and precision in string.format verbs.
const maxFormatWidth = 1000

// bounded wraps a string function: string arguments longer than
// maxStringResult and, for string.format, widths or precisions over
// maxFormatWidth raise an error instead of running f.
func bounded(L *lua.LState, name string, f *lua.LFunction) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		for i := 1; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(lua.LString); ok && len(s) > maxStringResult {
				L.RaiseError("%s: argument %d longer than %d bytes", name, i, maxStringResult)
				return 0
			}
		}
		if name == "string.format" {
			if s, ok := L.Get(1).(lua.LString); ok && !formatWidthsBounded(string(s)) {
				L.RaiseError("%s: width or precision over %d", name, maxFormatWidth)
				return 0
			}
		}
		top := L.GetTop()
		L.Push(f)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, lua.MultRet)
		return L.GetTop() - top
	})
}

// formatWidthsBounded tells whether every number in the verbs of a format
// string (flags, width, precision) is at most maxFormatWidth.
func formatWidthsBounded(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		n := 0
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				n = n*10 + int(c-'0')
				if n > maxFormatWidth {
					return false
				}
			case c == '.' || c == '-' || c == '+' || c == ' ' || c == '#':
				n = 0
			default:
				n = -1
			}
			if n < 0 {
				break
			}
		}
	}
	return true
}

// boundedRep is string.rep refusing results over maxStringResult bytes.
func boundedRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if len(s) > maxStringResult/n {
		L.RaiseError("string.rep: result longer than %d bytes", maxStringResult)
		return 0
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
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
