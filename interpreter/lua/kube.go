package lua

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/interpreter"
)

// kubeModule returns the loader of the "kube" helper module scripts get
// with require("kube"). With opaque, the helpers taking a pod template
// return their result as a helperResult holding the Go value, for scripts
// that only hand it back (opaqueHelperResults).
func kubeModule(opaque bool, b *budget) lua.LGFunction {
	return func(L *lua.LState) int {
		mod := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
			"resourceAdd":         kubeResourceAdd,
			"getResourceQuantity": kubeGetResourceQuantity,
			"accuratePodRequirements": func(L *lua.LState) int {
				return kubeAccuratePodRequirements(L, opaque, b)
			},
			"getPodDependencies": func(L *lua.LState) int {
				return kubeGetPodDependencies(L, opaque, b)
			},
		})
		L.Push(mod)
		return 1
	}
}

// pushOpaque pushes v as a helperResult.
func pushOpaque(L *lua.LState, v any) {
	ud := L.NewUserData()
	ud.Value = helperResult{v}
	L.Push(ud)
}

// luaQuantity reads a quantity given as a string ("100m", "1Gi") or a
// number.
func luaQuantity(v lua.LValue) (resource.Quantity, error) {
	switch v := v.(type) {
	case lua.LString:
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			return q, fmt.Errorf("not a quantity: %q", string(v))
		}
		return q, nil
	case lua.LNumber:
		q, err := resource.ParseQuantity(v.String())
		if err != nil {
			return q, fmt.Errorf("not a quantity: %v", v)
		}
		return q, nil
	default:
		return resource.Quantity{}, fmt.Errorf("a quantity must be a string or a number, not a %s", v.Type())
	}
}

// checkQuantity reads argument n as a quantity; nil is zero.
func checkQuantity(L *lua.LState, n int) resource.Quantity {
	v := L.Get(n)
	if v == lua.LNil {
		return resource.Quantity{}
	}
	q, err := luaQuantity(v)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	return q
}

func quantityNumber(q resource.Quantity) lua.LNumber {
	return lua.LNumber(q.AsApproximateFloat64())
}

// kubeResourceAdd sums its quantity arguments and returns the sum as a number.
func kubeResourceAdd(L *lua.LState) int {
	var sum resource.Quantity
	for i := 1; i <= L.GetTop(); i++ {
		sum.Add(checkQuantity(L, i))
	}
	L.Push(quantityNumber(sum))
	return 1
}

// kubeGetResourceQuantity returns a quantity as a number.
func kubeGetResourceQuantity(L *lua.LState) int {
	L.Push(quantityNumber(checkQuantity(L, 1)))
	return 1
}

// checkPodSpec reads the spec of argument n, a pod template (a table, or
// the template as the object holds it when the script hands it over
// untouched), as unstructured data; of a table only the named fields are
// converted, within the call's budget of result values: a table sharing
// subtables would otherwise convert to exponentially many values.
func checkPodSpec(L *lua.LState, b *budget, n int, fields map[string]bool) map[string]any {
	if ud, ok := L.Get(n).(*lua.LUserData); ok {
		g, ok := ud.Value.(goValue)
		if !ok {
			L.ArgError(n, "not a pod template")
		}
		tmpl, _ := g.v.(map[string]any)
		spec, _ := tmpl["spec"].(map[string]any)
		return spec
	}
	t, _ := L.CheckTable(n).RawGetString("spec").(*lua.LTable)
	spec := map[string]any{}
	var err error
	if t != nil {
		t.ForEach(func(k, v lua.LValue) {
			if key := keyString(k); err == nil && fields[key] {
				spec[key], err = b.fromLua(v, dropEmpty)
			}
		})
	}
	if err != nil {
		L.ArgError(n, err.Error())
	}
	return spec
}

// pushJSON pushes v as a Lua value through its JSON form.
func pushJSON(L *lua.LState, v any) {
	out, err := jsonValue(v)
	if err != nil {
		L.RaiseError("encoding the result: %v", err)
	}
	L.Push(toLua(L, out))
}

// kubeAccuratePodRequirements returns the ReplicaRequirements of one
// replica of a pod template: node claim and resource requests computed as
// the kube-scheduler does (max of init containers, sum of containers,
// overhead), and the template's priority class, which only the
// ResourceQuotaEstimate gate keeps (interpreter.QuotaScoped); nil when
// there are none.
func kubeAccuratePodRequirements(L *lua.LState, opaque bool, b *budget) int {
	req, priorityClass, err := interpreter.SpecRequirements(checkPodSpec(L, b, 1, interpreter.RequirementFields))
	if err != nil {
		L.ArgError(1, "not a pod template: "+err.Error())
	}
	if req != nil {
		req.PriorityClassName = priorityClass
	}
	switch {
	case req != nil && opaque:
		pushOpaque(L, req)
	case req == nil:
		L.Push(lua.LNil)
	case req.NodeClaim == nil && req.PriorityClassName == "":
		// The usual result, built directly: {resourceRequest = {cpu = "150m", ...}}.
		requests := L.CreateTable(0, len(req.ResourceRequest))
		for name, q := range req.ResourceRequest {
			requests.RawSetString(string(name), lua.LString(q.String()))
		}
		out := L.CreateTable(0, 1)
		out.RawSetString("resourceRequest", requests)
		L.Push(out)
	default:
		pushJSON(L, req)
	}
	return 1
}

// kubeGetPodDependencies returns the objects a pod template in namespace
// refers to: ConfigMaps, Secrets, the ServiceAccount and
// PersistentVolumeClaims.
func kubeGetPodDependencies(L *lua.LState, opaque bool, b *budget) int {
	ns := L.OptString(2, "")
	deps, err := interpreter.PodDependencies(checkPodSpec(L, b, 1, interpreter.DependencyFields), ns)
	if err != nil {
		L.ArgError(1, "not a pod template: "+err.Error())
	}
	if opaque {
		pushOpaque(L, deps)
		return 1
	}
	out := L.CreateTable(len(deps), 0)
	var namespace lua.LValue = lua.LString(ns)
	// PodDependencies names core objects in ns only: {apiVersion = "v1",
	// kind, namespace, name}.
	for i, d := range deps {
		t := L.CreateTable(0, 4)
		t.RawSetString("apiVersion", luaV1)
		t.RawSetString("kind", coreKind(d.Kind))
		if ns != "" {
			t.RawSetString("namespace", namespace)
		}
		t.RawSetString("name", lua.LString(d.Name))
		out.RawSetInt(i+1, t)
	}
	L.Push(out)
	return 1
}

// The Lua strings of the core kinds a pod depends on, made once.
var (
	luaV1     lua.LValue = lua.LString("v1")
	coreKinds            = map[string]lua.LValue{}
)

func init() {
	for _, k := range []string{"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"} {
		coreKinds[k] = lua.LString(k)
	}
}

func coreKind(kind string) lua.LValue {
	if v, ok := coreKinds[kind]; ok {
		return v
	}
	return lua.LString(kind)
}
