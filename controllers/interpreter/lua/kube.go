package lua

import (
	"encoding/json"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/controllers/interpreter"
)

// openKube loads the "kube" helper module scripts get with
// require("kube").
func openKube(L *lua.LState) int {
	mod := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"resourceAdd":             kubeResourceAdd,
		"getResourceQuantity":     kubeGetResourceQuantity,
		"accuratePodRequirements": kubeAccuratePodRequirements,
		"getPodDependencies":      kubeGetPodDependencies,
	})
	L.Push(mod)
	return 1
}

// checkQuantity reads argument n as a quantity: a string ("100m", "1Gi")
// or a number.
func checkQuantity(L *lua.LState, n int) resource.Quantity {
	switch v := L.Get(n).(type) {
	case lua.LString:
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			L.ArgError(n, fmt.Sprintf("not a quantity: %q", string(v)))
		}
		return q
	case lua.LNumber:
		q, err := resource.ParseQuantity(v.String())
		if err != nil {
			L.ArgError(n, fmt.Sprintf("not a quantity: %v", v))
		}
		return q
	case *lua.LNilType:
		return resource.Quantity{}
	default:
		L.ArgError(n, "a quantity must be a string or a number, not a "+v.Type().String())
		return resource.Quantity{}
	}
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

// checkPodTemplate reads argument n, a pod template table, as a
// PodTemplateSpec.
func checkPodTemplate(L *lua.LState, n int) *corev1.PodTemplateSpec {
	v, err := fromLua(L.CheckTable(n), nil)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	m, ok := v.(map[string]any)
	if !ok {
		m = map[string]any{} // an empty table
	}
	var pt corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &pt); err != nil {
		L.ArgError(n, "not a pod template: "+err.Error())
	}
	return &pt
}

// pushJSON pushes v as a Lua value through its JSON form.
func pushJSON(L *lua.LState, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		L.RaiseError("encoding the result: %v", err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		L.RaiseError("encoding the result: %v", err)
	}
	L.Push(toLua(L, out))
}

// kubeAccuratePodRequirements returns the ReplicaRequirements of one
// replica of a pod template: node claim and resource requests computed as
// the kube-scheduler does (max of init containers, sum of containers,
// overhead); nil when there are none.
func kubeAccuratePodRequirements(L *lua.LState) int {
	pt := checkPodTemplate(L, 1)
	req := interpreter.PodRequirements(&pt.Spec)
	if req == nil {
		L.Push(lua.LNil)
		return 1
	}
	pushJSON(L, req)
	return 1
}

// kubeGetPodDependencies returns the objects a pod template in namespace
// refers to: ConfigMaps, Secrets, the ServiceAccount and
// PersistentVolumeClaims.
func kubeGetPodDependencies(L *lua.LState) int {
	pt := checkPodTemplate(L, 1)
	ns := L.OptString(2, "")
	deps := interpreter.PodDependencies(&pt.Spec, ns)
	if deps == nil {
		deps = []interpreter.DependentObjectReference{}
	}
	pushJSON(L, deps)
	return 1
}
