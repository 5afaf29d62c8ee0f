package plan

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

func selectors(names ...string) []networkingv1alpha1.ClusterSelector {
	var out []networkingv1alpha1.ClusterSelector
	for _, n := range names {
		out = append(out, networkingv1alpha1.ClusterSelector{Name: n})
	}
	return out
}

func TestCrossCluster(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		types []networkingv1alpha1.ExposureType
		want  bool
	}{
		{"CrossCluster", []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster}, true},
		{"LoadBalancer and CrossCluster", []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer, networkingv1alpha1.ExposureTypeCrossCluster}, true},
		{"LoadBalancer only", []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}, false},
		{"no type", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &networkingv1alpha1.MultiClusterService{Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: tc.types}}
			if got := CrossCluster(m); got != tc.want {
				t.Errorf("CrossCluster = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProvidersConsumers(t *testing.T) {
	t.Parallel()
	all := Named{All: true}
	for _, tc := range []struct {
		name                 string
		spec                 networkingv1alpha1.MultiClusterServiceSpec
		providers, consumers Named
	}{
		{name: "none named: all", providers: all, consumers: all},
		{name: "named, sorted, without duplicates",
			spec: networkingv1alpha1.MultiClusterServiceSpec{ProviderClusters: selectors("member2", "member1", "member2"),
				ConsumerClusters: selectors("member3", "member3")},
			providers: Named{Names: []string{"member1", "member2"}}, consumers: Named{Names: []string{"member3"}}},
		{name: "deprecated fields when the new ones are empty",
			spec: networkingv1alpha1.MultiClusterServiceSpec{ServiceProvisionClusters: []string{"member2", "member1"},
				ServiceConsumptionClusters: []string{"member3", "member1", "member3"}},
			providers: Named{Names: []string{"member1", "member2"}}, consumers: Named{Names: []string{"member1", "member3"}}},
		{name: "range.clusterNames when both consumer fields are empty",
			spec:      networkingv1alpha1.MultiClusterServiceSpec{Range: networkingv1alpha1.ExposureRange{ClusterNames: []string{"member4", "member2"}}},
			providers: all, consumers: Named{Names: []string{"member2", "member4"}}},
		{name: "the new fields win over the deprecated ones",
			spec: networkingv1alpha1.MultiClusterServiceSpec{
				ProviderClusters: selectors("member1"), ServiceProvisionClusters: []string{"member2"},
				ConsumerClusters: selectors("member3"), ServiceConsumptionClusters: []string{"member4"},
				Range: networkingv1alpha1.ExposureRange{ClusterNames: []string{"member5"}}},
			providers: Named{Names: []string{"member1"}}, consumers: Named{Names: []string{"member3"}}},
		{name: "serviceConsumptionClusters wins over range.clusterNames",
			spec: networkingv1alpha1.MultiClusterServiceSpec{ServiceConsumptionClusters: []string{"member4"},
				Range: networkingv1alpha1.ExposureRange{ClusterNames: []string{"member5"}}},
			providers: all, consumers: Named{Names: []string{"member4"}}},
		{name: "consumer fields do not make providers",
			spec:      networkingv1alpha1.MultiClusterServiceSpec{ConsumerClusters: selectors("member3")},
			providers: all, consumers: Named{Names: []string{"member3"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &networkingv1alpha1.MultiClusterService{Spec: tc.spec}
			if diff := cmp.Diff(tc.providers, Providers(m)); diff != "" {
				t.Errorf("Providers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.consumers, Consumers(m)); diff != "" {
				t.Errorf("Consumers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamed(t *testing.T) {
	t.Parallel()
	known := []string{"member3", "member1", "member2", "member1"}
	for _, tc := range []struct {
		name    string
		n       Named
		has     map[string]bool
		in      []string
		unknown []string
	}{
		{name: "all", n: Named{All: true}, has: map[string]bool{"member1": true, "member9": true},
			in: []string{"member1", "member2", "member3"}},
		{name: "some", n: Named{Names: []string{"member1", "member3"}}, has: map[string]bool{"member1": true, "member2": false},
			in: []string{"member1", "member3"}},
		{name: "some unknown", n: Named{Names: []string{"member2", "member8", "member9"}}, has: map[string]bool{"member2": true, "member8": true, "member1": false},
			in: []string{"member2"}, unknown: []string{"member8", "member9"}},
		{name: "none known", n: Named{Names: []string{"member9"}}, has: map[string]bool{"member1": false}, unknown: []string{"member9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for c, want := range tc.has {
				if got := tc.n.Has(c); got != want {
					t.Errorf("Has(%s) = %v, want %v", c, got, want)
				}
			}
			if got := tc.n.In(known); !slices.Equal(got, tc.in) {
				t.Errorf("In = %v, want %v", got, tc.in)
			}
			if got := tc.n.Unknown(known); !slices.Equal(got, tc.unknown) {
				t.Errorf("Unknown = %v, want %v", got, tc.unknown)
			}
		})
	}
}

// mcsCollected is a slice collected from cluster for a MultiClusterService.
func mcsCollected(t *testing.T, cluster, name string, ips ...string) Collected {
	t.Helper()
	w, err := CollectedWork(cluster, memberSlice(t, name, ips...), networkingv1alpha1.ManagedByMultiClusterService)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := CollectedFrom(w, networkingv1alpha1.ManagedByMultiClusterService)
	if !ok {
		t.Fatal("not collected")
	}
	return c
}

// A consumer gets the other providers' slices, each in a Work of its
// execution namespace named after "<provider>-<slice>", labelled with the
// Service itself (no derived Service) and annotated with its provider.
func TestDispatchWorks(t *testing.T) {
	t.Parallel()
	from := []Collected{
		mcsCollected(t, "member2", "web-zzzzz", "10.0.2.1"),
		mcsCollected(t, "member3", "web-own", "10.0.3.1"),
		mcsCollected(t, "member1", "web-bbbbb", "10.0.1.3"),
		mcsCollected(t, "member1", "web-aaaaa", "10.0.1.1", "10.0.1.2"),
	}
	ws, err := DispatchWorks("member3", "ns", "web", from)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ provider, name string }{{"member1", "member1-web-aaaaa"}, {"member1", "member1-web-bbbbb"}, {"member2", "member2-web-zzzzz"}}
	if len(ws) != len(want) {
		t.Fatalf("%d Works %v, want %d: the consumer's own slice is not dispatched to it", len(ws), workNames(ws), len(want))
	}
	for i, want := range want {
		w := ws[i]
		if w.Namespace != "karmada-es-member3" || w.Name != names.WorkName("EndpointSlice", want.name, "ns") {
			t.Errorf("Work %d: %s/%s, want karmada-es-member3/%s", i, w.Namespace, w.Name, names.WorkName("EndpointSlice", want.name, "ns"))
		}
		wantLabels := map[string]string{"endpointslice.karmada.io/namespace": "ns", "endpointslice.karmada.io/name": "web",
			"endpointslice.karmada.io/managed-by": "MultiClusterService"}
		if diff := cmp.Diff(wantLabels, w.Labels); diff != "" {
			t.Errorf("Work %d labels (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(map[string]string{"endpointslice.karmada.io/provision-cluster": want.provider}, w.Annotations); diff != "" {
			t.Errorf("Work %d annotations (-want +got):\n%s", i, diff)
		}
		if !slices.Equal(w.Finalizers, []string{workv1alpha1.ExecutionControllerFinalizer}) || w.Spec.SuspendDispatching != nil {
			t.Errorf("Work %d finalizers %v suspendDispatching %v: a dispatched Work is applied", i, w.Finalizers, w.Spec.SuspendDispatching)
		}
		m := manifest(t, w)
		if m.GetAPIVersion() != "discovery.k8s.io/v1" || m.GetKind() != "EndpointSlice" || m.GetName() != want.name || m.GetNamespace() != "ns" {
			t.Errorf("Work %d manifest %s %s %s/%s", i, m.GetAPIVersion(), m.GetKind(), m.GetNamespace(), m.GetName())
		}
		if m.GetLabels()["kubernetes.io/service-name"] != "web" ||
			m.GetLabels()["endpointslice.kubernetes.io/managed-by"] != "endpointslice-dispatch-controller.karmada.io" ||
			m.GetLabels()["karmada.io/managed"] != "true" {
			t.Errorf("Work %d manifest labels %v", i, m.GetLabels())
		}
		if m.GetAnnotations()["endpointslice.karmada.io/provision-cluster"] != want.provider ||
			m.GetAnnotations()[workv1alpha2.WorkNameAnnotation] != w.Name || m.GetAnnotations()[workv1alpha2.WorkNamespaceAnnotation] != w.Namespace {
			t.Errorf("Work %d manifest annotations %v", i, m.GetAnnotations())
		}
		if _, ok := m.GetAnnotations()["endpoints.kubernetes.io/last-change-trigger-time"]; ok {
			t.Errorf("Work %d manifest keeps the member's annotations", i)
		}
		src := from[slices.IndexFunc(from, func(c Collected) bool { return c.Cluster+"-"+c.Slice.GetName() == want.name })].Slice
		for _, k := range []string{"addressType", "endpoints", "ports"} {
			if !cmp.Equal(src.Object[k], m.Object[k]) {
				t.Errorf("Work %d manifest %s %v, want %v", i, k, m.Object[k], src.Object[k])
			}
		}
		// A dispatched Work is not a collected one.
		if IsCollected(w, "") || IsCollected(w, networkingv1alpha1.ManagedByMultiClusterService) {
			t.Errorf("Work %d reads as collected", i)
		}
		if _, ok := CollectedFrom(w, networkingv1alpha1.ManagedByMultiClusterService); ok {
			t.Errorf("Work %d: CollectedFrom reads it", i)
		}
	}
	// The input is not reordered.
	if from[0].Cluster != "member2" || from[3].Slice.GetName() != "web-aaaaa" {
		t.Errorf("DispatchWorks reordered its input: %s %s", from[0].Cluster, from[3].Slice.GetName())
	}
	if ws, err := DispatchWorks("member1", "ns", "web", from[2:]); err != nil || len(ws) != 0 {
		t.Errorf("a consumer providing all the slices gets %d Works, %v", len(ws), err)
	}
}

// A collected Work carries no provision-cluster annotation; a Work made
// for a consumer does.
func TestIsCollected(t *testing.T) {
	t.Parallel()
	both, err := CollectedWork("member1", memberSlice(t, "web-a", "10.0.0.1"), networkingv1alpha1.ManagedByServiceExport, networkingv1alpha1.ManagedByMultiClusterService)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := CollectedWork("member1", memberSlice(t, "web-a", "10.0.0.1"), networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := DispatchWorks("member1", "ns", "web", []Collected{mcsCollected(t, "member2", "web-b", "10.0.2.1")})
	if err != nil || len(ws) != 1 {
		t.Fatalf("DispatchWorks: %d, %v", len(ws), err)
	}
	dispatched := ws[0]
	imported, err := ImportWorks("member1", ServiceImport{Namespace: "ns", Name: "web", Type: "Headless"}, []Collected{mcsCollected(t, "member2", "web-b")})
	if err != nil || len(imported) != 1 {
		t.Fatalf("ImportWorks: %d, %v", len(imported), err)
	}
	// A collected Work someone annotated with a provider is no longer
	// read as collected.
	annotated := both.DeepCopy()
	annotated.Annotations = map[string]string{networkingv1alpha1.EndpointSliceProvisionClusterAnnotation: "member2"}
	for _, tc := range []struct {
		name                  string
		w                     *workv1alpha1.Work
		manager               string
		collected, readsSlice bool
	}{
		{"collected for both, any manager", both, "", true, true},
		{"collected for both, as MultiClusterService", both, networkingv1alpha1.ManagedByMultiClusterService, true, true},
		{"collected for both, as ServiceExport", both, networkingv1alpha1.ManagedByServiceExport, true, true},
		{"exported only, as MultiClusterService", exported, networkingv1alpha1.ManagedByMultiClusterService, false, false},
		{"exported only, any manager", exported, "", true, true},
		{"dispatched to a consumer, any manager", dispatched, "", false, false},
		{"dispatched to a consumer, as MultiClusterService", dispatched, networkingv1alpha1.ManagedByMultiClusterService, false, false},
		{"imported by a member, as ServiceImport", imported[0], networkingv1alpha1.ManagedByServiceImport, false, false},
		{"annotated with a provider", annotated, networkingv1alpha1.ManagedByMultiClusterService, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := IsCollected(tc.w, tc.manager); got != tc.collected {
				t.Errorf("IsCollected = %v, want %v", got, tc.collected)
			}
			m := tc.manager
			if m == "" {
				m = networkingv1alpha1.ManagedByServiceExport
			}
			c, ok := CollectedFrom(tc.w, m)
			if ok != tc.readsSlice {
				t.Fatalf("CollectedFrom = %v, want %v", ok, tc.readsSlice)
			}
			if ok && (c.Cluster != "member1" || c.Slice.GetName() != "web-a") {
				t.Errorf("CollectedFrom = %s %s", c.Cluster, c.Slice.GetName())
			}
		})
	}
}

func TestBindService(t *testing.T) {
	t.Parallel()
	m := &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web",
		Labels: map[string]string{networkingv1alpha1.MultiClusterServicePermanentIDLabel: "pid-1"}}}
	clusters := []string{"member3", "member1", "member3", "member2"}
	b := BindService(m, "uid-9", "41", clusters)
	if !slices.Equal(clusters, []string{"member3", "member1", "member3", "member2"}) {
		t.Errorf("BindService changed its input: %v", clusters)
	}
	want := ServiceBinding{
		Labels:      map[string]string{"binding.karmada.io/managed-by": "MultiClusterService", "multiclusterservice.karmada.io/permanent-id": "pid-1"},
		Annotations: map[string]string{"multiclusterservice.karmada.io/name": "web", "multiclusterservice.karmada.io/namespace": "ns"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "web",
				UID: types.UID("uid-9"), ResourceVersion: "41"},
			Placement:          &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2", "member3"}}},
			ConflictResolution: policyv1alpha1.ConflictOverwrite,
			SchedulerName:      "default-scheduler",
		},
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if b := BindService(m, "uid-9", "41", nil); len(b.Spec.Placement.ClusterAffinity.ClusterNames) != 0 {
		t.Errorf("no clusters placed on %v", b.Spec.Placement.ClusterAffinity.ClusterNames)
	}
}

// Reconcile with several owned managers: the managers in owned are the
// caller's, the others' are left as they are.
func TestReconcileOwned(t *testing.T) {
	t.Parallel()
	slice := memberSlice(t, "web-a", "10.0.0.1")
	exportOnly, err := CollectedWork("member1", slice, networkingv1alpha1.ManagedByServiceExport)
	if err != nil {
		t.Fatal(err)
	}
	both, err := CollectedWork("member1", slice, networkingv1alpha1.ManagedByServiceExport, networkingv1alpha1.ManagedByMultiClusterService)
	if err != nil {
		t.Fatal(err)
	}
	storedBoth := stored(t, both)
	const (
		se, mcs, si = networkingv1alpha1.ManagedByServiceExport, networkingv1alpha1.ManagedByMultiClusterService, networkingv1alpha1.ManagedByServiceImport
	)
	for _, tc := range []struct {
		name     string
		owned    []string
		desired  []*workv1alpha1.Work
		existing []*workv1alpha1.Work
		// updated is the managed-by label the update writes ("" none).
		updated string
		// released is the managed-by label the release leaves ("" none).
		released string
		deleted  bool
	}{
		{name: "kept by both, now ServiceExport's only: updated", owned: []string{se, mcs},
			desired: []*workv1alpha1.Work{exportOnly}, existing: []*workv1alpha1.Work{storedBoth}, updated: se},
		{name: "kept by both, still both: no write", owned: []string{se, mcs},
			desired: []*workv1alpha1.Work{both}, existing: []*workv1alpha1.Work{storedBoth}},
		{name: "kept by both, owned=[ServiceExport] desiring it: MultiClusterService kept, no write", owned: []string{se},
			desired: []*workv1alpha1.Work{exportOnly}, existing: []*workv1alpha1.Work{storedBoth}},
		{name: "kept by others, not desired by the owner: left alone", owned: []string{si},
			existing: []*workv1alpha1.Work{storedBoth}},
		{name: "not desired, a manager outside owned keeps it: released", owned: []string{mcs},
			existing: []*workv1alpha1.Work{storedBoth}, released: se},
		{name: "not desired, all its managers owned: deleted", owned: []string{se, mcs},
			existing: []*workv1alpha1.Work{storedBoth}, deleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Reconcile(tc.owned, tc.desired, tc.existing)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Create) != 0 || len(c.Conflicts) != 0 {
				t.Errorf("create %v conflicts %v", workNames(c.Create), workNames(c.Conflicts))
			}
			var upd, rel string
			if len(c.Update) > 1 || len(c.Release) > 1 {
				t.Fatalf("%d updates, %d releases", len(c.Update), len(c.Release))
			}
			if len(c.Update) == 1 {
				upd = c.Update[0].Desired.Labels[networkingv1alpha1.EndpointSliceWorkManagedByLabel]
				if c.Update[0].Desired.Labels[workv1alpha2.WorkPermanentIDLabel] != storedBoth.Labels[workv1alpha2.WorkPermanentIDLabel] {
					t.Errorf("the update loses the permanent id: %v", c.Update[0].Desired.Labels)
				}
			}
			if len(c.Release) == 1 {
				rel = c.Release[0].Managers
			}
			if upd != tc.updated || rel != tc.released {
				t.Errorf("update to %q, release to %q; want %q, %q", upd, rel, tc.updated, tc.released)
			}
			if (len(c.Delete) == 1) != tc.deleted || len(c.Delete) > 1 {
				t.Errorf("delete %v, want deleted %v", workNames(c.Delete), tc.deleted)
			}
		})
	}
}
