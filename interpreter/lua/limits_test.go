package lua

import (
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// callBody compiles body as the function InterpretHealth(obj), returning
// true after it, calls it once within lim and returns the call's error and
// how long the call took.
func callBody(t *testing.T, body string, lim Limits) (time.Duration, error) {
	t.Helper()
	s, err := CompileWithLimits("function InterpretHealth(obj)\n"+body+"\nreturn true\nend", "InterpretHealth", 1, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	err = s.Call(1, func(*lua.LState) []lua.LValue { return []lua.LValue{lua.LNil} },
		func([]lua.LValue, *budget) error { return nil })
	return time.Since(start), err
}

// Each string-building function refuses a result over MaxStringBytes
// before building it, and a call fails once its strings add up to more
// than MaxCallBytes, even when the script catches the error.
func TestStringLimits(t *testing.T) {
	t.Parallel()
	const big = `local s = string.rep("x", 1000000)` + "\n"
	for _, tc := range []struct{ name, body, want string }{
		{"string.rep", `string.rep("x", 1e9)`, "string.rep: result longer than 1048576 bytes (MaxStringBytes)"},
		{"string.rep overflowing", `string.rep("xx", 2^62)`, "string.rep: result longer than"},
		{"string.rep beyond integers", `string.rep("x", 1e300)`, "string.rep: result longer than"},
		{"rep method", `("x"):rep(1e9)`, "string.rep: result longer than"},
		{".. doubling a string", `local s = "x" for i = 1, 40 do s = s .. s end`,
			"string concatenation (..): result longer than 1048576 bytes (MaxStringBytes)"},
		{".. chain", `local s = string.rep("x", 600000) local t = s .. "-" .. s`, "(..): result longer than"},
		{".. of numbers", `local s = string.rep("1", 1048570) local t = s .. 1234567`, "(..): result longer than"},
		{".. over the call's bytes", big + `for i = 1, 20 do local t = s .. i end`,
			"more than 16777216 bytes (MaxCallBytes)"},
		{"MaxCallBytes caught by pcall", big + `for i = 1, 20 do pcall(function() return s .. i end) end`,
			"(MaxCallBytes)"},
		{"upper over the call's bytes", big + `for i = 1, 20 do local u = s:upper() end`, "string.upper: the strings"},
		{"table.concat of a huge table", `local t = {} for i = 1, 110000 do t[i] = "0123456789" end local s = table.concat(t)`,
			"table.concat: result longer than 1048576 bytes"},
		{"table.concat with a long separator", `table.concat({1, 2, 3}, string.rep("x", 600000))`, "table.concat: result longer than"},
		{"string.format of long strings", `local s = string.rep("x", 500000) string.format("%s%s%s", s, s, s)`,
			"string.format: result longer than"},
		{"string.format %q", `string.format("%q", string.rep("\1", 300000))`, "string.format: result longer than"},
		{"string.format width from an argument", `string.format("%*d", 5, 1)`, "'*' and '[n]' are not allowed"},
		{"string.format reused argument", `string.format("%[1]s%[1]s", "x")`, "'*' and '[n]' are not allowed"},
		{"gsub expanding %0", `string.gsub(string.rep("x", 100000), ".+", string.rep("%0", 100))`,
			"string.gsub: result longer than"},
		{"gsub with a function", `string.gsub(string.rep("x", 2000), "x", function() return string.rep("y", 1000) end)`,
			"string.gsub: result longer than"},
		{"gsub with a table", `string.gsub(string.rep("x", 2000), "x", {x = string.rep("y", 1000)})`,
			"string.gsub: result longer than"},
		{"pattern too complex", `string.find(string.rep("a", 300), string.rep("a?", 300))`, "pattern too complex"},
		{"malformed pattern", `string.find("a", "[a")`, "malformed pattern (missing ']')"},
		{"string.byte of a long string", `local t = {string.byte(string.rep("x", 100000), 1, -1)}`, "registry overflow"},
		{"unpack of a huge range", `local t = {unpack({}, 1, 1e7)}`, "registry overflow"},
		{"deep recursion", `local function f(n) return 1 + f(n + 1) end f(1)`, "stack overflow"},
		{"os.date with a long format", `os.date(string.rep("%c", 200))`, "os.date: format longer than 256 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A long deadline: these limits are not about time, and the
			// tests share a loaded machine.
			_, err := callBody(t, tc.body, Limits{Timeout: 10 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The limits are those given to CompileWithLimits.
func TestConfiguredLimits(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxStringBytes: 100, MaxCallBytes: 1000}
	if _, err := callBody(t, `local s = string.rep("x", 101)`, lim); err == nil || !strings.Contains(err.Error(), "longer than 100 bytes") {
		t.Errorf("string of 101 bytes: %v", err)
	}
	if _, err := callBody(t, `for i = 1, 20 do local s = string.rep("x", 60) .. i end`, lim); err == nil ||
		!strings.Contains(err.Error(), "more than 1000 bytes (MaxCallBytes)") {
		t.Errorf("1200 bytes built: %v", err)
	}
	if _, err := callBody(t, `local s = string.rep("x", 900) print(s, s)`, Limits{MaxCallBytes: 1000}); err == nil || !strings.Contains(err.Error(), "print: the strings") {
		t.Errorf("printing 1800 bytes: %v", err)
	}
	if _, err := callBody(t, `local s = string.rep("x", 100) .. ""`, lim); err != nil {
		t.Errorf("within the limits: %v", err)
	}
}

// Native work that grows with its input stops at the deadline: the
// pattern functions and table.sort count their steps, and errors carry no
// traceback (gopher-lua's lists every tail call: 3.5 s and 700 MB for the
// tail calls of one second). The cases run one after the other, not to
// load the machine with spinning calls.
func TestDeadlineStopsNativeWork(t *testing.T) {
	t.Parallel()
	const mb = `local s = string.rep("a", 1000000)` + "\n"
	const short, full = 300 * time.Millisecond, time.Second
	for _, tc := range []struct {
		name, body string
		timeout    time.Duration
	}{
		{"gsub with lazy captures", mb + `string.gsub(s, "(.-)(.-)(.-)b", "x")`, short},
		{"find with lazy repetitions", mb + `string.find(s, ".-.-.-.-b")`, short},
		{"match with greedy captures", mb + `string.match(s, "(.*)(.*)(.*)b")`, short},
		{"gsub of unbalanced brackets", `string.gsub(string.rep("(", 1000000), "%b()", "")`, short},
		{"back-references", mb + `string.find(s, "(a*)%1%1b")`, short},
		{"table.sort", `local t = {} for i = 1, 2000000 do t[i] = (i * 7919) % 1000003 end table.sort(t)`, full},
		{"tail calls", `local function f(n) return f(n + 1) end f(1)`, full},
		{"tail calls under pcall", `local function f(n) return f(n + 1) end for i = 1, 10 do pcall(f, 1) end`, full},
		{"tail calls under xpcall with a failing handler",
			`local function f(n) return f(n + 1) end xpcall(function() return f(1) end, function() error("again") end)`, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// table.sort needs a table larger than MaxTableValues allows
			// by default to outlast the deadline.
			took, err := callBody(t, tc.body, Limits{Timeout: tc.timeout, MaxTableValues: 1 << 22})
			if err != nil && !strings.Contains(err.Error(), "did not finish within") {
				t.Errorf("error %v, want none or a timeout", err)
			}
			if took > tc.timeout+time.Second {
				t.Errorf("took %v with a deadline of %v", took, tc.timeout)
			}
		})
	}
}

// .. is compiled to a checked call: no OP_CONCAT is left.
func TestNoConcatInstruction(t *testing.T) {
	t.Parallel()
	s, err := Compile(`local a = "x" .. 1 .. ("y" .. "z")
function InterpretHealth(obj)
  local f = function(...) return (...) .. #obj .. tostring(obj) end
  return f("a") .. a == "x1yz" and ("a" .. "b"):upper() == "AB"
end`, "InterpretHealth", 1)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(p *lua.FunctionProto)
	walk = func(p *lua.FunctionProto) {
		for _, inst := range p.Code {
			if int(inst>>26) == lua.OP_CONCAT {
				t.Errorf("OP_CONCAT left in %s", p.String())
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(s.proto)
}

// A result is converted within MaxResultValues and MaxResultBytes, under
// the deadline, whichever operation converts it: a table sharing its
// subtables counts each time they are reached.
func TestResultLimits(t *testing.T) {
	t.Parallel()
	const dag = "local t = {} for i = 1, 60 do t = {a = t, b = t} end\n"
	const long = "local s = string.rep(\"x\", 1000000) local t = {} for i = 1, 100 do t[i] = s end\n"
	obj := object(t, workload)
	for _, tc := range []struct{ name, field, script, want string }{
		{"ReflectStatus", "statusReflection", dag + "function ReflectStatus(obj) return t end", "(MaxResultValues"},
		{"ReflectStatus strings", "statusReflection", long + "function ReflectStatus(obj) return t end", "(MaxResultBytes)"},
		{"ReflectStatus flat", "statusReflection",
			"local t = {} for i = 1, 150000 do t[i] = i end\nfunction ReflectStatus(obj) return t end", "(MaxResultValues"},
		{"Retain", "retention", dag + "function Retain(desired, observed) return t end", "(MaxResultValues"},
		{"Retain strings", "retention", long + "function Retain(desired, observed) return {x = t} end", "(MaxResultBytes)"},
		{"ReviseReplica merged", "replicaRevision", dag + "function ReviseReplica(obj, n) obj.spec.x = t return obj end",
			"(MaxResultValues"},
		{"GetComponents", "componentResource", dag + "function GetComponents(obj) return {t} end", "(MaxResultValues"},
		{"GetReplicas helper", "replicaResource", dag + `local kube = require("kube")
function GetReplicas(obj) return 1, kube.accuratePodRequirements({spec = {containers = t}}) end`, "(MaxResultValues"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := customization(t, tc.field, tc.script)
			start := time.Now()
			var err error
			switch tc.field {
			case "statusReflection":
				_, err = c.ReflectStatus(obj)
			case "retention":
				_, err = c.Retain(obj, obj)
			case "replicaRevision":
				_, err = c.ReviseReplica(obj, 1)
			case "componentResource":
				_, err = c.GetComponents(obj)
			case "replicaResource":
				_, _, err = c.GetReplicas(obj)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// customization returns the customizations of the Workload kind with one
// script, in the field of CustomizationRules named field.
func customization(t *testing.T, field, script string) *Customizations {
	t.Helper()
	y := `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: limits
  generation: 1
spec:
  target:
    apiVersion: workload.example.io/v1alpha1
    kind: Workload
  customizations:
    ` + field + `:
      luaScript: |
        ` + strings.ReplaceAll(script, "\n", "\n        ") + "\n"
	c := NewCustomizationsWithLimits(Limits{Timeout: 10 * time.Second}) // these limits are not about time
	if err := c.Set(ric(t, y)); err != nil {
		t.Fatal(err)
	}
	return c
}
