package lua

import (
	"encoding/json"
	"fmt"
	"strconv"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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

// podFields are the parts of a pod template a helper reads: the pod spec
// fields, and of each container the container fields. Converting only
// those from Lua keeps a helper call cheap whatever else the template
// holds.
type podFields struct {
	spec, container map[string]bool
}

var (
	requirementFields = podFields{
		spec:      set("containers", "initContainers", "overhead", "nodeSelector", "tolerations", "affinity", "priorityClassName"),
		container: set("name", "resources", "restartPolicy"),
	}
	dependencyFields = podFields{
		spec:      set("containers", "initContainers", "ephemeralContainers", "volumes", "imagePullSecrets", "serviceAccountName"),
		container: set("name", "env", "envFrom"),
	}
)

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// checkPodSpec reads the spec of argument n, a pod template (a table, or
// the template as the object holds it when the script hands it over
// untouched), as a PodSpec holding only the fields f names.
func checkPodSpec(L *lua.LState, n int, f podFields) *corev1.PodSpec {
	var spec map[string]any
	if ud, ok := L.Get(n).(*lua.LUserData); ok {
		g, ok := ud.Value.(goValue)
		if !ok {
			L.ArgError(n, "not a pod template")
		}
		tmpl, _ := g.v.(map[string]any)
		spec, _ = tmpl["spec"].(map[string]any)
	} else {
		t, _ := L.CheckTable(n).RawGetString("spec").(*lua.LTable)
		spec = map[string]any{}
		var err error
		if t != nil {
			t.ForEach(func(k, v lua.LValue) {
				if key := keyString(k); err == nil && f.spec[key] {
					spec[key], err = fromLua(v, dropEmpty)
				}
			})
		}
		if err != nil {
			L.ArgError(n, err.Error())
		}
	}
	ps, err := podSpecFrom(spec, f)
	if err != nil {
		L.ArgError(n, "not a pod template: "+err.Error())
	}
	return ps
}

// podSpecFrom decodes the fields f names of a pod spec. Containers that
// carry nothing f needs beyond names, restart policies and resources, and
// the overhead, are read directly (most templates, for requests); the rest
// goes through JSON, trimmed to the fields f names, so its cost follows
// them rather than every field of PodSpec and Container.
func podSpecFrom(spec map[string]any, f podFields) (*corev1.PodSpec, error) {
	var ps corev1.PodSpec
	rest := map[string]any{}
	for key, v := range spec {
		if !f.spec[key] {
			continue
		}
		var ok bool
		switch key {
		case "containers":
			ps.Containers, ok = resourceContainers(v, f.container)
		case "initContainers":
			ps.InitContainers, ok = resourceContainers(v, f.container)
		case "overhead":
			ps.Overhead, ok = resourceList(v)
		}
		if ok {
			continue
		}
		if list, isList := v.([]any); isList && (key == "containers" || key == "initContainers" || key == "ephemeralContainers") {
			containers := make([]any, 0, len(list))
			for _, c := range list {
				cm, _ := c.(map[string]any)
				kept := map[string]any{}
				for ck, cv := range cm {
					if f.container[ck] {
						kept[ck] = cv
					}
				}
				containers = append(containers, kept)
			}
			v = containers
		}
		rest[key] = v
	}
	if len(rest) == 0 {
		return &ps, nil
	}
	raw, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, err
	}
	return &ps, nil
}

// resourceContainers reads containers made only of name, restartPolicy
// and resources, ignoring the fields keep (when not nil) leaves out; ok is
// false for anything else.
func resourceContainers(v any, keep map[string]bool) ([]corev1.Container, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]corev1.Container, 0, len(list))
	for _, c := range list {
		cm, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		var ct corev1.Container
		for k, v := range cm {
			if keep != nil && !keep[k] {
				continue
			}
			switch k {
			case "name":
				if ct.Name, ok = v.(string); !ok {
					return nil, false
				}
			case "restartPolicy":
				p, ok := v.(string)
				if !ok {
					return nil, false
				}
				policy := corev1.ContainerRestartPolicy(p)
				ct.RestartPolicy = &policy
			case "resources":
				res, ok := v.(map[string]any)
				if !ok {
					return nil, false
				}
				for rk, rv := range res {
					var list corev1.ResourceList
					if list, ok = resourceList(rv); !ok {
						return nil, false
					}
					switch rk {
					case "requests":
						ct.Resources.Requests = list
					case "limits":
						ct.Resources.Limits = list
					default:
						return nil, false
					}
				}
			default:
				return nil, false
			}
		}
		out = append(out, ct)
	}
	return out, true
}

// resourceList reads a map of quantities (strings or numbers).
func resourceList(v any) (corev1.ResourceList, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(corev1.ResourceList, len(m))
	for name, q := range m {
		var text string
		switch q := q.(type) {
		case string:
			text = q
		case int64:
			text = strconv.FormatInt(q, 10)
		case float64:
			text = strconv.FormatFloat(q, 'f', -1, 64)
		default:
			return nil, false
		}
		parsed, err := resource.ParseQuantity(text)
		if err != nil {
			return nil, false
		}
		out[corev1.ResourceName(name)] = parsed
	}
	return out, true
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
	req := interpreter.PodRequirements(checkPodSpec(L, 1, requirementFields))
	switch {
	case req == nil:
		L.Push(lua.LNil)
	case req.NodeClaim == nil && req.Namespace == "" && req.PriorityClassName == "":
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
func kubeGetPodDependencies(L *lua.LState) int {
	ns := L.OptString(2, "")
	deps := interpreter.PodDependencies(checkPodSpec(L, 1, dependencyFields), ns)
	out := L.CreateTable(len(deps), 0)
	for i, d := range deps {
		if d.LabelSelector != nil {
			pushJSON(L, deps)
			return 1
		}
		t := L.CreateTable(0, 4)
		t.RawSetString("apiVersion", lua.LString(d.APIVersion))
		t.RawSetString("kind", lua.LString(d.Kind))
		if d.Namespace != "" {
			t.RawSetString("namespace", lua.LString(d.Namespace))
		}
		if d.Name != "" {
			t.RawSetString("name", lua.LString(d.Name))
		}
		out.RawSetInt(i+1, t)
	}
	L.Push(out)
	return 1
}
