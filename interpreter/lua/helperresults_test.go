package lua

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/parse"

	"github.com/flotilla-io/flotilla/interpreter"
)

func TestOpaqueHelperResults(t *testing.T) {
	t.Parallel()
	const req = "local kube = require(\"kube\")\n"
	for _, tc := range []struct {
		name, fn, src string
		want          bool
	}{
		{"returned directly", "GetDependencies", req + `function GetDependencies(obj) return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace) end`, true},
		{"returned through a local", "GetReplicas", req + `function GetReplicas(obj)
  local replica = obj.spec.replicas
  local requirement = kube.accuratePodRequirements(obj.spec.template)
  return replica, requirement
end`, true},
		{"returned in a branch", "GetReplicas", req + `function GetReplicas(obj)
  if obj.spec.template ~= nil then
    local r = kube.accuratePodRequirements(obj.spec.template)
    return obj.spec.replicas, r
  end
  return obj.spec.replicas
end`, true},
		{"other kube helpers are free", "GetReplicas", req + `function GetReplicas(obj) return kube.getResourceQuantity("1"), kube.accuratePodRequirements(obj.spec.template) end`, true},
		{"not an operation reading Go results", "ReflectStatus", req + `function ReflectStatus(obj) return kube.getPodDependencies(obj.spec.template) end`, false},
		{"result read", "GetReplicas", req + `function GetReplicas(obj)
  local r = kube.accuratePodRequirements(obj.spec.template)
  r.resourceRequest.cpu = "1"
  return 1, r
end`, false},
		{"result in a table", "GetDependencies", req + `function GetDependencies(obj) return {kube.getPodDependencies(obj.spec.template)} end`, false},
		{"result passed on", "GetDependencies", req + `function GetDependencies(obj) return f(kube.getPodDependencies(obj.spec.template)) end`, false},
		{"local reassigned", "GetReplicas", req + `function GetReplicas(obj)
  local r = kube.accuratePodRequirements(obj.spec.template)
  r = r
  return 1, r
end`, false},
		{"local seen by a closure", "GetReplicas", req + `function GetReplicas(obj)
  local r = kube.accuratePodRequirements(obj.spec.template)
  local g = function() return r.resourceRequest end
  g()
  return 1, r
end`, false},
		{"local name bound twice", "GetReplicas", req + `function GetReplicas(obj)
  local r = kube.accuratePodRequirements(obj.spec.template)
  for r = 1, 2 do end
  return 1, r
end`, false},
		{"called from another function", "GetDependencies", req + `function helper(t) return kube.getPodDependencies(t) end
function GetDependencies(obj) return helper(obj.spec.template) end`, false},
		{"called in the main chunk", "GetDependencies", req + `local d = kube.getPodDependencies({})
function GetDependencies(obj) return kube.getPodDependencies(obj.spec.template) end`, false},
		{"helper taken as a value", "GetDependencies", req + `local f = kube.getPodDependencies
function GetDependencies(obj) return f(obj.spec.template) end`, false},
		{"module passed around", "GetDependencies", req + `function GetDependencies(obj) local k = kube return k.getPodDependencies(obj.spec.template) end`, false},
		{"module changed", "GetDependencies", req + `kube.x = 1
function GetDependencies(obj) return kube.getPodDependencies(obj.spec.template) end`, false},
		{"required again", "GetDependencies", req + `function GetDependencies(obj) return require("kube").getPodDependencies(obj.spec.template) end`, false},
		{"through package", "GetDependencies", req + `function GetDependencies(obj) local d = kube.getPodDependencies(obj.spec.template) return package.loaded.kube.getPodDependencies(obj.spec.template).x end`, false},
		{"operation called by the script", "GetDependencies", req + `function GetDependencies(obj) return kube.getPodDependencies(obj.spec.template) end
function Other(obj) return GetDependencies(obj)[1] end`, false},
		{"method call on the module", "GetDependencies", req + `function GetDependencies(obj) return kube:getPodDependencies(obj.spec.template) end`, false},
		{"no kube alias", "GetDependencies", `function GetDependencies(obj) return {} end`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			chunk, err := parse.Parse(strings.NewReader(tc.src), "t")
			if err != nil {
				t.Fatal(err)
			}
			if got := opaqueHelperResults(chunk, tc.fn, findFunction(chunk, tc.fn), kubeAliases(chunk)); got != tc.want {
				t.Errorf("opaqueHelperResults = %v, want %v", got, tc.want)
			}
		})
	}
}

// A script whose helper results are handed back as Go values answers
// exactly what it answers with the helpers returning Lua tables.
func TestOpaqueHelperResultsMatchTables(t *testing.T) {
	t.Parallel()
	const req = "local kube = require(\"kube\")\n"
	obj := object(t, deploymentSized)
	for _, tc := range []struct{ fn, src string }{
		{"GetReplicas", req + `function GetReplicas(obj) local r = kube.accuratePodRequirements(obj.spec.template) return obj.spec.replicas, r end`},
		{"GetReplicas", req + `function GetReplicas(obj) return 1, kube.accuratePodRequirements({spec = {containers = {{name = "a"}}}}) end`},
		{"GetReplicas", req + `function GetReplicas(obj) return 2, kube.accuratePodRequirements({spec = {nodeSelector = {disk = "ssd"}, containers = {{name = "a", resources = {requests = {cpu = "1"}}}}}}) end`},
		{"GetReplicas", req + `function GetReplicas(obj) return 1, kube.accuratePodRequirements({spec = {priorityClassName = "high", containers = {{name = "a", resources = {requests = {cpu = "1"}}}}}}) end`},
		{"GetDependencies", req + `function GetDependencies(obj) return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace) end`},
		{"GetDependencies", req + `function GetDependencies(obj) return kube.getPodDependencies({spec = {}}, "ns") end`},
	} {
		results := map[bool]string{}
		for _, opaque := range []bool{true, false} {
			s, err := Compile(tc.src, tc.fn, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !s.opaqueHelpers {
				t.Fatalf("%s: helper results not handed back as Go values", tc.src)
			}
			if !opaque {
				s.opaqueHelpers = false
				s.Close()
			}
			c := NewCustomizations()
			op := interpreter.InterpretReplica
			if tc.fn == "GetDependencies" {
				op = interpreter.InterpretDependency
			}
			c.byTarget[obj.GroupVersionKind()] = map[interpreter.Operation]*Script{op: s}
			var got any
			if op == interpreter.InterpretReplica {
				n, r, err := c.GetReplicas(obj)
				got = []any{n, r, errString(err)}
			} else {
				d, err := c.GetDependencies(obj)
				if len(d) == 0 {
					d = nil
				}
				got = []any{d, errString(err)}
			}
			raw, _ := json.Marshal(got)
			results[opaque] = string(raw)
		}
		if results[true] != results[false] {
			t.Errorf("%s:\nGo values %s\ntables    %s", tc.src, results[true], results[false])
		}
	}
}

// kube.accuratePodRequirements keeps the template's priority class, which
// the ResourceQuotaEstimate gate then keeps or drops (QuotaScoped).
func TestAccuratePodRequirementsPriorityClass(t *testing.T) {
	t.Parallel()
	s, err := Compile("local kube = require(\"kube\")\n"+`function GetReplicas(obj) return 1, kube.accuratePodRequirements({spec = {priorityClassName = "high", containers = {{name = "a", resources = {requests = {cpu = "1"}}}}}}) end`, "GetReplicas", 1)
	if err != nil {
		t.Fatal(err)
	}
	obj := object(t, deploymentSized)
	c := NewCustomizations()
	c.byTarget[obj.GroupVersionKind()] = map[interpreter.Operation]*Script{interpreter.InterpretReplica: s}
	_, r, err := c.GetReplicas(obj)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil || r.PriorityClassName != "high" || r.ResourceRequest.Cpu().Value() != 1 {
		t.Errorf("requirements %+v, want priority class high and 1 CPU", r)
	}
}
