package v1alpha1

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"
)

func TestScripts(t *testing.T) {
	t.Parallel()
	r := CustomizationRules{
		ReplicaResource:          &ReplicaResourceRequirement{LuaScript: "a"},
		DependencyInterpretation: &DependencyInterpretation{},
	}
	var got []string
	for _, s := range r.Scripts() {
		if s.Set {
			got = append(got, s.Field+"/"+string(s.Operation)+"/"+s.Function+"/"+s.Script)
		}
	}
	want := []string{"replicaResource/InterpretReplica/GetReplicas/a", "dependencyInterpretation/InterpretDependency/GetDependencies/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scripts() set rules = %q, want %q", got, want)
	}
	if n := len(r.Scripts()); n != 8 {
		t.Errorf("Scripts() lists %d rules, want 8", n)
	}
}

// TestResourceInterpreterContextWire decodes a request and a response as a
// Karmada interpreter webhook exchanges them.
func TestResourceInterpreterContextWire(t *testing.T) {
	t.Parallel()
	const request = `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterContext",
	  "request":{"uid":"u1","kind":{"group":"apps","version":"v1","kind":"Deployment"},"name":"nginx","namespace":"default",
	    "operation":"ReviseReplica","object":{"apiVersion":"apps/v1","kind":"Deployment"},"replicas":3,
	    "aggregatedStatus":[{"clusterName":"member1","status":{"readyReplicas":1},"applied":true,"health":"Healthy"}]}}`
	var req ResourceInterpreterContext
	if err := json.Unmarshal([]byte(request), &req); err != nil {
		t.Fatal(err)
	}
	r := req.Request
	if r == nil || r.Operation != InterpreterOperationReviseReplica || ptr.Deref(r.DesiredReplicas, 0) != 3 ||
		r.Kind.Kind != "Deployment" || len(r.AggregatedStatus) != 1 || r.AggregatedStatus[0].ClusterName != "member1" {
		t.Fatalf("request decoded wrongly: %+v", r)
	}

	resp := ResourceInterpreterContext{Response: &ResourceInterpreterResponse{
		UID: "u1", Successful: true, Patch: []byte(`[{"op":"replace","path":"/spec/replicas","value":3}]`),
		PatchType: ptr.To(PatchTypeJSONPatch), Replicas: ptr.To[int32](3), Healthy: ptr.To(true),
		Dependencies: []DependentObjectReference{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cfg"}},
	}}
	raw, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"uid", "successful", "patch", "patchType", "replicas", "healthy", "dependencies"} {
		if _, ok := fields["response"][key]; !ok {
			t.Errorf("response JSON lacks %q: %s", key, raw)
		}
	}
}
