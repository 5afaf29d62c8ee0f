package lua

import (
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// A call fails once the values its script adds to tables add up to more
// than MaxTableValues, however it adds them, well before the deadline and
// without building what it asked for, even when the script catches the
// error.
func TestTableLimits(t *testing.T) {
	t.Parallel()
	const timeout = 10 * time.Second
	for _, tc := range []struct{ name, body, want string }{
		{"growing a table", `local t = {} for i = 1, 1e8 do t[i] = i end`,
			"table field assignment: more than 200000 values added to tables (MaxTableValues)"},
		{"growing a table by #t + 1", `local t = {} for i = 1, 1e8 do t[#t + 1] = i end`, "table field assignment: more than"},
		{"string keys", `local t = {} for i = 1, 1e8 do t["k" .. i] = i end`, "table field assignment: more than"},
		{"fields of a global", `g = {} for i = 1, 1e8 do g[-i] = true end`, "table field assignment: more than"},
		{"multiple assignment", `local t = {} for i = 1, 1e8 do t[2 * i], t[2 * i + 1] = i, i end`, "table field assignment: more than"},
		{"caught by pcall", `local ok = pcall(function() local t = {} for i = 1, 1e8 do t[i] = i end end) assert(not ok)`,
			"more than 200000 values added to tables (MaxTableValues)"},
		{"caught by pcall each time", `local t = {} local function add(i) t[i] = i end for i = 1, 300000 do pcall(add, i) end`,
			"(MaxTableValues)"},
		{"caught by xpcall", `xpcall(function() local t = {} for i = 1, 1e8 do t[i] = i end end, function(e) return e end)`,
			"(MaxTableValues)"},
		{"a chain of tables", `local t = {} for i = 1, 1e8 do t = {t} end`, "new table: more than"},
		{"a chain of closures", `local f = function() end for i = 1, 1e8 do local g = f f = function() return g end end`,
			"new closure: more than"},
		{"local functions", `local fs = {} for i = 1, 1e8 do local function f() return i end fs = {f, fs} end`, "(MaxTableValues)"},
		{"function definitions", `local t = {} for i = 1, 1e8 do function t.f() end t = {f = t.f} end`, "(MaxTableValues)"},
		{"method definitions", `local t = {} for i = 1, 1e8 do local o = {} function o:m() return self end t[i] = o end`,
			"(MaxTableValues)"},
		{"table.insert", `local t = {} for i = 1, 1e8 do table.insert(t, i) end`, "table.insert: more than"},
		{"table.insert at the front", `local t = {} for i = 1, 1e8 do table.insert(t, 1, i) t = {} end`, "(MaxTableValues)"},
		{"constructors of unpacked tables", `local u = {} for i = 1, 5000 do u[i] = i end for i = 1, 1e8 do local t = {unpack(u)} end`,
			"new table: more than"},
		{"os.date tables", `local t = {} for i = 1, 1e8 do t[i] = os.date("*t") end`, "os.date: more than"},
		{"vararg functions keeping arg", `local function f(...) return arg end local t = {} for i = 1, 1e8 do t[i] = f(1, 2, 3) end`,
			"new table: more than"},
		// gopher-lua fills the array part of a table with nils up to an
		// integer key: 2^26 of them, a gigabyte, in one instruction.
		{"a far index", `local t = {} t[2^26 - 1] = 1`, "table field assignment: more than"},
		{"a far index in a constructor", `local t = {[2^26 - 1] = 1}`, "table constructor: more than"},
		{"table.insert at a far position", `table.insert({}, 2^26 - 1, 1)`, "table.insert: more than"},
		{"far indexes after a gap", `local t = {1} for i = 1, 30 do t[2^i + 1] = i end`, "table field assignment: more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			took, err := callBody(t, tc.body, Limits{Timeout: timeout})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if took > timeout/5 {
				t.Errorf("took %v with a deadline of %v", took, timeout)
			}
		})
	}
}

// What counts: each value stored under a new key, each table with its
// entries, each closure, and the nils an index past the end of an array
// makes gopher-lua add; replacing or removing a value counts nothing. Each
// body passes with MaxTableValues at its count and fails one below.
func TestTableValuesCounted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		values     int
	}{
		{"a table", `local t = {}`, 1},
		{"a table with entries", `local t = {1, 2, x = 3}`, 4},
		{"a table of a call's values", `local function f() return 1, 2, 3 end local t = {0, f()}`, 1 + 1 + 4},
		{"new keys", `local t = {} t.a = 1 t[1] = 2 t[true] = 3`, 4},
		{"replacing and removing", `local t = {} t.a = 1 t.a = 2 t.a = nil t.b = nil t[5] = nil`, 2},
		{"a key again after its removal", `local t = {} t.a = 1 t.a = nil t.a = 1`, 3},
		{"overwriting an index", `local t = {0} for i = 1, 1e6 do t[1] = i end`, 2},
		{"overwriting a key", `local t = {} for i = 1, 1000 do t.x = i end`, 2},
		{"multiple assignment", `local t, u = {}, {} local x t.a, x, u[1] = 1, 2, 3`, 4},
		{"an index past the end", `local t = {} t[10] = 1`, 11},
		{"an index inside a gap", `local t = {} t[10] = 1 t[5] = 1`, 12},
		{"an index past the end in a constructor", `local t = {[10] = 1}`, 12},
		{"indexes within a constructor", `local t = {[1] = 1, [2] = 2}`, 3},
		{"closures", `local f = function() end local function g() end`, 2},
		{"a closure and its upvalues", `local a, b = 1, 2 local f = function() return a + b end`, 3},
		{"function definitions", `local t = {} function t.f() end function t:m() end`, 5},
		{"table.insert", `local t = {} table.insert(t, 1) table.insert(t, 1, 2)`, 3},
		{"table.insert past the end", `local t = {} table.insert(t, 5, 1)`, 6},
		{"arg of a vararg function", `local function f(...) return arg end f(1, 2)`, 1 + 4},
		{"vararg functions not naming arg", `local function f(...) return ... end f(1, 2)`, 1},
		{"the table of os.date", `local d = os.date("*t")`, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := callBody(t, tc.body, Limits{MaxTableValues: tc.values}); err != nil {
				t.Errorf("with MaxTableValues %d: %v", tc.values, err)
			}
			if tc.values == 1 { // 0 is the default
				return
			}
			_, err := callBody(t, tc.body, Limits{MaxTableValues: tc.values - 1})
			if err == nil || !strings.Contains(err.Error(), "(MaxTableValues)") {
				t.Errorf("with MaxTableValues %d: error %v, want MaxTableValues", tc.values-1, err)
			}
		})
	}
}

// The functions scripts are compiled to call cannot be replaced, to stop
// counting or otherwise.
func TestHiddenGlobalsCannotBeAssigned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"replaced", `_G["\0new"] = function(x) return x end`, `cannot assign _G["\x00new"]`},
		{"removed", `_G["\0set"] = nil`, `cannot assign _G["\x00set"]`},
		{"in a multiple assignment", `local g = _G g.x, g["\0concat"] = 1, print`, `cannot assign _G["\x00concat"]`},
		{"caught", `pcall(function() _G["\0new"] = function(x) return x end end) local t = {} for i = 1, 1e6 do t = {t} end`,
			"new table: more than 200000 values added to tables (MaxTableValues)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := callBody(t, tc.body, Limits{Timeout: 10 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The rewriting keeps what scripts compute, errors included: each body
// returns the same string compiled by Compile and run in the sandbox as
// compiled by gopher-lua as written.
func TestTableRewriteKeepsSemantics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"targets evaluated first", `local t = {} local i = 1 i, t[i] = i + 1, 20 return i .. " " .. tostring(t[1]) .. " " .. tostring(t[2])`,
			"2 20 nil"},
		{"swap", `local t = {1, 2} t[1], t[2] = t[2], t[1] return t[1] .. t[2]`, "21"},
		{"same target twice", `local t = {} t[1], t[1] = 1, 2 return tostring(t[1])`, "1"},
		{"more values than targets", `local n = 0 local function f() n = n + 1 return n end
			local t = {} t.a, t.b = f(), f(), f() return t.a .. t.b .. n`, "123"},
		{"fewer values than targets", `local t = {a = 1} local x = 0 t.a, x = 5 return tostring(t.a) .. tostring(x)`, "5nil"},
		{"the values of the last call", `local function f() return 1, 2, 3 end local t = {} local a
			t.x, a, t.y = f() return t.x .. a .. t.y`, "123"},
		{"a call truncated", `local function f() return 1, 2 end local t = {} t.x = f() return tostring(t.x)`, "1"},
		{"varargs", `local function g(...) local t = {} t.a, t.b = ... t.c = ... return t.a .. t.b .. t.c end return g(1, 2, 3)`,
			"121"},
		{"nested tables", `local a = {b = {c = {}}} a.b.c.d = 1 a.b.c["e"] = 2 return a.b.c.d .. a.b.c.e`, "12"},
		{"methods", `local o = {n = 1} function o:get(k) return self.n + k end local a = {b = {}}
			function a.b.f(x) return x * 2 end function a.b:g(...) return self == a.b and select("#", ...) end
			return o:get(1) .. a.b.f(2) .. a.b:g(1, 2)`, "242"},
		{"global functions", `function G1() return 1 end return G1() .. tostring(_G.G1 == G1)`, "1true"},
		{"local recursion", `local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end return fact(5)`, "120"},
		{"a local function value naming itself", `local f = function(n) if n == 0 then return "done" end return f(n - 1) end return f(3)`,
			"done"},
		{"closures over loop variables", `local fs = {} for i = 1, 3 do fs[i] = function() return i end end return fs[1]() .. fs[3]()`, "13"},
		{"indexing nil", `local ok, err = pcall(function() local t t.x = 1 end) return err`, ""},
		{"indexing a nil field", `local ok, err = pcall(function() local a = {} a.b.c = 1 end) return err`, ""},
		{"indexing a string", `local ok, err = pcall(function() local s = "x" s.y = 1 end) return err`, ""},
		{"indexing a number", `local ok, err = pcall(function() local n = 1 n[2], n = 3, 4 end) return err`, ""},
		{"defining a method of nil", `local ok, err = pcall(function() local o function o:m() end end) return err`, ""},
		{"a nil key", `local ok, err = pcall(function() local t = {} t[nil] = 1 end) return err`, ""},
		{"a NaN key", `local ok, err = pcall(function() local t = {} t[0/0] = 1 end) return err`, ""},
		{"removing with a nil key", `local ok, err = pcall(function() local t = {} t[nil] = nil end) return err`, ""},
		{"a nil key in a constructor", `local ok, err = pcall(function() return {[nil] = 1} end) return err`, ""},
		{"removing", `local t = {a = 1, 2} t.a = nil t[1] = nil local n = 0 for _ in pairs(t) do n = n + 1 end return n`, "0"},
		{"removing far away", `local t = {} t[1000] = nil t[1] = "x" return #t .. tostring(next(t))`, "11"},
		{"filling a gap", `local t = {} t[3] = "c" t[1] = "a" t[2] = "b" return #t .. table.concat(t)`, "3abc"},
		{"table.insert", `local t = {} table.insert(t, "a") table.insert(t, 1, "b") table.insert(t, 2, "c") table.insert(t, "d")
			table.insert(t, 5, "e") return table.concat(t, ",")`, "b,c,a,d,e"},
		{"table.insert past the end", `local t = {"a"} table.insert(t, 3, "c") return tostring(t[2]) .. t[3] .. #t`, "nilc3"},
		{"table.insert of nil", `local t = {"a"} table.insert(t, nil) table.insert(t, 1, nil) return #t .. tostring(t[2])`, ""},
		{"table.insert errors", `local e = {}
			for i, f in ipairs({function() table.insert({}) end, function() table.insert(nil, 1) end,
				function() table.insert({}, "x", 1) end, function() table.insert({}, 1, nil) end}) do
				e[i] = select(2, pcall(f)) or "ok"
			end
			return table.concat(e, "|")`, ""},
		{"constructor fields", `local t = {[1] = "a", "b", [3] = "c", x = "y", ["z"] = 1} return t[1] .. t[3] .. t.x .. t.z`, "bcy1"},
		{"constructor of varargs", `local function f(...) local t = {...} return #t end return f(1, 2, 3)`, "3"},
		{"constructor of calls", `local function f() return 1, 2, 3 end local t = {f()} local u = {f(), f()} return #t .. #u`, "34"},
		{"tables and closures as arguments", `local function n(...) return select("#", ...) end
			return n({}, {}) .. n(function() end) .. n({})`, "211"},
		{"arg", `local function f(...) return arg.n .. arg[2] end return f("a", "b")`, "2b"},
		{"arg as a parameter", `local function f(arg, ...) return type(arg) .. arg.n end return f(1, 2)`, "table1"},
		{"assignments to _G", `_G.x1 = 1 _G["x2"] = 2 return x1 .. x2`, "12"},
		{"concatenation assigned", `local t = {} t.s = "a" .. "b" .. 1 return t.s`, "ab1"},
		{"goto", `local t = {} for i = 1, 3 do if i == 2 then goto continue end t[i], t[i + 10] = i, i ::continue:: end
			return tostring(t[1]) .. tostring(t[2]) .. tostring(t[13])`, "1nil3"},
		{"repeat until a local", `local i = 0 repeat local t = {} t.x = i i = i + 1 until t.x >= 2 return i`, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "function Test()\n" + tc.body + "\nend"
			want := stockResult(t, src)
			if tc.want != "" && want != tc.want {
				t.Fatalf("gopher-lua returns %q, the test wants %q", want, tc.want)
			}
			s, err := Compile(src, "Test", 1)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got string
			err = s.Call(1, func(*lua.LState) []lua.LValue { return nil }, func(ret []lua.LValue, _ *budget) error {
				got = ret[0].String()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got %q, gopher-lua returns %q", got, want)
			}
		})
	}
}

// stockResult is what Test returns, as a string, with src compiled by
// gopher-lua as written and run in a state with its standard libraries.
func stockResult(t *testing.T, src string) string {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), "luaScript")
	if err != nil {
		t.Fatal(err)
	}
	proto, err := lua.Compile(chunk, "luaScript")
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := L.CallByParam(lua.P{Fn: L.GetGlobal("Test"), NRet: 1, Protect: true}); err != nil {
		t.Fatal(err)
	}
	return L.Get(-1).String()
}

// A multiple assignment evaluates the table of a target before assigning
// anything, as Lua does: gopher-lua as written reads the local a when
// storing a.x, after assigning it 2, and fails.
func TestMultipleAssignmentTargetsEvaluatedFirst(t *testing.T) {
	t.Parallel()
	s, err := Compile("function Test()\nlocal a = {} local b = a a.x, a = 1, 2 return b.x .. a\nend", "Test", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Call(1, func(*lua.LState) []lua.LValue { return nil }, func(ret []lua.LValue, _ *budget) error {
		if got := ret[0].String(); got != "12" {
			t.Errorf("got %q, want 12", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
