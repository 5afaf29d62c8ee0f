package propagation

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

var cloneSets = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}

// An OpenKruise CloneSet is understood with no customization or webhook of
// the user's: the shipped third-party interpretation divides its replicas
// 2:1, reports its per-replica requests, aggregates the members' status
// and interprets their health.
func TestThirdPartyCloneSet(t *testing.T) {
	apply(t, openCRD(cloneSets, "CloneSet"))
	if out, err := kubectl(t, "wait", "--for=condition=Established", "crd/clonesets.apps.kruise.io", "--timeout=30s"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ns := namespace(t, "thirdparty")
	apply(t, weighted21Policy("web", ns, "apps.kruise.io/v1alpha1", "CloneSet"))
	members := servedIn(t, cloneSets, ns, "member1", "member2")
	apply(t, fmt.Sprintf(`apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: %s}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 150m}}}]
`, ns))
	binding := func(ctx context.Context) (*workv1alpha2.ResourceBinding, error) {
		return karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-cloneset", metav1.GetOptions{})
	}
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		got := map[string]int64{}
		for m, c := range members {
			if o, err := c.Get(ctx, "web", metav1.GetOptions{}); err == nil {
				got[m], _, _ = unstructured.NestedInt64(o.Object, "spec", "replicas")
			}
		}
		if got["member1"] != 2 || got["member2"] != 1 {
			rb, _ := binding(ctx)
			return fmt.Sprintf("member replicas %v, want member1 2 and member2 1; binding %+v", got, rb)
		}
		return ""
	})
	rb, err := binding(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rb.Spec.Replicas != 3 || rb.Spec.ReplicaRequirements == nil || rb.Spec.ReplicaRequirements.ResourceRequest.Cpu().MilliValue() != 150 {
		t.Errorf("binding replicas %d requirements %+v, want 3 replicas of 150m cpu", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}

	// No Kruise controller runs in the members: the test writes the status
	// it would.
	for m, n := range map[string]int64{"member1": 2, "member2": 1} {
		o, err := members[m].Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`{"status":{"observedGeneration":%d,"replicas":%d,"readyReplicas":%d,"availableReplicas":%d,"updatedReplicas":%d,"updateRevision":"web-1"}}`, o.GetGeneration(), n, n, n, n)
		if _, err := members[m].Patch(t.Context(), "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		o, err := templates(t, cloneSets, ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		ready, _, _ := unstructured.NestedInt64(o.Object, "status", "readyReplicas")
		revision, _, _ := unstructured.NestedString(o.Object, "status", "updateRevision")
		if ready != 3 || revision != "web-1" {
			return fmt.Sprintf("control-plane CloneSet status %v, want readyReplicas 3 and updateRevision web-1", o.Object["status"])
		}
		return ""
	})
	eventually(t, 30*time.Second, func(ctx context.Context) string { return bothHealthy(ctx, t, ns, "web-cloneset") })
}
