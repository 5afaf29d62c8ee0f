package federatedresourcequota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// reflectedWork is the Work of quota ns/q in cluster as the execution
// controller leaves it: Applied, with the member ResourceQuota's status
// (raw JSON; "" for none).
func reflectedWork(cluster string, applied bool, status string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + cluster, Name: "q-work",
		Labels: map[string]string{"federatedresourcequota.karmada.io/namespace": "ns", "federatedresourcequota.karmada.io/name": "q"}}}
	cond := metav1.ConditionFalse
	if applied {
		cond = metav1.ConditionTrue
	}
	w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: cond}}
	ms := workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ResourceQuota",
		Resource: "resourcequotas", Namespace: "ns", Name: "q"}}
	if status != "" {
		ms.Status = &runtime.RawExtension{Raw: []byte(status)}
	}
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{ms}
	return w
}

func quotaStatus(hard, used string) string {
	return fmt.Sprintf(`{"hard":{%s},"used":{%s}}`, hard, used)
}

func clusterStatus(cluster string, hard, used corev1.ResourceList) policyv1alpha1.ClusterQuotaStatus {
	return policyv1alpha1.ClusterQuotaStatus{ClusterName: cluster, ResourceQuotaStatus: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	deleting := reflectedWork("member2", true, quotaStatus(`"cpu":"2"`, `"cpu":"1"`))
	deleting.DeletionTimestamp = &metav1.Time{}
	otherObject := reflectedWork("member2", true, quotaStatus(`"cpu":"2"`, `"cpu":"1"`))
	otherObject.Status.ManifestStatuses[0].Identifier.Name = "other"
	tests := []struct {
		name     string
		works    []*workv1alpha1.Work
		assigned []string
		want     []policyv1alpha1.ClusterQuotaStatus
		wantErr  string
	}{
		{name: "sorted by cluster", assigned: []string{"member1", "member2"},
			works: []*workv1alpha1.Work{
				reflectedWork("member2", true, quotaStatus(`"cpu":"2"`, `"cpu":"500m"`)),
				reflectedWork("member1", true, quotaStatus(`"cpu":"4","pods":"3"`, `"cpu":"1","pods":"0"`)),
			},
			want: []policyv1alpha1.ClusterQuotaStatus{
				clusterStatus("member1", resources("cpu=4", "pods=3"), resources("cpu=1", "pods=0")),
				clusterStatus("member2", resources("cpu=2"), resources("cpu=500m")),
			}},
		{name: "not applied", assigned: []string{"member1"},
			works: []*workv1alpha1.Work{reflectedWork("member1", false, quotaStatus(`"cpu":"4"`, `"cpu":"1"`))}},
		{name: "no status reflected yet", assigned: []string{"member1"},
			works: []*workv1alpha1.Work{reflectedWork("member1", true, ""), reflectedWork("member1", true, "null")}},
		{name: "being deleted", assigned: []string{"member2"}, works: []*workv1alpha1.Work{deleting}},
		{name: "cluster no longer assigned", assigned: []string{"member1"},
			works: []*workv1alpha1.Work{reflectedWork("member2", true, quotaStatus(`"cpu":"2"`, `"cpu":"1"`))}},
		{name: "another object", assigned: []string{"member2"}, works: []*workv1alpha1.Work{otherObject}},
		{name: "hard only", assigned: []string{"member1"},
			works: []*workv1alpha1.Work{reflectedWork("member1", true, `{"hard":{"cpu":"4"}}`)},
			want:  []policyv1alpha1.ClusterQuotaStatus{clusterStatus("member1", resources("cpu=4"), nil)}},
		{name: "malformed status", assigned: []string{"member1"},
			works:   []*workv1alpha1.Work{reflectedWork("member1", true, `{"hard":"lots"}`)},
			wantErr: "cluster member1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assigned := map[string]corev1.ResourceList{}
			for _, c := range tc.assigned {
				assigned[c] = nil
			}
			got, err := aggregate(tc.works, assigned, "q")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("aggregate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverallUsed: status.overallUsed is what the namespace's bindings'
// scheduling results use, of the resources spec.overall names only.
func TestOverallUsed(t *testing.T) {
	t.Parallel()
	set := scheduledBinding("flink", "0", 1, 1)
	set.Spec.ReplicaRequirements = nil
	set.Spec.Components = []workv1alpha2.Component{
		{Name: "jm", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: resources("cpu=1")}},
		{Name: "tm", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: resources("cpu=500m", "memory=1Gi")}},
	}
	tests := []struct {
		name     string
		overall  corev1.ResourceList
		bindings []*workv1alpha2.ResourceBinding
		want     corev1.ResourceList
	}{
		{name: "none", overall: resources("cpu=10m"), want: corev1.ResourceList{}},
		{name: "one 10m replica: only the listed resources it uses", overall: resources("cpu=10m", "memory=100Mi"),
			bindings: []*workv1alpha2.ResourceBinding{scheduledBinding("web", "10m", 1)}, want: resources("cpu=10m")},
		{name: "unscheduled counts nothing", overall: resources("cpu=1"),
			bindings: []*workv1alpha2.ResourceBinding{scheduledBinding("web", "10m")}, want: corev1.ResourceList{}},
		{name: "replicas on every cluster, every binding", overall: resources("cpu=1", "pods=10"),
			bindings: []*workv1alpha2.ResourceBinding{scheduledBinding("web", "10m", 2, 3), scheduledBinding("api", "100m", 1)},
			want:     resources("cpu=150m", "pods=6")},
		{name: "components: per-set requests on each cluster", overall: resources("cpu=10", "memory=10Gi"),
			bindings: []*workv1alpha2.ResourceBinding{set}, want: resources("cpu=4", "memory=4Gi")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := desiredStatus(policyv1alpha1.FederatedResourceQuotaSpec{Overall: tc.overall}, nil, overallUsed(tc.bindings)).OverallUsed
			if len(got) != len(tc.want) {
				t.Fatalf("overallUsed = %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if g := got[k]; g.Cmp(w) != 0 {
					t.Errorf("%s = %s, want %s", k, g.String(), w.String())
				}
			}
		})
	}
}

func TestStatusDiff(t *testing.T) {
	t.Parallel()
	agg := []policyv1alpha1.ClusterQuotaStatus{clusterStatus("member1", resources("cpu=4"), resources("cpu=1"))}
	spec := newQuota().Spec
	base := desiredStatus(spec, agg, resources("cpu=1"))
	tests := []struct {
		name                 string
		cur                  policyv1alpha1.FederatedResourceQuotaStatus
		wantAgg, wantOverall bool
	}{
		{name: "same", cur: *base.DeepCopy()},
		{name: "same value in other units", cur: policyv1alpha1.FederatedResourceQuotaStatus{
			Overall: resources("cpu=10000m", "memory=10240Mi"), OverallUsed: resources("cpu=1000m"),
			AggregatedStatus: []policyv1alpha1.ClusterQuotaStatus{clusterStatus("member1", resources("cpu=4000m"), resources("cpu=1"))}}},
		{name: "empty", wantAgg: true, wantOverall: true},
		{name: "member used changed", cur: desiredStatus(spec, []policyv1alpha1.ClusterQuotaStatus{clusterStatus("member1", resources("cpu=4"), resources("cpu=2"))}, resources("cpu=1")),
			wantAgg: true},
		{name: "bindings' use changed", cur: desiredStatus(spec, agg, resources("cpu=2")), wantOverall: true},
		{name: "hard changed", cur: desiredStatus(spec, []policyv1alpha1.ClusterQuotaStatus{clusterStatus("member1", resources("cpu=3"), resources("cpu=1"))}, resources("cpu=1")),
			wantAgg: true},
		{name: "overall changed", cur: desiredStatus(newQuota().Spec, agg, resources("cpu=1")), wantOverall: true},
	}
	tests[len(tests)-1].cur.Overall = resources("cpu=20")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, o := statusDiff(tc.cur, base)
			if a != tc.wantAgg || o != tc.wantOverall {
				t.Errorf("statusDiff = %v, %v; want %v, %v", a, o, tc.wantAgg, tc.wantOverall)
			}
		})
	}
	// No cluster reports: an empty sum equals an absent one.
	if a, o := statusDiff(policyv1alpha1.FederatedResourceQuotaStatus{Overall: spec.Overall}, desiredStatus(spec, nil, nil)); a || o {
		t.Errorf("statusDiff of nothing reported = %v, %v; want no change", a, o)
	}
}

func TestStatusPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status policyv1alpha1.FederatedResourceQuotaStatus
		want   string
	}{
		{name: "empty fields removed", status: desiredStatus(newQuota().Spec, nil, nil),
			want: `{"status":{"aggregatedStatus":null,"overall":{"cpu":"10","memory":"10Gi"},"overallUsed":null}}`},
		{name: "all set", status: desiredStatus(newQuota().Spec, []policyv1alpha1.ClusterQuotaStatus{
			clusterStatus("member1", resources("cpu=4"), resources("cpu=1"))}, resources("cpu=1")),
			want: `{"status":{"aggregatedStatus":[{"clusterName":"member1","hard":{"cpu":"4"},"used":{"cpu":"1"}}],` +
				`"overall":{"cpu":"10","memory":"10Gi"},"overallUsed":{"cpu":"1"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := statusPatch(tc.status)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// scheduledBinding is ResourceBinding name of namespace ns requesting cpu
// per replica, scheduled with replicas on each of the clusters member1,
// member2, ...
func scheduledBinding(name, cpu string, replicas ...int32) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	b.Spec.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu=" + cpu)}
	for i, n := range replicas {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha2.TargetCluster{Name: fmt.Sprintf("member%d", i+1), Replicas: n})
		b.Spec.Replicas += n
	}
	return b
}

// statusFixture is a StatusController over listers holding quota, the
// bindings and ws, and a fake client holding quota.
func newStatusFixture(t *testing.T, quota *policyv1alpha1.FederatedResourceQuota, bindings []*workv1alpha2.ResourceBinding, ws ...*workv1alpha1.Work) (*StatusController, *karmadafake.Clientset, *record.FakeRecorder) {
	t.Helper()
	qi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var objs []runtime.Object
	if quota != nil {
		_ = qi.Add(quota)
		objs = append(objs, quota)
	}
	wi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{worksByQuota: indexByQuota})
	for _, w := range ws {
		_ = wi.Add(w)
	}
	bi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, b := range bindings {
		_ = bi.Add(b)
	}
	client := karmadafake.NewSimpleClientset(objs...)
	client.ClearActions()
	rec := record.NewFakeRecorder(10)
	return &StatusController{quotas: policylisters.NewFederatedResourceQuotaLister(qi), works: wi,
		bindings: worklisters.NewResourceBindingLister(bi), client: client, recorder: rec,
		written: &writtenStatuses{m: map[string]writtenStatus{}}}, client, rec
}

func statusPatches(client *karmadafake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && p.GetSubresource() == "status" {
			out = append(out, string(p.GetPatch()))
		}
	}
	return out
}

func TestStatusReconcile(t *testing.T) {
	t.Parallel()
	assigned := newQuota("member1", resources("cpu=4"), "member2", resources("cpu=2"))
	work1 := reflectedWork("member1", true, quotaStatus(`"cpu":"4"`, `"cpu":"1"`))
	work2 := reflectedWork("member2", true, quotaStatus(`"cpu":"2"`, `"cpu":"500m"`))
	// 1500m of CPU scheduled.
	web := []*workv1alpha2.ResourceBinding{scheduledBinding("web", "500m", 1, 2), scheduledBinding("config", "0")}
	collected := assigned.DeepCopy()
	collected.Status = desiredStatus(assigned.Spec, []policyv1alpha1.ClusterQuotaStatus{
		clusterStatus("member1", resources("cpu=4"), resources("cpu=1")),
		clusterStatus("member2", resources("cpu=2"), resources("cpu=500m")),
	}, resources("cpu=1500m"))
	// A quota without static assignments: overallUsed is the bindings'.
	pooled := newQuota()
	pooled.Status = desiredStatus(pooled.Spec, nil, overallUsed(web))
	hardChanged := collected.DeepCopy()
	hardChanged.Status.AggregatedStatus[1].Hard = resources("cpu=3")
	overallChanged := collected.DeepCopy()
	overallChanged.Spec.Overall = resources("cpu=20", "memory=10Gi")
	tests := []struct {
		name       string
		quota      *policyv1alpha1.FederatedResourceQuota
		works      []*workv1alpha1.Work
		bindings   []*workv1alpha2.ResourceBinding // web unless set
		failPatch  bool
		wantPatch  string // a substring of the one status patch; "" for none
		wantEvents []string
		wantErr    bool
	}{
		{name: "first collection", quota: assigned, works: []*workv1alpha1.Work{work1, work2},
			wantPatch:  `"overallUsed":{"cpu":"1500m"}`,
			wantEvents: []string{"Normal AggregateStatusSucceed Collect status of FederatedResourceQuota(ns/q) succeed.", "Normal CollectOverallStatusSucceed"}},
		{name: "unchanged", quota: collected, works: []*workv1alpha1.Work{work1, work2}},
		{name: "with static assignments, a binding's use is the members' to report", quota: collected, works: []*workv1alpha1.Work{work1, work2},
			bindings: append([]*workv1alpha2.ResourceBinding{scheduledBinding("api", "250m", 2)}, web...)},
		{name: "pooled: first collection", quota: newQuota(),
			wantPatch: `"overallUsed":{"cpu":"1500m"}`, wantEvents: []string{"Normal CollectOverallStatusSucceed"}},
		{name: "pooled: unchanged", quota: pooled},
		{name: "pooled: a binding scheduled", quota: pooled,
			bindings:  append([]*workv1alpha2.ResourceBinding{scheduledBinding("api", "250m", 2)}, web...),
			wantPatch: `"overallUsed":{"cpu":"2"}`, wantEvents: []string{"Normal CollectOverallStatusSucceed"}},
		{name: "pooled: a binding gone", quota: pooled, bindings: web[1:],
			wantPatch: `"overallUsed":null`, wantEvents: []string{"Normal CollectOverallStatusSucceed"}},
		{name: "a member's hard changed", quota: hardChanged, works: []*workv1alpha1.Work{work1, work2},
			wantPatch: `"clusterName":"member2","hard":{"cpu":"2"}`, wantEvents: []string{"Normal AggregateStatusSucceed"}},
		{name: "overall changed", quota: overallChanged, works: []*workv1alpha1.Work{work1, work2},
			wantPatch: `"overall":{"cpu":"20"`, wantEvents: []string{"Normal CollectOverallStatusSucceed"}},
		{name: "nothing reported yet", quota: assigned, works: []*workv1alpha1.Work{reflectedWork("member1", false, "")},
			wantPatch: `"aggregatedStatus":null`, wantEvents: []string{"Normal CollectOverallStatusSucceed"}},
		{name: "malformed member status", quota: assigned, works: []*workv1alpha1.Work{reflectedWork("member1", true, `[]`)},
			wantEvents: []string{"Warning AggregateStatusFailed"}},
		{name: "patch fails", quota: assigned, works: []*workv1alpha1.Work{work1}, failPatch: true,
			wantPatch: `"clusterName":"member1"`, wantEvents: []string{"Warning AggregateStatusFailed", "Warning CollectOverallStatusFailed"}, wantErr: true},
		{name: "quota gone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bindings := tc.bindings
			if bindings == nil {
				bindings = web
			}
			c, client, rec := newStatusFixture(t, tc.quota, bindings, tc.works...)
			if tc.failPatch {
				client.PrependReactor("patch", "federatedresourcequotas", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("boom")
				})
			}
			_, ctx := ktesting.NewTestContext(t)
			err := c.reconcile(ctx, "ns/q")
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile error %v, want error %v", err, tc.wantErr)
			}
			patches := statusPatches(client)
			switch {
			case tc.wantPatch == "" && len(patches) > 0:
				t.Errorf("status patches %v, want none", patches)
			case tc.wantPatch != "" && (len(patches) != 1 || !strings.Contains(patches[0], tc.wantPatch)):
				t.Errorf("status patches %v, want one with %s", patches, tc.wantPatch)
			}
			evs := events(rec)
			if len(evs) != len(tc.wantEvents) {
				t.Fatalf("events %v, want %v", evs, tc.wantEvents)
			}
			for i, w := range tc.wantEvents {
				if !strings.HasPrefix(evs[i], w) {
					t.Errorf("event %q, want %q", evs[i], w)
				}
			}
		})
	}
}

// TestStatusReconcileStaleCache checks that a second reconcile before the
// cache holds the first write writes nothing and records no event.
func TestStatusReconcileStaleCache(t *testing.T) {
	t.Parallel()
	quota := newQuota("member1", resources("cpu=4"))
	c, client, rec := newStatusFixture(t, quota, []*workv1alpha2.ResourceBinding{scheduledBinding("web", "1", 1)},
		reflectedWork("member1", true, quotaStatus(`"cpu":"4"`, `"cpu":"1"`)))
	for range 2 {
		if err := c.reconcile(context.Background(), "ns/q"); err != nil {
			t.Fatal(err)
		}
	}
	if p := statusPatches(client); len(p) != 1 {
		t.Errorf("status patches %v, want one", p)
	}
	if evs := events(rec); len(evs) != 2 {
		t.Errorf("events %v, want the two of the first write", evs)
	}
	// The written status is what the server holds.
	stored, err := client.PolicyV1alpha1().FederatedResourceQuotas("ns").Get(context.Background(), "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(stored.Status)
	if want := `{"overall":{"cpu":"10","memory":"10Gi"},"overallUsed":{"cpu":"1"},"aggregatedStatus":[{"clusterName":"member1","hard":{"cpu":"4"},"used":{"cpu":"1"}}]}`; string(got) != want {
		t.Errorf("stored status %s, want %s", got, want)
	}
}
