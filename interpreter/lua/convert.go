package lua

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// toLua converts a JSON-like Go value (what unstructured objects hold:
// map[string]any, []any, string, bool, int64, float64, nil, and the other
// integer types) into a Lua value. Maps become tables with string keys,
// slices sequences from 1.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case float32:
		return lua.LNumber(v)
	case map[string]any:
		t := L.CreateTable(0, len(v))
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.CreateTable(len(v), 0)
		for i, e := range v {
			t.RawSetInt(i+1, toLua(L, e))
		}
		return t
	case []map[string]any:
		t := L.CreateTable(len(v), 0)
		for i, e := range v {
			t.RawSetInt(i+1, toLua(L, e))
		}
		return t
	case []string:
		t := L.CreateTable(len(v), 0)
		for i, e := range v {
			t.RawSetInt(i+1, lua.LString(e))
		}
		return t
	default:
		return lua.LString(fmt.Sprint(v))
	}
}

// fromLua converts a Lua value back into a JSON-like Go value. Numbers
// that are whole become int64, others float64. A table whose keys are
// exactly 1..n is a slice; any other table a map, its keys as strings.
//
// An empty table is ambiguous: Karmada encodes it as [] and then turns it
// back into {} where the corresponding field of the object given to the
// script was an object. ref is that corresponding value (nil when there is
// none), followed down the result as it is converted.
//
// Every value and key met is charged to b (visit), a shared table each
// time it is met: a table holding one subtable under two keys, nested 100
// deep, is 2^100 values. Tables that contain themselves stop at maxDepth.
func (b *budget) fromLua(v lua.LValue, ref any) (any, error) {
	return b.fromLuaDepth(v, ref, 0)
}

// dropEmpty, given as ref, makes empty tables nil all the way down: for
// values decoded into Go types, where {} and [] both mean "nothing".
var dropEmpty any = &struct{ dropEmpty bool }{}

// maxDepth bounds the nesting of converted tables (and catches cycles).
const maxDepth = 100

func (b *budget) fromLuaDepth(v lua.LValue, ref any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("result nested deeper than %d levels (a table that contains itself?)", maxDepth)
	}
	n := 0
	if s, ok := v.(lua.LString); ok {
		n = len(s)
	}
	if err := b.visit(n); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(v), nil
	case lua.LString:
		return string(v), nil
	case lua.LNumber:
		f := float64(v)
		if isInt64(f) {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return b.tableFromLua(v, ref, depth)
	case *lua.LUserData:
		switch g := v.Value.(type) {
		case goValue:
			return g.v, nil // shared: results are read-only (interpreter.Interpreter)
		case helperResult:
			return jsonValue(g.v)
		}
		return nil, fmt.Errorf("a %s cannot be converted to JSON", v.Type())
	default:
		return nil, fmt.Errorf("a %s cannot be converted to JSON", v.Type())
	}
}

func (b *budget) tableFromLua(t *lua.LTable, ref any, depth int) (any, error) {
	n := t.Len()
	count := 0
	sequence := true
	t.ForEach(func(k, _ lua.LValue) {
		count++
		if num, ok := k.(lua.LNumber); !ok || float64(num) != math.Trunc(float64(num)) || num < 1 || int(num) > n {
			sequence = false
		}
	})
	if count == 0 {
		if ref == dropEmpty {
			return nil, nil
		}
		if g, ok := ref.(goType); ok && g.wantsObject() {
			return absent, nil
		}
		if _, isMap := ref.(map[string]any); isMap {
			return map[string]any{}, nil
		}
		return []any{}, nil
	}
	if sequence && count == n {
		refs, _ := ref.([]any)
		g, typed := ref.(goType)
		out := make([]any, n)
		for i := 1; i <= n; i++ {
			var r any
			switch {
			case ref == dropEmpty:
				r = dropEmpty
			case typed:
				r = g.elem()
			case i-1 < len(refs):
				r = refs[i-1]
			}
			e, err := b.fromLuaDepth(t.RawGetInt(i), r, depth+1)
			if err != nil {
				return nil, err
			}
			if e == absent {
				e = nil
			}
			out[i-1] = e
		}
		return out, nil
	}
	refs, _ := ref.(map[string]any)
	g, typed := ref.(goType)
	out := make(map[string]any, count)
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err != nil {
			return
		}
		key := keyString(k)
		if err = b.visit(len(key)); err != nil {
			return
		}
		r := refs[key]
		switch {
		case ref == dropEmpty:
			r = dropEmpty
		case typed:
			r = g.field(key)
		}
		var converted any
		converted, err = b.fromLuaDepth(e, r, depth+1)
		if converted != absent {
			out[key] = converted
		}
	})
	return out, err
}

// isInt64 tells whether f is a whole number an int64 holds. The bounds are
// -2^63 and 2^63 as floats: math.MaxInt64 rounds up to 2^63, which does
// not fit.
func isInt64(f float64) bool {
	return f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63
}

// keyString is how a table key becomes a JSON object key.
func keyString(k lua.LValue) string {
	if num, ok := k.(lua.LNumber); ok && isInt64(float64(num)) {
		return strconv.FormatInt(int64(num), 10)
	}
	return k.String()
}

// jsonValue is a Go value (a helper's typed result) as JSON-like values.
func jsonValue(v any) (any, error) {
	var out any
	err := viaJSON(v, &out)
	return out, err
}

// viaJSON decodes into out the JSON encoding of in.
func viaJSON(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
