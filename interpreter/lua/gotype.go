package lua

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Results decoded into Go types (GetReplicas' requirements, GetComponents'
// components, GetDependencies' references) are converted following the Go
// type they are decoded into, because an empty Lua table cannot say
// whether it was an empty list or an empty object.
//
// Where the type expects an object (a struct, a map or a pointer), an empty
// table is taken as absent: the field is left out, so that
// requirement.nodeClaim = {} gives no nodeClaim rather than failing to
// unmarshal [] into a struct. Where it expects a list, an empty table stays
// an empty list. Karmada gets the same result another way: its Lua to JSON
// encoding deletes empty fields it cannot match with one of the call's
// arguments (luavm.ConvertLuaResultInto).

// goType, given as the ref of fromLua, is the Go type the converted value
// is decoded into.
type goType struct{ t reflect.Type }

// absent is what fromLua gives for an empty table where goType expects an
// object: a map leaves the key out, a list holds null, and decodeResult
// leaves its target as it was.
var absent any = &struct{ absent bool }{}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typeRef is the ref for values decoded into t.
func typeRef(t reflect.Type) any {
	return goType{t: t}
}

// custom tells whether t decodes itself from JSON (resource.Quantity,
// metav1.Time, IntOrString): its shape is its own, not its Go kind's.
func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || p.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// deref is t without its pointers.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// wantsObject tells whether an empty table decoded into t is absent.
func (g goType) wantsObject() bool {
	if g.t == nil {
		return false
	}
	t := deref(g.t)
	if custom(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return true
	}
	return false
}

// elem is the ref for the elements of a list decoded into g, nil when g
// is not a list.
func (g goType) elem() any {
	if g.t == nil {
		return nil
	}
	t := deref(g.t)
	if custom(t) || (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) {
		return nil
	}
	return goType{t: t.Elem()}
}

// field is the ref for the value under key of an object decoded into g,
// nil when g is not an object or has no such field.
func (g goType) field(key string) any {
	if g.t == nil {
		return nil
	}
	t := deref(g.t)
	if custom(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return goType{t: t.Elem()}
	case reflect.Struct:
		if ft := structFields(t).lookup(key); ft != nil {
			return goType{t: ft}
		}
	}
	return nil
}

// fieldSet is the JSON fields of a struct type: exact names, and lowercased
// names for encoding/json's case-insensitive match.
type fieldSet struct {
	exact, folded map[string]reflect.Type
}

func (f fieldSet) lookup(key string) reflect.Type {
	if t, ok := f.exact[key]; ok {
		return t
	}
	return f.folded[strings.ToLower(key)]
}

var fieldSets sync.Map // reflect.Type -> fieldSet

// structFields lists the JSON fields of struct type t, embedded structs
// without a name included as encoding/json inlines them.
func structFields(t reflect.Type) fieldSet {
	if f, ok := fieldSets.Load(t); ok {
		return f.(fieldSet)
	}
	f := fieldSet{exact: map[string]reflect.Type{}, folded: map[string]reflect.Type{}}
	addFields(f, t, 0)
	fieldSets.Store(t, f)
	return f
}

func addFields(f fieldSet, t reflect.Type, depth int) {
	if depth > 10 {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			if et := deref(sf.Type); et.Kind() == reflect.Struct {
				addFields(f, et, depth+1)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := f.exact[name]; !dup {
			f.exact[name] = sf.Type
		}
		if _, dup := f.folded[strings.ToLower(name)]; !dup {
			f.folded[strings.ToLower(name)] = sf.Type
		}
	}
}
