package lua

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

func ric(t testing.TB, y string) *configv1alpha1.ResourceInterpreterCustomization {
	t.Helper()
	r := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := yaml.Unmarshal([]byte(y), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func object(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

func workloadCustomizations(t testing.TB) *Customizations {
	t.Helper()
	c := NewCustomizations()
	if err := c.Set(ric(t, workloadRIC)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWorkloadOperations(t *testing.T) {
	t.Parallel()
	c := workloadCustomizations(t)
	obj := object(t, workload)
	gvk := obj.GroupVersionKind()
	for _, rule := range (&configv1alpha1.CustomizationRules{}).Scripts() {
		op := interpreter.Operation(rule.Operation)
		if op == interpreter.InterpretComponent {
			if c.HookEnabled(gvk, op) {
				t.Errorf("%s enabled without a script", op)
			}
			continue
		}
		if !c.HookEnabled(gvk, op) {
			t.Errorf("%s not enabled", op)
		}
	}

	replicas, req, err := c.GetReplicas(obj)
	if err != nil {
		t.Fatal(err)
	}
	if replicas != 3 || req == nil || req.ResourceRequest.Cpu().String() != "100m" || req.ResourceRequest.Memory().String() != "128Mi" {
		t.Errorf("GetReplicas = %d, %+v", replicas, req)
	}

	revised, err := c.ReviseReplica(obj, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(revised.Object, "spec", "replicas"); n != 2 {
		t.Errorf("revised replicas %d, want 2", n)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); n != 3 {
		t.Errorf("ReviseReplica modified its argument: replicas %d", n)
	}
	// metadata.labels was {} in the object and comes back {} (not []).
	if labels, ok := revised.Object["metadata"].(map[string]any)["labels"].(map[string]any); !ok || len(labels) != 0 {
		t.Errorf("empty labels came back as %#v", revised.Object["metadata"].(map[string]any)["labels"])
	}

	observed := obj.DeepCopy()
	_ = unstructured.SetNestedField(observed.Object, true, "spec", "paused")
	retained, err := c.Retain(obj, observed)
	if err != nil {
		t.Fatal(err)
	}
	if paused, _, _ := unstructured.NestedBool(retained.Object, "spec", "paused"); !paused {
		t.Error("Retain lost the member's spec.paused")
	}

	_ = unstructured.SetNestedField(observed.Object, int64(3), "status", "readyReplicas")
	raw, err := c.ReflectStatus(observed)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw.Raw) != `{"readyReplicas":3}` {
		t.Errorf("ReflectStatus = %s", raw.Raw)
	}
	health, err := c.InterpretHealth(observed)
	if err != nil || health != workv1alpha2.ResourceHealthy {
		t.Errorf("InterpretHealth = %s, %v", health, err)
	}
	if health, _ := c.InterpretHealth(obj); health != workv1alpha2.ResourceUnhealthy {
		t.Errorf("InterpretHealth without status = %s", health)
	}

	agg, err := c.AggregateStatus(obj, []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}},
		{ClusterName: "member2", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":1}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(agg.Object, "status", "readyReplicas"); n != 3 {
		t.Errorf("aggregated readyReplicas %d, want 3", n)
	}

	deps, err := c.GetDependencies(obj)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, d := range deps {
		got[d.Kind+"/"+d.Name] = true
	}
	for _, want := range []string{"ConfigMap/web-config", "Secret/web-secret", "ServiceAccount/web"} {
		if !got[want] {
			t.Errorf("dependencies %+v lack %s", deps, want)
		}
	}
}

// The script's main chunk runs once per pooled state, not per call.
func TestCompiledOncePerState(t *testing.T) {
	t.Parallel()
	s, err := Compile(`
runs = (runs or 0) + 1
function InterpretHealth(obj) return runs end`, "InterpretHealth", 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		err := s.Call(1, func(L *lua.LState) []lua.LValue { return []lua.LValue{lua.LNil} },
			func(ret []lua.LValue, _ *budget) error {
				if ret[0] != lua.LNumber(1) {
					t.Errorf("the chunk ran %v times in this state", ret[0])
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSandbox(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, wantErr string }{
		{"setmetatable", `setmetatable({}, {})`, "setmetatable is not allowed"},
		{"rawget", `rawget({}, 1)`, "rawget is not allowed"},
		{"loadstring", `loadstring("x=1")`, "loadstring is not allowed"},
		{"dofile", `dofile("/etc/passwd")`, "dofile is not allowed"},
		{"os.execute", `os.execute("true")`, "attempt to call a non-function"},
		{"os.getenv", `os.getenv("HOME")`, "attempt to call a non-function"},
		{"io", `io.open("/etc/passwd")`, "attempt to index a non-table"},
		{"gmatch", `string.gmatch("a", "a")`, "attempt to call a non-function"},
		{"gmatch method", `("a"):gmatch("a")`, "attempt to call a non-function"},
		{"require from disk", `require("socket")`, "module socket not found"},
		{"huge string.rep", `string.rep("x", 100000000)`, "longer than"},
		{"huge format width", `string.format("%99999999d", 1)`, "width or precision over"},
		{"huge format precision", `string.format("%.5000f", 1)`, "width or precision over"},
		{"huge argument", `string.upper(string.rep("x", 1048576) .. "y")`, "longer than"},
		{"debug", `debug.getinfo(1)`, "attempt to index a non-table"},
		{"runaway loop", `while true do end`, "did not finish"},
		{"script error with its line", "local x = nil\nlocal y = x.y", "luaScript:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Compile("function InterpretHealth(obj)\n"+tc.body+"\nreturn true\nend", "InterpretHealth", 1)
			if err != nil {
				t.Fatal(err)
			}
			s.limits.Timeout = 200 * time.Millisecond
			err = s.Call(1, func(*lua.LState) []lua.LValue { return []lua.LValue{lua.LNil} },
				func([]lua.LValue, *budget) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	// What stays allowed.
	s, err := Compile(`local kube = require("kube")
function InterpretHealth(obj)
  return string.format("%d", os.time()) ~= "" and math.max(1, 2) == 2 and table.concat({"a", "b"}) == "ab"
    and ("Ab"):lower() == "ab" and kube.resourceAdd("100m", "200m") == 0.3 and kube.getResourceQuantity("1Gi") == 1073741824
end`, "InterpretHealth", 1)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Call(1, func(*lua.LState) []lua.LValue { return nil }, func(ret []lua.LValue, _ *budget) error {
		if ret[0] != lua.LTrue {
			t.Errorf("allowed functions returned %v", ret[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"function Retain(a, b)\nreturn a", "syntax error"},
		{"function Other() end", "does not define the global function Retain"},
		{"error('boom')", "running the script"},
	} {
		if _, err := Compile(tc.src, "Retain", 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) error %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestConversion(t *testing.T) {
	t.Parallel()
	L := newState()
	defer L.Close()
	in := map[string]any{"a": int64(1), "b": 1.5, "c": []any{"x", true, nil}, "d": map[string]any{}, "e": []any{}, "f": map[string]any{"g": "h"}}
	out, err := newBudget(Limits{}).fromLua(toLua(L, in), in)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	// nil inside a sequence ends it in Lua, as in Karmada.
	if string(raw) != `{"a":1,"b":1.5,"c":["x",true],"d":{},"e":[],"f":{"g":"h"}}` {
		t.Errorf("round trip = %s", raw)
	}
	// Keys that are whole numbers beyond int64 keep their value.
	if err := L.DoString(`big = {[2^63] = 1, [-2^63] = 2, [1e300] = 3}`); err != nil {
		t.Fatal(err)
	}
	if v, err := newBudget(Limits{}).fromLua(L.GetGlobal("big"), nil); err != nil {
		t.Fatal(err)
	} else if raw, _ := json.Marshal(v); string(raw) != `{"-9223372036854775808":2,"1e+300":3,"9.223372036854776e+18":1}` {
		t.Errorf("big keys = %s", raw)
	}
	// An empty table with no reference is a list.
	if v, _ := newBudget(Limits{}).fromLua(L.NewTable(), nil); v == nil {
		t.Error("empty table without reference gave nil")
	} else if _, ok := v.([]any); !ok {
		t.Errorf("empty table without reference = %#v, want []", v)
	}
}

func TestBrokenCustomizationIsDropped(t *testing.T) {
	t.Parallel()
	c := workloadCustomizations(t)
	bad := ric(t, workloadRIC)
	bad.Generation = 2
	bad.Spec.Customizations.Retention.LuaScript = "function Retain(a, b"
	if err := c.Set(bad); err == nil || !strings.Contains(err.Error(), "spec.customizations.retention.luaScript") {
		t.Errorf("Set error %v, want one naming the field", err)
	}
	if c.HookEnabled(object(t, workload).GroupVersionKind(), interpreter.InterpretReplica) {
		t.Error("a customization that fails to compile still interprets")
	}
	c.Delete("workload")
	if len(c.byTarget) != 0 {
		t.Errorf("byTarget after delete: %v", c.byTarget)
	}
}

// A call that runs out of time fails with a timeout and its state is
// dropped; the next call gets a fresh state and its own full deadline.
func TestDeadlinePerCall(t *testing.T) {
	t.Parallel()
	s, err := Compile(`function InterpretHealth(spin)
  while spin do end
  return true
end`, "InterpretHealth", 1)
	if err != nil {
		t.Fatal(err)
	}
	s.limits.Timeout = 100 * time.Millisecond
	call := func(spin bool) error {
		return s.Call(1, func(*lua.LState) []lua.LValue { return []lua.LValue{lua.LBool(spin)} },
			func(ret []lua.LValue, _ *budget) error {
				if ret[0] != lua.LTrue {
					t.Errorf("returned %v", ret[0])
				}
				return nil
			})
	}
	for i := range 3 {
		start := time.Now()
		if err := call(true); err == nil || !strings.Contains(err.Error(), "did not finish within 100ms") {
			t.Fatalf("spin %d: error %v, want a timeout", i, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("spin %d took %v", i, took)
		}
		// Calls after the timeout run on a state whose deadline is not spent.
		for range 3 {
			if err := call(false); err != nil {
				t.Fatalf("after spin %d: %v", i, err)
			}
		}
		time.Sleep(150 * time.Millisecond) // longer than the deadline: a pooled state's stopped timer must not fire
		if err := call(false); err != nil {
			t.Fatalf("after idling: %v", err)
		}
	}
}
