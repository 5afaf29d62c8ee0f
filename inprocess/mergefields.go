package inprocess

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// mergeFields applies a JSON merge patch (RFC 7386) to current one
// top-level field at a time: only the fields the patch names are encoded,
// merged and decoded, into a shallow copy of current, which keeps the
// others as they are. A merge patch leaves the fields it does not name
// alone, so this is the whole-object patch's result (encode, merge,
// decode) without the JSON of the rest: a status patch of a Work does
// not encode and decode its manifests, nor one of a binding its spec.
// current must be the caller's own (the storage decodes it for each
// attempt): the result shares what the patch does not name with it.
//
// ok is false when the patch is not an object, or names something that
// is not a field of the type: the caller then patches the whole object,
// which reports what is wrong as it always did.
func mergeFields(current runtime.Object, patch []byte) (out runtime.Object, ok bool, err error) {
	v := reflect.ValueOf(current)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(patch, &top); err != nil || top == nil {
		return nil, false, nil
	}
	fields := jsonFields(v.Elem().Type())
	for key := range top {
		if _, known := fields[key]; !known {
			return nil, false, nil
		}
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	if _, named := top["metadata"]; !named {
		// The strategies and admission set labels, annotations and
		// finalizers in place: the copy's metadata is its own.
		if f := cp.Elem().FieldByName("ObjectMeta"); f.IsValid() && f.Type() == objectMetaType {
			m := f.Addr().Interface().(*metav1.ObjectMeta)
			*m = *m.DeepCopy()
		}
	}
	for key, p := range top {
		f := cp.Elem().Field(fields[key])
		merged, err := mergeValue(f, p)
		if err != nil {
			return nil, true, err
		}
		nv := reflect.New(f.Type())
		if merged != nil {
			if err := kjson.UnmarshalCaseSensitivePreserveInts(merged, nv.Interface()); err != nil {
				return nil, true, err
			}
		}
		f.Set(nv.Elem())
	}
	return cp.Interface().(runtime.Object), true, nil
}

// mergeValue is the JSON of field f patched with p, nil for none (the
// field removed: its zero value).
func mergeValue(f reflect.Value, p json.RawMessage) ([]byte, error) {
	p = bytes.TrimSpace(p)
	switch {
	case bytes.Equal(p, []byte("null")):
		return nil, nil
	case len(p) == 0 || p[0] != '{':
		// Anything but an object replaces the value.
		return p, nil
	}
	cur, err := json.Marshal(f.Interface())
	if err != nil {
		return nil, err
	}
	if len(cur) == 0 || cur[0] != '{' {
		// A value that is not an object is replaced as if it were {}.
		cur = []byte("{}")
	}
	return jsonpatch.MergePatch(cur, p)
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// fieldsByType caches jsonFields.
var fieldsByType sync.Map // reflect.Type -> map[string]int

// jsonFields maps the top-level JSON names of struct type t to their
// fields' indexes. Inline structs are left out (TypeMeta: a patch of
// apiVersion or kind goes the whole object's way, which checks them), and
// so is a name given twice.
func jsonFields(t reflect.Type) map[string]int {
	if m, ok := fieldsByType.Load(t); ok {
		return m.(map[string]int)
	}
	into, twice := map[string]int{}, map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous {
			// Inline: its fields are the object's.
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, seen := into[name]; seen || twice[name] {
			delete(into, name)
			twice[name] = true
			continue
		}
		into[name] = i
	}
	fieldsByType.Store(t, into)
	return into
}
