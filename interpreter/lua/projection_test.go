package lua

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

func analyzeSource(t *testing.T, src, fn string, identity bool) analysis {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), "t")
	if err != nil {
		t.Fatal(err)
	}
	return analyze(findFunction(chunk, fn), kubeAliases(chunk), identity)
}

// describe renders a projection as sorted paths, "*" for whole.
func describe(p *projection) string {
	if p == nil {
		return "-"
	}
	if p.full {
		return "*"
	}
	if p.opaque && len(p.children) == 0 {
		return "~"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p.children)) {
		parts = append(parts, k+":"+describe(p.children[k]))
	}
	if p.elem != nil {
		parts = append(parts, "[]:"+describe(p.elem))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestAnalyze(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		identity  bool
		want      string // per parameter, or "whole"
	}{
		{"field chains", `function F(obj) return obj.spec.replicas, obj["status"] end`, false, "{spec:{replicas:~},status:~}"},
		{"assignment and identity return", `function F(obj, n) obj.spec.replicas = n return obj end`, true, "{spec:{replicas:{}}} *"},
		{"identity return not allowed", `function F(obj) return obj end`, false, "*"},
		{"variable key", `function F(obj, k) return obj.spec[k] end`, false, "{spec:{[]:~}} *"},
		{"number key", `function F(obj) return obj.spec.containers[1].image end`, false, "{spec:{containers:{[]:{image:~}}}}"},
		{"loop over a list", "function F(obj, items)\nlocal n = 0\nfor i = 1, #items do\nif items[i].status ~= nil then n = n + items[i].status.ready end\nend\nreturn n\nend", false, "- {[]:{status:{ready:*}}}"},
		{"length only", `function F(obj) return #obj.spec.containers end`, false, "{spec:{containers:{[]:{}}}}"},
		{"key from a chain", `function F(obj) return obj.data[obj.spec.key] end`, false, "{data:{[]:~},spec:{key:*}}"},
		{"constant key spelled as the element marker", "function F(obj) return obj.spec[\"\\0[elem]\"] end", false, "{spec:{[]:~}}"},
		{"elements of the returned object are whole", `function F(obj, n) obj.spec.containers[1].image = "x" return obj end`, true, "{spec:{containers:*}} -"},
		{"passed to a function", `function F(obj) return helper(obj.spec.template) end`, false, "{spec:{template:*}}"},
		{"unused parameter", `function F(obj, unused) return obj.kind end`, false, "{kind:~} -"},
		{"closure", `function F(obj) local g = function() return obj.metadata.name end return g() end`, false, "{metadata:{name:*}}"},
		{"blocks", "function F(obj)\nif obj.a then for i = 1, #obj.b do local x = obj.c.d end end\nwhile obj.e do end\nreturn obj.f\nend", false, "{a:{},b:{[]:{}},c:{d:*},e:{},f:~}"},
		{"defined in a block", "if true then\nfunction F(obj) return obj.x end\nend", false, "{x:~}"},
		{"assigned function", "F = function(obj) return obj.status end", false, "{status:~}"},
		{"whole object passed", `function F(obj) return helper(obj) end`, false, "*"},
		{"iterated", `function F(obj) for k, v in pairs(obj) do end end`, false, "*"},
		{"aliased", `function F(obj) local o = obj o.x = 1 return o end`, true, "*"},
		{"method call", `function F(obj) return obj.spec:get() end`, false, "{spec:*}"},
		{"shadowed by a local", `function F(obj) local obj = {} return obj.x end`, false, "whole"},
		{"shadowed by a loop", `function F(obj) for obj = 1, 2 do end end`, false, "whole"},
		{"rebound", `function F(obj) obj = {} return obj end`, true, "whole"},
		{"varargs", `function F(...) return 1 end`, false, "whole"},
		{"defined twice", "function F(obj) return obj.a end\nfunction F(obj) return obj.b end", false, "whole"},
		{"not defined", "function G(obj) return obj.a end", false, "whole"},
		{"tests need presence only", "function F(obj)\nif obj.status ~= nil and not obj.spec.paused then return 1 end\nwhile obj.a do end\nreturn obj.b == nil\nend", false, "{a:{},b:{},spec:{paused:{}},status:{}}"},
		{"a value of and/or is whole", `function F(obj) return obj.status and obj.status.x end`, false, "{status:*}"},
		{"compared with a value", `function F(obj) return obj.spec.replicas == obj.status.readyReplicas end`, false, "{spec:{replicas:*},status:{readyReplicas:*}}"},
		{"handed to a kube helper", "local kube = require(\"kube\")\nfunction F(obj) return kube.accuratePodRequirements(obj.spec.template), obj.spec.replicas end", false, "{spec:{replicas:~,template:~}}"},
		{"kube rebound", "local kube = require(\"kube\")\nkube = {accuratePodRequirements = function(t) return t end}\nfunction F(obj) return kube.accuratePodRequirements(obj.spec.template) end", false, "{spec:{template:*}}"},
		{"require rebound", "require = function() return {} end\nlocal kube = require(\"kube\")\nfunction F(obj) return kube.getPodDependencies(obj.spec.template) end", false, "{spec:{template:*}}"},
		{"other module", "local k = require(\"other\")\nfunction F(obj) return k.accuratePodRequirements(obj.spec.template) end", false, "{spec:{template:*}}"},
		{"handed over and read", "local kube = require(\"kube\")\nfunction F(obj) return kube.accuratePodRequirements(obj.spec.template), obj.spec.template.metadata end", false, "{spec:{template:{metadata:~}}}"},
		{"returned inside a table", `function F(obj) return {ready = obj.status.ready, conditions = obj.status.conditions, n = obj.spec.replicas + 1} end`, false, "{spec:{replicas:*},status:{conditions:~,ready:~}}"},
		{"returned by a closure", `function F(obj) local g = function() return obj.status end return g() end`, false, "{status:*}"},
		{"identity inside a closure", `function F(obj) local g = function() return obj end return g() end`, true, "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := analyzeSource(t, tc.src, "F", tc.identity)
			got := "whole"
			if !a.whole {
				var parts []string
				for _, p := range a.params {
					parts = append(parts, describe(p))
				}
				got = strings.Join(parts, " ")
			}
			if got != tc.want {
				t.Errorf("analysis %s, want %s", got, tc.want)
			}
		})
	}
}

// Every operation gives the same result with arguments projected and with
// them converted whole, for the customizations of the tests and of the
// samples, on a Deployment-sized object.
func TestProjectionMatchesWholeConversion(t *testing.T) {
	t.Parallel()
	sample, err := os.ReadFile(filepath.Join("..", "..", "samples", "workload-interpreter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, manifest := range map[string]string{"tests": workloadRIC, "sample": string(sample), "lists": listsRIC} {
		projected, whole := NewCustomizations(), NewCustomizations()
		if err := projected.Set(ric(t, manifest)); err != nil {
			t.Fatal(err)
		}
		if err := whole.Set(ric(t, manifest)); err != nil {
			t.Fatal(err)
		}
		projectedOps := 0
		for _, byOp := range projected.byTarget {
			for _, s := range byOp {
				if !s.args.whole {
					projectedOps++
				}
			}
		}
		if projectedOps < 5 {
			t.Errorf("%s: only %d operations have projected arguments", name, projectedOps)
		}
		for _, byOp := range whole.byTarget {
			for _, s := range byOp {
				s.args = analysis{whole: true}
				s.opaqueHelpers = false
				s.Close() // states are made again, with the helpers returning tables
			}
		}
		obj := object(t, deploymentSized)
		observed := obj.DeepCopy()
		_ = unstructured.SetNestedField(observed.Object, true, "spec", "paused")
		items := []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}}}
		run := func(c *Customizations) map[string]string {
			out := map[string]string{}
			record := func(op string, v any, err error) {
				raw, _ := json.Marshal(v)
				out[op] = string(raw) + " " + errString(err)
			}
			r, req, err := c.GetReplicas(obj)
			record("replicas", []any{r, req}, err)
			v1, err := c.ReviseReplica(obj, 2)
			record("revise", v1, err)
			v2, err := c.Retain(obj, observed)
			record("retain", v2, err)
			v3, err := c.AggregateStatus(obj, items)
			record("aggregate", v3, err)
			v4, err := c.ReflectStatus(obj)
			record("reflect", v4, err)
			v5, err := c.InterpretHealth(obj)
			record("health", v5, err)
			v6, err := c.GetDependencies(obj)
			record("dependencies", v6, err)
			return out
		}
		before := obj.DeepCopy()
		got, want := run(projected), run(whole)
		if !reflect.DeepEqual(got, want) {
			for op := range want {
				if got[op] != want[op] {
					t.Errorf("%s %s:\nprojected %s\nwhole     %s", name, op, got[op], want[op])
				}
			}
		}
		if !reflect.DeepEqual(before.Object, obj.Object) {
			t.Errorf("%s: an operation modified its argument", name)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Writes merge into the original when the script changed a table in place
// and replace it when the script put a new one there, exactly as with the
// whole object converted.
func TestWritesMergeOrReplace(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`function ReviseReplica(obj, n) if obj.status == nil then obj.status = {} end obj.status.readyReplicas = n return obj end`,
		`function ReviseReplica(obj, n) obj.status = {readyReplicas = n} return obj end`,
		`function ReviseReplica(obj, n) if n > 5 then obj.metadata.labels = {x = "1"} end obj.metadata.labels.y = "2" return obj end`,
		`function ReviseReplica(obj, n) if n > 5 then obj.spec = nil end return obj end`,
		`function ReviseReplica(obj, n) obj.spec.template.spec.containers[1].image = "v" .. n return obj end`,
		`function ReviseReplica(obj, n) local t = obj.metadata t.name = "x" .. n return obj end`,
	} {
		projected, err := Compile(src, "ReviseReplica", 1)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Compile(src, "ReviseReplica", 1)
		if err != nil {
			t.Fatal(err)
		}
		whole.args = analysis{whole: true}
		c := func(s *Script) *Customizations {
			cs := NewCustomizations()
			cs.byTarget[object(t, deploymentSized).GroupVersionKind()] = map[interpreter.Operation]*Script{interpreter.ReviseReplica: s}
			return cs
		}
		for _, n := range []int64{2, 9} {
			obj := object(t, deploymentSized)
			before := obj.DeepCopy()
			got, err1 := c(projected).ReviseReplica(obj, n)
			want, err2 := c(whole).ReviseReplica(obj, n)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: %v %v", src, err1, err2)
			}
			if !reflect.DeepEqual(got.Object, want.Object) {
				g, _ := json.Marshal(got.Object)
				w, _ := json.Marshal(want.Object)
				t.Errorf("%s, n=%d:\nprojected %s\nwhole     %s", src, n, g, w)
			}
			if !reflect.DeepEqual(before.Object, obj.Object) {
				t.Errorf("%s modified its argument", src)
			}
		}
	}
}
