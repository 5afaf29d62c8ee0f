package lua

import (
	"fmt"
	"reflect"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// The readers of the results of the operations' functions.

// helperValue is the Go value of a helper's result handed back as it is.
func helperValue(v lua.LValue) (any, bool) {
	ud, ok := v.(*lua.LUserData)
	if !ok {
		return nil, false
	}
	h, ok := ud.Value.(helperResult)
	return h.v, ok
}

// requestsOnly reads the usual requirement table, {resourceRequest = {cpu
// = "100m", ...}}, without going through JSON; ok is false for any other
// shape.
func requestsOnly(v lua.LValue) (*workv1alpha2.ReplicaRequirements, bool) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, false
	}
	var requests *lua.LTable
	shape := true
	t.ForEach(func(k, e lua.LValue) {
		r, isTable := e.(*lua.LTable)
		if k.String() != "resourceRequest" || !isTable {
			shape = false
			return
		}
		requests = r
	})
	if !shape || requests == nil {
		return nil, false
	}
	list := make(corev1.ResourceList, 4)
	requests.ForEach(func(k, e lua.LValue) {
		name, isName := k.(lua.LString)
		if !shape || !isName {
			shape = false
			return
		}
		q, err := luaQuantity(e)
		if err != nil {
			shape = false
			return
		}
		list[corev1.ResourceName(name)] = q
	})
	if !shape {
		return nil, false
	}
	if len(list) == 0 {
		list = nil
	}
	return &workv1alpha2.ReplicaRequirements{ResourceRequest: list}, true
}

// namedDependencies reads a list of dependencies named by apiVersion,
// kind, namespace and name (what kube.getPodDependencies returns) without
// going through JSON; ok is false for any other shape (a label selector).
func namedDependencies(v lua.LValue) ([]interpreter.DependentObjectReference, bool) {
	list, ok := v.(*lua.LTable)
	if !ok {
		return nil, false
	}
	n := list.Len()
	out := make([]interpreter.DependentObjectReference, 0, n)
	shape := true
	count := 0
	list.ForEach(func(_, e lua.LValue) {
		count++
		t, ok := e.(*lua.LTable)
		if !ok {
			shape = false
			return
		}
		var d interpreter.DependentObjectReference
		t.ForEach(func(k, fv lua.LValue) {
			str, ok := fv.(lua.LString)
			if !ok {
				shape = false
				return
			}
			switch k.String() {
			case "apiVersion":
				d.APIVersion = string(str)
			case "kind":
				d.Kind = string(str)
			case "namespace":
				d.Namespace = string(str)
			case "name":
				d.Name = string(str)
			default:
				shape = false
			}
		})
		out = append(out, d)
	})
	if !shape || count != n {
		return nil, false
	}
	return out, true
}

// decodeResult converts a returned table into out, a pointer, through
// JSON, within b. The conversion follows out's type (goType): an empty
// table where an object is expected is absent, and leaves *out as it is
// when it is the whole result.
func decodeResult(b *budget, v lua.LValue, out any) error {
	conv, err := b.fromLua(v, typeRef(reflect.TypeOf(out).Elem()))
	if err != nil {
		return err
	}
	if conv == absent {
		return nil
	}
	if err := viaJSON(conv, out); err != nil {
		return fmt.Errorf("unexpected result: %w", err)
	}
	return nil
}
