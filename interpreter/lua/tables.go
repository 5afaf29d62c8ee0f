package lua

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// set is t[k] = v: every assignment to a table field of a script is
// compiled to a call of it (rewrite). A value stored under a key t does
// not have is counted (slots) before it is stored; replacing or removing a
// value adds nothing. No table a script reaches has a metatable (scripts
// cannot set one, and the Go side sets none), so the store is raw, with
// gopher-lua's errors for a nil or NaN key; a value that is not a table
// gets gopher-lua's error for indexing it.
func (l strlib) set(L *lua.LState) int {
	obj, key, v := L.Get(1), L.Get(2), L.Get(3)
	t, ok := obj.(*lua.LTable)
	if !ok {
		L.SetTable(obj, key, v)
		return 0
	}
	if s, ok := key.(lua.LString); ok && t == L.G.Global && strings.HasPrefix(string(s), hidden) {
		L.RaiseError("cannot assign _G[%q]: the names starting with \\0 are the sandbox's", string(s))
	}
	if t.RawGet(key) != lua.LNil {
		t.RawSet(key, v)
		return 0
	}
	switch k := arrayIndex(key); {
	case v != lua.LNil:
		l.b.store(L, "table field assignment", slots(t, k))
	case k > 0:
		// Removes nothing; gopher-lua would still fill the array part with
		// nils up to k.
		return 0
	}
	L.RawSet(t, key, v)
	return 0
}

// new counts a table or a closure a script made and returns it: every
// table constructor and function expression of a script is compiled to a
// call of it (rewrite). A table counts one and its entries, a closure one
// and its upvalues: a closure made in a loop gets upvalues of its own for
// the loop's locals, each larger than a table's entry.
func (l strlib) new(L *lua.LState) int {
	v := L.Get(1)
	switch v := v.(type) {
	case *lua.LTable:
		l.b.store(L, "new table", tableValues(v))
	case *lua.LFunction:
		l.b.store(L, "new closure", 1+len(v.Upvalues))
	}
	L.Push(v)
	return 1
}

// tableValues is what t counts as: one, and one per entry.
func tableValues(t *lua.LTable) int {
	n := 1
	t.ForEach(func(lua.LValue, lua.LValue) { n++ })
	return n
}

// key returns a computed key of a table constructor of n fields, given as
// key(k, n) (rewrite), counting first the array an integer key past n
// may make gopher-lua build: up to the key, the new table's array part is
// filled with nils.
func (l strlib) key(L *lua.LState) int {
	key := L.Get(1)
	if k := arrayIndex(key); k > L.ToInt(2) {
		l.b.store(L, "table constructor", k)
	}
	L.Push(key)
	return 1
}

// insert is table.insert, with gopher-lua's arguments and errors, counting
// what it adds (slots) before adding it.
func (l strlib) insert(L *lua.LState) int {
	t := L.CheckTable(1)
	switch L.GetTop() {
	case 1:
		L.RaiseError("wrong number of arguments")
	case 2:
		l.b.store(L, "table.insert", 1)
		t.Append(L.Get(2))
		return 0
	}
	pos, v := L.CheckInt(2), L.CheckAny(3)
	l.b.store(L, "table.insert", slots(t, arrayIndex(lua.LNumber(pos))))
	t.Insert(pos, v)
	return 0
}

// slots is what storing a value under a key t does not have adds to t:
// one value, and when the key is an index k past the end of t's array part
// (arrayIndex), the nils gopher-lua fills the array with up to k. t[k-1]
// set means the array reaches k-1; otherwise the array ends at least at
// its last value (MaxN, which looks back over the nils at its end).
func slots(t *lua.LTable, k int) int {
	if k <= 1 || t.RawGetInt(k-1) != lua.LNil {
		return 1
	}
	return max(1, k-t.MaxN())
}

// arrayIndex is k when key is an integer k that gopher-lua keeps in the
// array part of a table (1 <= k < MaxArrayIndex), 0 otherwise.
func arrayIndex(key lua.LValue) int {
	n, ok := key.(lua.LNumber)
	if !ok || !(n >= 1 && n < lua.LNumber(lua.MaxArrayIndex)) || float64(n) != math.Trunc(float64(n)) {
		return 0
	}
	return int(n)
}
