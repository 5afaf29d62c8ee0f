package mcs

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
)

func TestCollectReconcile(t *testing.T) {
	t.Parallel()
	web := memberSlice("web-a", "web", "10.0.0.1")
	collectedWeb, err := plan.CollectedWork("member1", web, networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	webB := memberSlice("web-b", "web", "10.0.0.2")
	// The member's EndpointSlice controller copies a propagated Service's
	// labels onto its slices.
	webB.SetLabels(map[string]string{"kubernetes.io/service-name": "web", "karmada.io/managed": "true"})
	collectedB, err := plan.CollectedWork("member1", webB, networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	dispatched := memberSlice("imported-member2-web-x", "web", "10.0.9.9")
	dispatched.SetLabels(map[string]string{"kubernetes.io/service-name": "web", "karmada.io/managed": "true",
		"endpointslice.kubernetes.io/managed-by": "endpointslice-dispatch-controller.karmada.io"})
	other := memberSlice("db-a", "db", "10.0.0.3")
	sharedB := asStored(t, collectedB)
	sharedB.Labels["endpointslice.karmada.io/managed-by"] = "EndpointSliceCollect.ServiceExport"
	moved := web.DeepCopy()
	moved.Object["endpoints"] = []any{map[string]any{"addresses": []any{"10.0.0.7"}}}

	bothWeb, err := plan.CollectedWork("member1", web, networkingv1alpha1.ManagedByServiceExport, networkingv1alpha1.ManagedByMultiClusterService)
	if err != nil {
		t.Fatal(err)
	}
	// A Work of member2's endpoints made for member1, a consumer.
	consumed, err := plan.DispatchWorks("member1", "ns", "web", []plan.Collected{{Cluster: "member2", Slice: memberSlice("web-z", "web", "10.0.2.2")}})
	if err != nil || len(consumed) != 1 {
		t.Fatalf("DispatchWorks: %v, %v", consumed, err)
	}

	ready := testCluster("member1", true, "serviceexports")
	es := "karmada-es-member1/"
	for _, tc := range []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		exported bool
		known    bool
		provided bool
		slices   []*unstructured.Unstructured
		unsynced bool
		stored   []*workv1alpha1.Work
		want     []string
		retry    bool
	}{
		{name: "exported: its slices collected, others' and Flotilla's not", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{web, webB, dispatched, other},
			want:   []string{"create " + es + collectedWeb.Name, "create " + es + collectedB.Name}},
		{name: "collected as they are: no write", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}},
		{name: "endpoints moved", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{moved}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"patch " + es + collectedWeb.Name}},
		{name: "a slice gone", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb), asStored(t, collectedB)},
			want: []string{"delete " + es + collectedB.Name}},
		{name: "export gone", cluster: ready, known: true, slices: []*unstructured.Unstructured{web},
			stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name}},
		{name: "export gone, a Work another controller keeps too is released", cluster: ready, known: true,
			stored: []*workv1alpha1.Work{sharedB}, want: []string{"patch " + es + collectedB.Name}},
		{name: "member not Ready: withdrawn", cluster: testCluster("member1", false, "serviceexports"), exported: true, known: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name}},
		{name: "member gone: withdrawn", stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name}},
		{name: "exports not listed yet: wait", cluster: ready, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, retry: true},
		{name: "serves no ServiceExports: nothing exported", cluster: testCluster("member1", true),
			stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name}},
		{name: "provided to a MultiClusterService: collected", cluster: ready, known: true, provided: true,
			slices: []*unstructured.Unstructured{web}, want: []string{"create " + es + collectedWeb.Name}},
		{name: "provided, member serves no ServiceExports: collected", cluster: testCluster("member1", true), provided: true,
			slices: []*unstructured.Unstructured{web}, want: []string{"create " + es + collectedWeb.Name}},
		{name: "exported and provided: one Work, both managers", cluster: ready, exported: true, known: true, provided: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, bothWeb)}},
		{name: "export gone, still provided: the manager goes, the Work stays", cluster: ready, known: true, provided: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, bothWeb)}, want: []string{"patch " + es + collectedWeb.Name}},
		{name: "a consumer's dispatched Works are not collected ones", cluster: ready, known: true,
			stored: []*workv1alpha1.Work{asStored(t, consumed[0])}},
		{name: "slices not listed yet: wait", cluster: ready, exported: true, known: true, unsynced: true,
			stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, retry: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(tc.stored...)
			r := collectReconciler{
				cluster:  func(string) (*clusterv1alpha1.Cluster, error) { return tc.cluster, nil },
				exported: func(string, string, string) (bool, bool) { return tc.exported, tc.known },
				provided: func(string, string, string) bool { return tc.provided },
				slices: func(cluster, namespace string) ([]*unstructured.Unstructured, bool) {
					if cluster != "member1" || namespace != "ns" {
						t.Errorf("slices(%s, %s)", cluster, namespace)
					}
					return tc.slices, !tc.unsynced
				},
				works: rec.byService, work: rec.byName, write: rec.writer(),
			}
			retry, err := r.reconcile(context.Background(), "member1", "ns", "web")
			if err != nil {
				t.Fatal(err)
			}
			if (retry > 0) != tc.retry || (tc.retry && retry > 5*time.Second) {
				t.Errorf("retry %v, want %v", retry, tc.retry)
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := rec.sortedCalls(); !slices.Equal(got, want) {
				t.Errorf("writes %v, want %v", got, want)
			}
		})
	}
}
