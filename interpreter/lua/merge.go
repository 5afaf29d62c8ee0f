package lua

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// projectToLua converts v as far as p says; a nil projection (the
// parameter is never used) gives an empty table.
func projectToLua(L *lua.LState, v any, p *projection, own map[*lua.LTable]bool) lua.LValue {
	if p == nil {
		t := L.NewTable()
		if own != nil {
			own[t] = true
		}
		return t
	}
	if p.opaque && !p.full && len(p.children) == 0 {
		switch v.(type) {
		case map[string]any, []any:
			ud := L.NewUserData()
			ud.Value = goValue{v}
			return ud
		}
	}
	if p.elem != nil && !p.full && !p.opaque {
		list, ok := v.([]any)
		if !ok {
			return toLua(L, v) // an object indexed by any key, or a scalar
		}
		t := L.CreateTable(len(list), 0)
		for i, e := range list {
			t.RawSetInt(i+1, projectToLua(L, e, p.elem, own)) // as toLua does
		}
		return t
	}
	m, ok := v.(map[string]any)
	if p.full || p.opaque || !ok {
		return toLua(L, v) // opaque here: also read as a table
	}
	t := L.CreateTable(0, len(p.children))
	for k, c := range p.children {
		if cv, ok := m[k]; ok {
			t.RawSetString(k, projectToLua(L, cv, c, own))
		}
	}
	if own != nil {
		own[t] = true
	}
	return t
}

// mergeResult builds the object a script returned when it returned its
// (projected) first argument: the original object with every projected
// part replaced by what the script left there. The maps on the way to
// those parts are new; everything the script could not reach is shared
// with original (see interpreter.Interpreter: results are read-only).
//
// own are the tables the projection made: one of them found at its own
// place was changed in place, so what the script could not see of it is
// kept; any other table there replaced the original part whole.
// Every table and key met is charged to b, as fromLua charges them.
func (b *budget) mergeResult(original map[string]any, t *lua.LTable, p *projection, own map[*lua.LTable]bool) (map[string]any, error) {
	return b.mergeInto(original, t, p, own, 0)
}

func (b *budget) mergeInto(original map[string]any, t *lua.LTable, p *projection, own map[*lua.LTable]bool, depth int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("result nested deeper than %d levels", maxDepth)
	}
	if err := b.visit(0); err != nil {
		return nil, err
	}
	dst := make(map[string]any, len(original)+1)
	for k, v := range original {
		dst[k] = v
	}
	var err error
	t.ForEach(func(k, lv lua.LValue) {
		if err != nil {
			return
		}
		key := keyString(k)
		if err = b.visit(len(key)); err != nil {
			return
		}
		c := p.children[key]
		sub, isTable := lv.(*lua.LTable)
		om, isMap := original[key].(map[string]any)
		if c != nil && !c.full && isTable && isMap && own[sub] {
			dst[key], err = b.mergeInto(om, sub, c, own, depth+1)
			return
		}
		dst[key], err = b.fromLuaDepth(lv, original[key], depth+1)
	})
	if err != nil {
		return nil, err
	}
	// Projected keys the script removed (set to nil).
	for key := range p.children {
		if t.RawGetString(key) == lua.LNil {
			delete(dst, key)
		}
	}
	return dst, nil
}
