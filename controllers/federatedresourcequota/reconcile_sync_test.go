package federatedresourcequota

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// resources builds a ResourceList from "name=quantity" pairs.
func resources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

// newQuota is quota ns/q with overall cpu 10, memory 10Gi and the given
// static assignments ("cluster", ResourceList, ...).
func newQuota(assigned ...any) *policyv1alpha1.FederatedResourceQuota {
	q := &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q", UID: "quota-uid", ResourceVersion: "10", Generation: 1},
		Spec:       policyv1alpha1.FederatedResourceQuotaSpec{Overall: resources("cpu=10", "memory=10Gi")},
	}
	for i := 0; i+1 < len(assigned); i += 2 {
		q.Spec.StaticAssignments = append(q.Spec.StaticAssignments, policyv1alpha1.StaticClusterAssignment{
			ClusterName: assigned[i].(string), Hard: assigned[i+1].(corev1.ResourceList)})
	}
	return q
}

// storedWork is the Work of q for cluster as flotilla-apiserver stores it.
func storedWork(t *testing.T, q *policyv1alpha1.FederatedResourceQuota, cluster string, hard corev1.ResourceList) *workv1alpha1.Work {
	t.Helper()
	w, err := desiredWork(q, cluster, hard)
	if err != nil {
		t.Fatal(err)
	}
	if err := mutation.MutateWork(w, true); err != nil {
		t.Fatal(err)
	}
	w.UID = types.UID("uid-" + cluster)
	w.ResourceVersion = "5"
	return w
}

func TestAssignments(t *testing.T) {
	t.Parallel()
	q := newQuota("member1", resources("cpu=4"), "member2", resources("cpu=2"), "member1", resources("cpu=1"))
	got := assignments(q.Spec)
	m1, m2 := got["member1"], got["member2"]
	if len(got) != 2 || m1.Cpu().String() != "4" || m2.Cpu().String() != "2" {
		t.Errorf("assignments = %v, want member1 cpu 4 (first wins) and member2 cpu 2", got)
	}
	if got := assignments(policyv1alpha1.FederatedResourceQuotaSpec{}); len(got) != 0 {
		t.Errorf("assignments of none = %v", got)
	}
}

func TestStaleWorks(t *testing.T) {
	t.Parallel()
	work := func(ns string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "q-x"}}
	}
	tests := []struct {
		name     string
		existing []*workv1alpha1.Work
		assigned []string
		want     []string
	}{
		{name: "all assigned", existing: []*workv1alpha1.Work{work("karmada-es-member1"), work("karmada-es-member2")},
			assigned: []string{"member1", "member2"}},
		{name: "one unassigned", existing: []*workv1alpha1.Work{work("karmada-es-member1"), work("karmada-es-member2")},
			assigned: []string{"member1"}, want: []string{"karmada-es-member2"}},
		{name: "no assignments left", existing: []*workv1alpha1.Work{work("karmada-es-member1")},
			want: []string{"karmada-es-member1"}},
		{name: "outside any execution namespace", existing: []*workv1alpha1.Work{work("member1")},
			assigned: []string{"member1"}, want: []string{"member1"}},
		{name: "assigned without a Work", assigned: []string{"member3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assigned := map[string]corev1.ResourceList{}
			for _, c := range tc.assigned {
				assigned[c] = resources("cpu=1")
			}
			var got []string
			for _, w := range staleWorks(tc.existing, assigned) {
				got = append(got, w.Namespace)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stale Works (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredWork(t *testing.T) {
	t.Parallel()
	q := newQuota()
	w, err := desiredWork(q, "member1", resources("cpu=4", "count/configmaps=5"))
	if err != nil {
		t.Fatal(err)
	}
	// The name Karmada gives the Work of a ResourceQuota ns/q.
	if w.Namespace != "karmada-es-member1" || w.Name != names.WorkName("ResourceQuota", "q", "ns") {
		t.Errorf("Work %s/%s", w.Namespace, w.Name)
	}
	wantLabels := map[string]string{"federatedresourcequota.karmada.io/namespace": "ns", "federatedresourcequota.karmada.io/name": "q"}
	if diff := cmp.Diff(wantLabels, w.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !slices.Equal(w.Finalizers, []string{"karmada.io/execution-controller"}) {
		t.Errorf("finalizers %v", w.Finalizers)
	}
	var got map[string]any
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{
			"name": "q", "namespace": "ns",
			"labels":      map[string]any{"karmada.io/managed": "true"},
			"annotations": map[string]any{"work.karmada.io/name": w.Name, "work.karmada.io/namespace": "karmada-es-member1"},
		},
		"spec": map[string]any{"hard": map[string]any{"cpu": "4", "count/configmaps": "5"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	// The same quota in another namespace has another Work name.
	other := newQuota()
	other.Namespace = "other"
	if w2, _ := desiredWork(other, "member1", nil); w2.Name == w.Name {
		t.Errorf("Work name %s does not depend on the namespace", w.Name)
	}
}

// syncFixture is a SyncController over listers holding the given objects
// and a fake client holding the Works.
type syncFixture struct {
	c        *SyncController
	client   *karmadafake.Clientset
	recorder *record.FakeRecorder
}

func newSyncFixture(t *testing.T, quotas []*policyv1alpha1.FederatedResourceQuota, clusters []string, ws []*workv1alpha1.Work) *syncFixture {
	t.Helper()
	qi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, q := range quotas {
		_ = qi.Add(q)
	}
	ci := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range clusters {
		_ = ci.Add(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: c}})
	}
	wi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{worksByQuota: indexByQuota})
	var objs []runtime.Object
	for _, w := range ws {
		_ = wi.Add(w)
		objs = append(objs, w)
	}
	client := karmadafake.NewSimpleClientset(objs...)
	client.ClearActions()
	rec := record.NewFakeRecorder(10)
	return &syncFixture{
		c: &SyncController{quotas: policylisters.NewFederatedResourceQuotaLister(qi), works: wi,
			clusters: clusterlisters.NewClusterLister(ci), client: client, recorder: rec},
		client: client, recorder: rec,
	}
}

// actions describes the client's writes as "verb namespace/name".
func actions(client *karmadafake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		switch a := a.(type) {
		case clienttesting.CreateAction:
			m, _ := a.GetObject().(metav1.Object)
			out = append(out, "create "+a.GetNamespace()+"/"+m.GetName())
		case clienttesting.PatchAction:
			out = append(out, "patch "+a.GetNamespace()+"/"+a.GetName())
		case clienttesting.DeleteAction:
			out = append(out, "delete "+a.GetNamespace()+"/"+a.GetName())
		}
	}
	return out
}

// events drains the recorded events.
func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestSyncReconcile(t *testing.T) {
	t.Parallel()
	cpu4, cpu2 := resources("cpu=4"), resources("cpu=2")
	both := newQuota("member1", cpu4, "member2", cpu2)
	name := storedWork(t, both, "member1", cpu4).Name
	deleting := storedWork(t, both, "member2", cpu2)
	deleting.DeletionTimestamp = &metav1.Time{}
	leaving := newQuota("member1", cpu4, "member3", cpu2)
	tests := []struct {
		name     string
		quota    *policyv1alpha1.FederatedResourceQuota // nil: deleted
		clusters []string
		works    []*workv1alpha1.Work
		failOn   string // verb failing with an error
		want     []string
		// wantEvent is the start of the event recorded; "" for none.
		wantEvent string
		wantErr   bool
	}{
		{name: "new quota", quota: both, clusters: []string{"member1", "member2"},
			want:      []string{"create karmada-es-member1/" + name, "create karmada-es-member2/" + name},
			wantEvent: "Normal SyncWorkSucceed Sync works for FederatedResourceQuota(ns/q) succeed."},
		{name: "up to date", quota: both, clusters: []string{"member1", "member2"},
			works: []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4), storedWork(t, both, "member2", cpu2)}},
		{name: "assignment changed", quota: newQuota("member1", resources("cpu=5"), "member2", cpu2), clusters: []string{"member1", "member2"},
			works:     []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4), storedWork(t, both, "member2", cpu2)},
			want:      []string{"patch karmada-es-member1/" + name},
			wantEvent: "Normal SyncWorkSucceed"},
		{name: "assignment removed", quota: newQuota("member1", cpu4), clusters: []string{"member1", "member2"},
			works:     []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4), storedWork(t, both, "member2", cpu2)},
			want:      []string{"delete karmada-es-member2/" + name},
			wantEvent: "Normal SyncWorkSucceed"},
		{name: "quota deleted", clusters: []string{"member1", "member2"},
			works: []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4), storedWork(t, both, "member2", cpu2)},
			want:  []string{"delete karmada-es-member1/" + name, "delete karmada-es-member2/" + name}},
		{name: "quota deleted, a Work already going", clusters: []string{"member1", "member2"},
			works: []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4), deleting},
			want:  []string{"delete karmada-es-member1/" + name}},
		{name: "Work being deleted is re-created later", quota: both, clusters: []string{"member1", "member2"},
			works: []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4), deleting}},
		{name: "unknown cluster", quota: both, clusters: []string{"member1"},
			want: []string{"create karmada-es-member1/" + name}, wantEvent: "Normal SyncWorkSucceed"},
		{name: "unknown cluster only", quota: leaving, clusters: []string{"member1"},
			works: []*workv1alpha1.Work{storedWork(t, leaving, "member1", cpu4)}},
		{name: "created meanwhile, not in the cache yet", quota: both, clusters: []string{"member1"}, failOn: "create-exists",
			want: []string{"create karmada-es-member1/" + name}},
		{name: "create fails", quota: both, clusters: []string{"member1"}, failOn: "create",
			want: []string{"create karmada-es-member1/" + name}, wantEvent: "Warning SyncWorkFailed", wantErr: true},
		{name: "delete fails", quota: newQuota(), clusters: []string{"member1"}, failOn: "delete",
			works: []*workv1alpha1.Work{storedWork(t, both, "member1", cpu4)},
			want:  []string{"delete karmada-es-member1/" + name}, wantEvent: "Warning SyncWorkFailed", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var quotas []*policyv1alpha1.FederatedResourceQuota
			if tc.quota != nil {
				quotas = append(quotas, tc.quota)
			}
			f := newSyncFixture(t, quotas, tc.clusters, tc.works)
			switch tc.failOn {
			case "":
			case "create-exists":
				f.client.PrependReactor("create", "works", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewAlreadyExists(workv1alpha1.Resource("works"), name)
				})
			default:
				f.client.PrependReactor(tc.failOn, "works", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("boom")
				})
			}
			err := f.c.reconcile(context.Background(), "ns/q")
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, actions(f.client)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			evs := events(f.recorder)
			switch {
			case tc.wantEvent == "" && len(evs) > 0:
				t.Errorf("events %v, want none", evs)
			case tc.wantEvent != "" && (len(evs) != 1 || !strings.HasPrefix(evs[0], tc.wantEvent)):
				t.Errorf("events %v, want one starting with %q", evs, tc.wantEvent)
			}
		})
	}
}

// TestSyncPatch checks what a changed assignment patches: the manifest's
// new hard limits, the stored permanent id kept.
func TestSyncPatch(t *testing.T) {
	t.Parallel()
	old := newQuota("member1", resources("cpu=4"))
	stored := storedWork(t, old, "member1", resources("cpu=4"))
	f := newSyncFixture(t, []*policyv1alpha1.FederatedResourceQuota{newQuota("member1", resources("cpu=6"))}, []string{"member1"},
		[]*workv1alpha1.Work{stored})
	if err := f.c.reconcile(context.Background(), "ns/q"); err != nil {
		t.Fatal(err)
	}
	w, err := f.client.WorkV1alpha1().Works("karmada-es-member1").Get(context.Background(), stored.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Labels["work.karmada.io/permanent-id"] != stored.Labels["work.karmada.io/permanent-id"] {
		t.Errorf("permanent id %q, want %q kept", w.Labels["work.karmada.io/permanent-id"], stored.Labels["work.karmada.io/permanent-id"])
	}
	if raw := string(w.Spec.Workload.Manifests[0].Raw); !strings.Contains(raw, `"hard":{"cpu":"6"}`) {
		t.Errorf("manifest %s, want hard cpu 6", raw)
	}
}
