package lua

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// FuzzConversion converts JSON values to Lua and back: the conversion
// never panics, fails only on its limits, gives the value back (but for
// nulls, which a Lua table cannot hold), and encodeJSON writes what
// json.Marshal writes of it.
func FuzzConversion(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `null`, `"x"`, `1.5`, `-0`, `1e300`, `{"a":{"b":[1,2,{"c":null}]},"d":[],"e":{}}`,
		`[[[[[[[[[[]]]]]]]]]]`, `9223372036854775808`, `-9223372036854775808`, `[1e-7, 1e21, 123456789.125]`, `{"1":"a","2":"b"}`, `[1,null,3]`, `{"s":"quote\" <&> \u2028 \ud800"}`,
		`{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"1"}}}]}}}}`,
	} {
		f.Add([]byte(seed), uint16(0))
	}
	f.Add([]byte(`[1,2,3,4,5,6,7,8,9,10]`), uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, maxValues uint16) {
		var in any
		if err := json.Unmarshal(data, &in); err != nil {
			return
		}
		L := newState()
		defer L.Close()
		b := newBudget(Limits{MaxResultValues: int(maxValues)})
		lv := toLua(L, in)
		out, err := b.fromLua(lv, in)
		if err != nil {
			if !strings.Contains(err.Error(), "MaxResult") && !strings.Contains(err.Error(), "nested deeper than") {
				t.Fatalf("fromLua(%s): %v", data, err)
			}
			return
		}
		if !hasNull(in) && !sameJSON(in, out) {
			t.Errorf("round trip of %s gave %#v", data, out)
		}
		b.reset()
		raw, err := b.encodeJSON(nil, lv, in, 0)
		if err != nil {
			if !strings.Contains(err.Error(), "cannot be encoded") {
				t.Fatalf("encodeJSON(%s): %v", data, err)
			}
			return
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != string(want) {
			t.Errorf("encodeJSON(%s) = %s, json.Marshal gives %s", data, raw, want)
		}
	})
}

// hasNull tells whether a list or an object in v holds a null.
func hasNull(v any) bool {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if e == nil || hasNull(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if e == nil || hasNull(e) {
				return true
			}
		}
	}
	return false
}

// sameJSON compares JSON values, numbers by value (whole numbers come back
// as int64).
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		m, ok := b.(map[string]any)
		if !ok || len(m) != len(a) {
			return false
		}
		for k, v := range a {
			if w, ok := m[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		l, ok := b.([]any)
		if !ok || len(l) != len(a) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], l[i]) {
				return false
			}
		}
		return true
	case float64:
		switch b := b.(type) {
		case float64:
			return a == b
		case int64:
			return a == float64(b)
		}
		return false
	}
	return a == b
}

// fuzzScripts are scripts of every operation, in the style of Karmada's,
// plus some that walk the whole object with the string functions.
const fuzzScripts = workloadRIC + `
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: walk
spec:
  target:
    apiVersion: walk.example.io/v1
    kind: Walk
  customizations:
    healthInterpretation:
      luaScript: |
        local function walk(v, depth)
          if depth > 20 then return 0 end
          local n = 0
          if type(v) == "table" then
            for k, e in pairs(v) do
              local s = tostring(k) .. "=" .. tostring(e)
              n = n + #string.gsub(s, "%s+", " ") + (string.find(s, "(%w+)=") or 0) + walk(e, depth + 1)
            end
          elseif type(v) == "string" then
            n = n + #string.format("%q", v) + #v:upper() + #(string.match(v, "^(.-)%d*$") or "")
          end
          return n
        end
        function InterpretHealth(obj)
          return walk(obj, 0) >= 0
        end
    statusReflection:
      luaScript: |
        function ReflectStatus(obj)
          return obj.status
        end
    retention:
      luaScript: |
        function Retain(desired, observed)
          for k, v in pairs(observed) do
            if desired[k] == nil then desired[k] = v end
          end
          return desired
        end
    componentResource:
      luaScript: |
        function GetComponents(obj)
          local out = {}
          for k, v in pairs(obj.spec or {}) do
            table.insert(out, {name = tostring(k), replicas = 1})
          end
          table.sort(out, function(a, b) return a.name < b.name end)
          return out
        end
`

// FuzzScript runs scripts of every operation in the sandbox on arbitrary
// objects: calls may fail, but never panic, and end within their
// deadline.
func FuzzScript(f *testing.F) {
	for _, seed := range []string{
		workloadJSON(f), `{}`, `{"spec":null}`, `{"spec":{"replicas":"x","template":{"spec":{"containers":[{}]}}}}`,
		`{"spec":{"replicas":1e300},"status":{"readyReplicas":[]}}`, `{"status":{"a":{"b":{"c":"\u0000%"}}}}`,
		`{"metadata":{"namespace":5},"spec":{"template":{"spec":{"volumes":[{"secret":{"secretName":1}}]}}}}`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	c := NewCustomizations()
	for _, doc := range strings.Split(fuzzScripts, "\n---\n") {
		if err := c.Set(ric(f, doc)); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, walk bool) {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil || m == nil {
			return
		}
		obj := &unstructured.Unstructured{Object: m}
		if walk {
			obj.SetAPIVersion("walk.example.io/v1")
			obj.SetKind("Walk")
		} else {
			obj.SetAPIVersion("workload.example.io/v1alpha1")
			obj.SetKind("Workload")
		}
		status := &runtime.RawExtension{Raw: data}
		calls := []func() error{
			func() error { _, _, err := c.GetReplicas(obj); return err },
			func() error { _, err := c.ReviseReplica(obj, 2); return err },
			func() error { _, err := c.Retain(obj, obj); return err },
			func() error {
				raw, err := c.ReflectStatus(obj)
				if err == nil && raw != nil && !json.Valid(raw.Raw) {
					t.Errorf("ReflectStatus returned %s", raw.Raw)
				}
				return err
			},
			func() error { _, err := c.InterpretHealth(obj); return err },
			func() error { _, err := c.GetDependencies(obj); return err },
			func() error { _, err := c.GetComponents(obj); return err },
			func() error {
				_, err := c.AggregateStatus(obj, []workv1alpha2.AggregatedStatusItem{{ClusterName: "m", Status: status}})
				return err
			},
		}
		for i, call := range calls {
			start := time.Now()
			err := call()
			if err != nil && strings.Contains(err.Error(), "runtime error") {
				t.Errorf("call %d on %s: %v", i, data, err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("call %d on %s took %v", i, data, took)
			}
		}
	})
}

func workloadJSON(t testing.TB) string {
	raw, err := object(t, workload).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// FuzzPatterns runs the pattern functions on arbitrary subjects, patterns
// and replacements: they return or raise a Lua error, never a Go panic,
// and stop at the deadline.
func FuzzPatterns(f *testing.F) {
	for _, seed := range [][3]string{
		{"hello world", "(%w+)", "<%1>"}, {"  x  ", "^%s*(.-)%s*$", "%0%0"}, {"f(a(b)c)", "%b()", "%%"},
		{"THE fox", "%f[%a]%a+", "%2"}, {"aaa", "(a)%1", ""}, {"", "", "%"}, {"a]b", "[]]", "x"},
		{"abc", "[%", "x"}, {"abc", "(()", "x"}, {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", ".-.-.-.-.-c", "x"},
	} {
		f.Add(seed[0], seed[1], seed[2], int8(1))
	}
	L, b := newSandbox(false, Limits{})
	defer func() { L.Close() }()
	str := L.GetGlobal("string").(*lua.LTable)
	f.Fuzz(func(t *testing.T, s, p, repl string, init int8) {
		for _, name := range []string{"find", "match", "gsub"} {
			args := []lua.LValue{lua.LString(s), lua.LString(p)}
			switch name {
			case "gsub":
				args = append(args, lua.LString(repl))
			default:
				args = append(args, lua.LNumber(init))
			}
			L.SetTop(0)
			b.reset()
			b.ctx, b.steps = newDeadline(t, 20*time.Millisecond), 0
			start := time.Now()
			err := protectedCall(L, str.RawGetString(name), lua.MultRet, args...)
			if err != nil && strings.Contains(err.Error(), "runtime error") {
				t.Fatalf("string.%s(%q, %q, %q): %v", name, s, p, repl, err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("string.%s(%q, %q) took %v", name, s, p, took)
			}
			if err != nil { // the state is left as the error found it
				L.Close()
				L, b = newSandbox(false, Limits{})
				str = L.GetGlobal("string").(*lua.LTable)
			}
		}
	})
}

// newDeadline returns a context cancelled after d or at the end of t.
func newDeadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
