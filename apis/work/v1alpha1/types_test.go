package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// Objects as Karmada serves them, with every field set.
const (
	karmadaWork = `{
  "apiVersion": "work.karmada.io/v1alpha1",
  "kind": "Work",
  "metadata": {"name": "nginx-687f7fb96f", "namespace": "karmada-es-member1",
    "labels": {"work.karmada.io/permanent-id": "7d3a"}, "finalizers": ["karmada.io/execution-controller"]},
  "spec": {
    "workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx"}, "spec": {"replicas": 2}}]},
    "suspendDispatching": true,
    "preserveResourcesOnDeletion": false
  },
  "status": {
    "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedSuccessful", "message": "Manifest has been successfully applied",
      "lastTransitionTime": "2026-08-01T10:00:00Z"}],
    "manifestStatuses": [{"identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment", "resource": "deployments",
      "namespace": "default", "name": "nginx"}, "status": {"replicas": 2}, "health": "Healthy"}]
  }
}`
	karmadaV1alpha1Binding = `{
  "apiVersion": "work.karmada.io/v1alpha1",
  "kind": "ResourceBinding",
  "metadata": {"name": "nginx-deployment", "namespace": "default"},
  "spec": {
    "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx", "resourceVersion": "12",
      "resourcePerReplicas": {"cpu": "100m"}, "replicas": 3},
    "clusters": [{"name": "member1", "replicas": 3}]
  },
  "status": {
    "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "", "lastTransitionTime": "2026-08-01T10:00:00Z"}],
    "aggregatedStatus": [{"clusterName": "member1", "status": {"replicas": 3}, "applied": true, "appliedMessage": "ok"}]
  }
}`
)

// TestWireFormat decodes Karmada objects strictly (an unknown field fails)
// and checks that encoding them again gives back the same JSON.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		obj  any
	}{
		{"Work", karmadaWork, &Work{}},
		{"ResourceBinding", karmadaV1alpha1Binding, &ResourceBinding{}},
		{"ClusterResourceBinding", karmadaV1alpha1Binding, &ClusterResourceBinding{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dec := json.NewDecoder(bytes.NewReader([]byte(tc.doc)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tc.obj); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			out, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := json.Unmarshal([]byte(tc.doc), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("does not re-encode to the same JSON:\nwant %v\ngot  %v", want, got)
			}
		})
	}
}
