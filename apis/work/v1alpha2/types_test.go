package v1alpha2

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// karmadaResourceBinding is a ResourceBinding as Karmada serves it, with
// every spec and status field set.
const karmadaResourceBinding = `{
  "apiVersion": "work.karmada.io/v1alpha2",
  "kind": "ResourceBinding",
  "metadata": {"name": "nginx-deployment", "namespace": "default",
    "labels": {"resourcebinding.karmada.io/permanent-id": "5e0c"}},
  "spec": {
    "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx",
      "uid": "a1", "resourceVersion": "12"},
    "propagateDeps": true,
    "replicaRequirements": {
      "nodeClaim": {
        "hardNodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "gpu", "operator": "Exists"}]
      },
      "resourceRequest": {"cpu": "100m", "memory": "64Mi"},
      "namespace": "default",
      "priorityClassName": "high"
    },
    "replicas": 3,
    "components": [{"name": "worker", "replicas": 3,
      "replicaRequirements": {"nodeClaim": {"nodeSelector": {"disk": "ssd"}}, "resourceRequest": {"cpu": "1"}, "priorityClassName": "high"}}],
    "clusters": [{"name": "member1", "replicas": 2, "components": [{"name": "worker", "replicas": 2}]}, {"name": "member2", "replicas": 1}],
    "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}},
    "gracefulEvictionTasks": [{"fromCluster": "member3", "purgeMode": "Gracefully", "replicas": 1, "reason": "TaintUntolerated",
      "message": "tainted", "producer": "TaintManager", "gracePeriodSeconds": 600, "suppressDeletion": false,
      "preservedLabelState": {"k": "v"}, "clustersBeforeFailover": ["member3"], "creationTimestamp": "2026-08-01T10:00:00Z"}],
    "requiredBy": [{"namespace": "default", "name": "app-deployment", "clusters": [{"name": "member1"}]}],
    "schedulerName": "default-scheduler",
    "failover": {"cluster": {"purgeMode": "Directly"}},
    "conflictResolution": "Overwrite",
    "rescheduleTriggeredAt": "2026-08-01T10:00:00Z",
    "suspension": {"dispatching": true, "dispatchingOnClusters": {"clusterNames": ["member2"]}, "scheduling": true},
    "preserveResourcesOnDeletion": true,
    "schedulePriority": {"priority": 7},
    "workloadAffinityGroups": {"affinityGroup": "app=a", "antiAffinityGroup": "app=b"}
  },
  "status": {
    "schedulerObservedGeneration": 4,
    "schedulerObservingAffinityName": "primary",
    "lastScheduledTime": "2026-08-01T10:00:00Z",
    "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
      "lastTransitionTime": "2026-08-01T10:00:00Z", "observedGeneration": 4}],
    "aggregatedStatus": [{"clusterName": "member1", "status": {"readyReplicas": 2}, "applied": true,
      "appliedMessage": "ok", "health": "Healthy"}]
  }
}`

// TestWireFormat decodes a Karmada ResourceBinding strictly (an unknown
// field fails) and checks that encoding it again gives back the same JSON.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	for _, obj := range []any{&ResourceBinding{}, &ClusterResourceBinding{}} {
		dec := json.NewDecoder(bytes.NewReader([]byte(karmadaResourceBinding)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(obj); err != nil {
			t.Fatalf("decoding into %T: %v", obj, err)
		}
		out, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var want, got map[string]any
		if err := json.Unmarshal([]byte(karmadaResourceBinding), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%T does not re-encode to the same JSON:\nwant %v\ngot  %v", obj, want, got)
		}
	}
}
