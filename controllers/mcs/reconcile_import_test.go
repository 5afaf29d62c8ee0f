package mcs

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/names"
)

func serviceImport(managed bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
		"spec": map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}},
	}}
	u.SetNamespace("ns")
	u.SetName("web")
	u.SetAnnotations(map[string]string{"resourcetemplate.karmada.io/uid": "template-uid"})
	if managed {
		u.SetLabels(map[string]string{"karmada.io/managed": "true"})
	}
	return u
}

type event struct{ uid, kind, reason, message string }

func TestDispatchReconcile(t *testing.T) {
	t.Parallel()
	c1, err := plan.CollectedWork("member1", memberSlice("web-a", "web", "10.0.1.1"), networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := plan.CollectedWork("member2", memberSlice("web-b", "web", "10.0.2.1"), networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	c2moved, err := plan.CollectedWork("member2", memberSlice("web-b", "web", "10.0.2.9"), networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	collected := []*workv1alpha1.Work{asStored(t, c1), asStored(t, c2)}
	si, err := plan.ParseServiceImport(serviceImport(true))
	if err != nil {
		t.Fatal(err)
	}
	read := func(ws ...*workv1alpha1.Work) []plan.Collected {
		var out []plan.Collected
		for _, w := range ws {
			c, _ := plan.CollectedFrom(w, networkingv1alpha1.ManagedByServiceExport)
			out = append(out, c)
		}
		return out
	}
	imported, err := plan.ImportWorks("member3", si, read(c1, c2))
	if err != nil {
		t.Fatal(err)
	}
	var importedStored []*workv1alpha1.Work
	for _, w := range imported {
		importedStored = append(importedStored, asStored(t, w))
	}
	es := "karmada-es-member3/"
	derived := names.WorkName("Service", "derived-web", "ns")
	slice1 := names.WorkName("EndpointSlice", "imported-member1-web-a", "ns")
	slice2 := names.WorkName("EndpointSlice", "imported-member2-web-b", "ns")
	ready := testCluster("member3", true, "serviceimports")
	providers := []*clusterv1alpha1.Cluster{testCluster("member1", true, "serviceimports"), testCluster("member2", true, "serviceimports")}
	leaving := testCluster("member3", true, "serviceimports")
	leaving.DeletionTimestamp = &metav1.Time{}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	young := serviceImport(true)
	young.SetCreationTimestamp(metav1.NewTime(now.Add(-time.Second)))
	withClusters := func(cs ...string) *unstructured.Unstructured {
		u := serviceImport(true)
		var list []any
		for _, c := range cs {
			list = append(list, map[string]any{"cluster": c})
		}
		u.Object["status"] = map[string]any{"clusters": list}
		return u
	}

	for _, tc := range []struct {
		name    string
		member3 *clusterv1alpha1.Cluster
		si      *unstructured.Unstructured
		state   informerState
		stored  []*workv1alpha1.Work
		fail    bool
		want    []string
		events  []string
		retry   bool
		// status is the status.clusters written, joined ("-": none written,
		// "<empty>": an empty list, "": not checked).
		status string
	}{
		{name: "imported: derived Service and every collected slice", member3: ready, si: serviceImport(true), state: listed, stored: collected,
			want: []string{"create " + es + derived, "create " + es + slice1, "create " + es + slice2}, events: []string{"Normal SyncDerivedServiceSucceed"}},
		{name: "in place: no write, no event", member3: ready, si: serviceImport(true), state: listed, stored: append(slices.Clone(collected), importedStored...)},
		{name: "a provider's endpoints moved: that slice only", member3: ready, si: serviceImport(true), state: listed,
			stored: append([]*workv1alpha1.Work{asStored(t, c1), asStored(t, c2moved)}, importedStored...), want: []string{"patch " + es + slice2}},
		{name: "a provider withdrawn", member3: ready, si: serviceImport(true), state: listed,
			stored: append([]*workv1alpha1.Work{asStored(t, c1)}, importedStored...), want: []string{"delete " + es + slice2}},
		{name: "import gone: everything goes", member3: ready, state: listed, stored: append(slices.Clone(collected), importedStored...),
			want: []string{"delete " + es + derived, "delete " + es + slice1, "delete " + es + slice2}},
		{name: "a ServiceImport Flotilla did not apply: not served", member3: ready, si: serviceImport(false), state: listed, stored: collected},
		{name: "imports not readable, member not Ready: kept", member3: testCluster("member3", false, "serviceimports"), stored: append(slices.Clone(collected), importedStored...)},
		{name: "imports not listed yet: wait", member3: ready, state: listing, stored: append(slices.Clone(collected), importedStored...), retry: true},
		{name: "Ready, informer starting: wait", member3: ready, stored: collected, retry: true},
		{name: "serves no ServiceImports: nothing imported", member3: testCluster("member3", true), stored: append(slices.Clone(collected), importedStored...),
			want: []string{"delete " + es + derived, "delete " + es + slice1, "delete " + es + slice2}},
		{name: "member leaving: its namespace takes the Works", member3: leaving, si: serviceImport(true), state: listed, stored: collected},
		{name: "write fails: warning", member3: ready, si: serviceImport(true), state: listed, stored: collected, fail: true, events: []string{"Warning SyncDerivedServiceFailed"}},
		{name: "exporters in the status", member3: ready, si: withClusters("member1"), state: listed, stored: append(slices.Clone(collected), importedStored...),
			status: "member1,member2"},
		{name: "exporters as they are: no status write", member3: ready, si: withClusters("member2", "member1"), state: listed,
			stored: append(slices.Clone(collected), importedStored...), status: "-"},
		{name: "no exporter yet, import just made: wait, no warning", member3: ready, si: young, state: listed,
			want: []string{"create " + es + derived}, events: []string{"Normal SyncDerivedServiceSucceed"}, retry: true, status: "-"},
		{name: "no exporter after the grace: empty status, warning", member3: ready, si: withClusters("member1"), state: listed,
			stored: []*workv1alpha1.Work{importedStored[0]}, status: "<empty>", events: []string{"Warning ServiceNotExported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(tc.stored...)
			if tc.fail {
				rec.failAll = errBoom
			}
			var mu sync.Mutex
			var events []event
			var statuses []string
			r := dispatchReconciler{
				clusters: func() ([]*clusterv1alpha1.Cluster, error) { return append(slices.Clone(providers), tc.member3), nil },
				serviceImport: func(cluster, namespace, name string) (*unstructured.Unstructured, informerState) {
					if namespace != "ns" || name != "web" {
						t.Errorf("serviceImport(%s, %s, %s)", cluster, namespace, name)
					}
					if cluster != "member3" {
						return nil, listed
					}
					return tc.si, tc.state
				},
				works: rec.byService, work: rec.byName, write: rec.writer(),
				event: func(ref *corev1.ObjectReference, eventType, reason, message string) {
					mu.Lock()
					defer mu.Unlock()
					events = append(events, event{string(ref.UID), ref.Kind, eventType + " " + reason, message})
				},
				importStatus: func(_ context.Context, cluster string, _ *unstructured.Unstructured, clusters []string) error {
					if cluster != "member3" {
						t.Errorf("status written in %s", cluster)
					}
					joined := strings.Join(clusters, ",")
					if joined == "" {
						joined = "<empty>"
					}
					statuses = append(statuses, joined)
					return nil
				},
				now: func() time.Time { return now },
			}
			retry, err := r.reconcile(context.Background(), "ns", "web")
			if (err != nil) != tc.fail {
				t.Fatalf("reconcile: %v", err)
			}
			if (retry > 0) != tc.retry {
				t.Errorf("retry %v, want %v", retry, tc.retry)
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := rec.sortedCalls(); !slices.Equal(got, want) {
				t.Errorf("writes %v, want %v", got, want)
			}
			var got []string
			for _, e := range events {
				got = append(got, e.reason)
				if e.uid != "template-uid" || e.kind != "ServiceImport" || !strings.Contains(e.message, "member3") {
					t.Errorf("event %+v: not on the ServiceImport template, or not naming the member", e)
				}
			}
			if !slices.Equal(got, tc.events) {
				t.Errorf("events %v, want %v", got, tc.events)
			}
			switch {
			case tc.status == "-" && len(statuses) > 0:
				t.Errorf("status written %q, want none", statuses)
			case tc.status != "-" && tc.status != "":
				if len(statuses) != 1 || statuses[0] != tc.status {
					t.Errorf("status written %q, want [%q]", statuses, tc.status)
				}
			}
		})
	}
}
