package mcs

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// The host's copies of web-a and web-b, and what is written of them.
	hostA, hostB := hostCopy(t, "member1", "web-a", "web", "10.0.0.1"), hostCopy(t, "member1", "web-b", "web", "10.0.0.2")
	host := func(verb string, s *discoveryv1.EndpointSlice) string { return verb + " ns/" + s.Name }
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
		// onHost are the host's copies stored, host the writes of them.
		onHost []*discoveryv1.EndpointSlice
		host   []string
	}{
		{name: "exported: its slices collected, others' and Flotilla's not", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{web, webB, dispatched, other},
			want:   []string{"create " + es + collectedWeb.Name, "create " + es + collectedB.Name},
			host:   []string{host("create", hostA), host("create", hostB)}},
		{name: "collected as they are: no write", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)},
			onHost: []*discoveryv1.EndpointSlice{hostA}},
		{name: "endpoints moved", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{moved}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"patch " + es + collectedWeb.Name},
			onHost: []*discoveryv1.EndpointSlice{hostA}, host: []string{host("patch", hostA)}},
		{name: "a slice gone", cluster: ready, exported: true, known: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb), asStored(t, collectedB)},
			want:   []string{"delete " + es + collectedB.Name},
			onHost: []*discoveryv1.EndpointSlice{hostA, hostB}, host: []string{host("delete", hostB)}},
		{name: "export gone", cluster: ready, known: true, slices: []*unstructured.Unstructured{web},
			stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name},
			onHost: []*discoveryv1.EndpointSlice{hostA}, host: []string{host("delete", hostA)}},
		{name: "export gone, a Work another controller keeps too is released", cluster: ready, known: true,
			stored: []*workv1alpha1.Work{sharedB}, want: []string{"patch " + es + collectedB.Name}},
		{name: "member not Ready: withdrawn", cluster: testCluster("member1", false, "serviceexports"), exported: true, known: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name},
			onHost: []*discoveryv1.EndpointSlice{hostA}, host: []string{host("delete", hostA)}},
		{name: "member gone: withdrawn", stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name},
			onHost: []*discoveryv1.EndpointSlice{hostA}, host: []string{host("delete", hostA)}},
		{name: "member gone, only copies left on the host: deleted", onHost: []*discoveryv1.EndpointSlice{hostA, hostB},
			host: []string{host("delete", hostA), host("delete", hostB)}},
		{name: "exports not listed yet: wait", cluster: ready, stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, retry: true,
			onHost: []*discoveryv1.EndpointSlice{hostA}},
		{name: "serves no ServiceExports: nothing exported", cluster: testCluster("member1", true),
			stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, want: []string{"delete " + es + collectedWeb.Name}},
		{name: "provided to a MultiClusterService: collected, no copy on the host", cluster: ready, known: true, provided: true,
			slices: []*unstructured.Unstructured{web}, want: []string{"create " + es + collectedWeb.Name}},
		{name: "provided, member serves no ServiceExports: collected", cluster: testCluster("member1", true), provided: true,
			slices: []*unstructured.Unstructured{web}, want: []string{"create " + es + collectedWeb.Name}},
		{name: "exported and provided: one Work, both managers", cluster: ready, exported: true, known: true, provided: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, bothWeb)}, onHost: []*discoveryv1.EndpointSlice{hostA}},
		{name: "export gone, still provided: the manager goes, the Work stays, the copy goes", cluster: ready, known: true, provided: true,
			slices: []*unstructured.Unstructured{web}, stored: []*workv1alpha1.Work{asStored(t, bothWeb)}, want: []string{"patch " + es + collectedWeb.Name},
			onHost: []*discoveryv1.EndpointSlice{hostA}, host: []string{host("delete", hostA)}},
		{name: "a consumer's dispatched Works are not collected ones", cluster: ready, known: true,
			stored: []*workv1alpha1.Work{asStored(t, consumed[0])}},
		{name: "slices not listed yet: wait", cluster: ready, exported: true, known: true, unsynced: true,
			stored: []*workv1alpha1.Work{asStored(t, collectedWeb)}, retry: true, onHost: []*discoveryv1.EndpointSlice{hostA}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(tc.stored...)
			h := &hostRecorder{stored: tc.onHost}
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
				works: rec.byService, work: rec.byName, write: rec.writer(), host: h.reconciler(t),
				// No ServiceExport object: the conditions are another test's.
				serviceExport: func(string, string, string) *unstructured.Unstructured { return nil },
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
			wantHost := slices.Clone(tc.host)
			slices.Sort(wantHost)
			if got := h.sortedCalls(); !slices.Equal(got, wantHost) {
				t.Errorf("host writes %v, want %v", got, wantHost)
			}
		})
	}
}

func TestCollectReportsConditions(t *testing.T) {
	t.Parallel()
	se := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": map[string]any{"karmada.io/managed": "true"}}}}
	svc := func(port int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "web", "namespace": "ns"},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": port, "protocol": "TCP"}}}}}
	}
	withStatus := func(conds ...map[string]any) *unstructured.Unstructured {
		u := se.DeepCopy()
		var cs []any
		for _, c := range conds {
			cs = append(cs, c)
		}
		u.Object["status"] = map[string]any{"conditions": cs}
		return u
	}
	good := []map[string]any{
		{"type": "Valid", "status": "True", "reason": "Exported", "message": "Service is exported", "lastTransitionTime": "2026-01-01T00:00:00Z"},
		{"type": "Conflict", "status": "False", "reason": "NoConflicts", "message": "The ports agree with the other exporting clusters",
			"lastTransitionTime": "2026-01-01T00:00:00Z"},
	}
	foreign := se.DeepCopy()
	foreign.SetLabels(nil)
	for _, tc := range []struct {
		name     string
		se       *unstructured.Unstructured
		services map[string]*unstructured.Unstructured // by cluster
		unsynced bool
		want     map[string]string // condition type -> reason written; nil: no write
		events   []string
		retry    bool
	}{
		{name: "no Service: Valid False, a warning", se: se, want: map[string]string{"Valid": "NoService"},
			events: []string{"Warning NoService"}},
		{name: "Service, no other exporter: valid, no conflict", se: se, services: map[string]*unstructured.Unstructured{"member1": svc(80)},
			want: map[string]string{"Valid": "Exported", "Conflict": "NoConflicts"}},
		{name: "another exporter's port of the same name differs: conflict", se: se,
			services: map[string]*unstructured.Unstructured{"member1": svc(80), "member2": svc(8080)},
			want:     map[string]string{"Valid": "Exported", "Conflict": "PortConflict"}, events: []string{"Warning PortConflict"}},
		{name: "the same ports: no conflict", se: se, services: map[string]*unstructured.Unstructured{"member1": svc(80), "member2": svc(80)},
			want: map[string]string{"Valid": "Exported", "Conflict": "NoConflicts"}},
		{name: "conditions as they are: no write, no event", se: withStatus(good...),
			services: map[string]*unstructured.Unstructured{"member1": svc(80)}},
		{name: "conflict resolved after one: a normal event", se: withStatus(good[0], map[string]any{"type": "Conflict", "status": "True",
			"reason": "PortConflict", "message": "x", "lastTransitionTime": "2026-01-01T00:00:00Z"}),
			services: map[string]*unstructured.Unstructured{"member1": svc(80)},
			want:     map[string]string{"Valid": "Exported", "Conflict": "NoConflicts"}, events: []string{"Normal NoConflicts"}},
		{name: "Services not listed yet: wait", se: se, unsynced: true, retry: true},
		{name: "a ServiceExport Flotilla did not apply: left alone", se: foreign},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var written []metav1.Condition
			var events []string
			r := collectReconciler{
				serviceExport: func(cluster, _, _ string) *unstructured.Unstructured { return tc.se },
				service: func(cluster, _, _ string) (*unstructured.Unstructured, bool) {
					return tc.services[cluster], !tc.unsynced
				},
				exporters: func(string, string) []string { return []string{"member1", "member2"} },
				exportStatus: func(_ context.Context, cluster string, _ *unstructured.Unstructured, conds []metav1.Condition) error {
					if cluster != "member1" {
						t.Errorf("status written in %s", cluster)
					}
					written = conds
					return nil
				},
				event: func(ref *corev1.ObjectReference, eventType, reason, _ string) {
					if ref.Kind != "ServiceExport" || ref.Name != "web" {
						t.Errorf("event on %+v", ref)
					}
					events = append(events, eventType+" "+reason)
				},
			}
			retry, err := r.report(context.Background(), "member1", "ns", "web")
			if err != nil {
				t.Fatal(err)
			}
			if (retry > 0) != tc.retry {
				t.Errorf("retry %v, want %v", retry, tc.retry)
			}
			if tc.want == nil && written != nil {
				t.Errorf("wrote %+v, want no write", written)
			}
			for typ, reason := range tc.want {
				c := meta.FindStatusCondition(written, typ)
				if c == nil || c.Reason != reason {
					t.Errorf("condition %s = %+v, want reason %s (written %+v)", typ, c, reason, written)
				}
			}
			if !slices.Equal(events, tc.events) {
				t.Errorf("events %v, want %v", events, tc.events)
			}
		})
	}
}
