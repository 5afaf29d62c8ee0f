package namespace

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/names"
)

// The controller-level fixture: listers over indexers, the fake clientset
// recording the writes. The controller records no events.

var fixedNow = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// teamWork is the name of the Works of namespace team-a.
var teamWork = names.WorkName("Namespace", "team-a", "")

type nsFixture struct {
	ctrl   *Controller
	client *karmadafake.Clientset
	works  cache.Indexer
}

type nsObjects struct {
	namespaces []*corev1.Namespace
	clusters   []*clusterv1alpha1.Cluster
	works      []*workv1alpha1.Work
}

func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

func newNSFixture(t *testing.T, in nsObjects, overrides OverrideFunc) *nsFixture {
	t.Helper()
	nss, clusters := newIndexer(), newIndexer()
	f := &nsFixture{works: newIndexer()}
	var stored []runtime.Object
	for _, o := range in.namespaces {
		if err := nss.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range in.clusters {
		if err := clusters.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range in.works {
		if err := f.works.Add(w); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, w.DeepCopy())
	}
	f.client = karmadafake.NewSimpleClientset(stored...)
	f.client.PrependReactor("create", "works", f.mutateWork)
	c, err := newSkipper([]string{DefaultSkippedPattern})
	if err != nil {
		t.Fatal(err)
	}
	c.namespaces = corelisters.NewNamespaceLister(nss)
	c.clusters = clusterlisters.NewClusterLister(clusters)
	c.works = worklisters.NewWorkLister(f.works)
	c.cops = policylisters.NewClusterOverridePolicyLister(newIndexer())
	c.client = f.client
	c.overrides = overrides
	f.ctrl = c
	return f
}

// mutateWork stores a created Work as the registry does, with its
// mutation applied (permanent id, manifest labelled); the fake tracker
// does not.
func (f *nsFixture) mutateWork(a clienttesting.Action) (bool, runtime.Object, error) {
	w := a.(clienttesting.CreateAction).GetObject().(*workv1alpha1.Work).DeepCopy()
	if err := mutation.MutateWork(w, true); err != nil {
		return true, nil, err
	}
	if err := f.client.Tracker().Create(a.GetResource(), w, a.GetNamespace()); err != nil {
		return true, nil, err
	}
	return true, w, nil
}

// writes are the recorded writes as "verb resource namespace/name", sorted.
func (f *nsFixture) writes() []string { return workertest.Writes(f.client.Actions()) }

// manifest returns the Namespace the write to the Work in ns carries.
func (f *nsFixture) manifest(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	for _, a := range f.client.Actions() {
		if a.GetNamespace() != ns {
			continue
		}
		w := &workv1alpha1.Work{}
		switch a := a.(type) {
		case clienttesting.CreateAction:
			w = a.GetObject().(*workv1alpha1.Work)
			if !cmp.Equal(w.Finalizers, []string{executionFinalizer}) {
				t.Errorf("%s: Work finalizers %v", ns, w.Finalizers)
			}
		case clienttesting.PatchAction:
			if err := json.Unmarshal(a.GetPatch(), w); err != nil {
				t.Fatal(err)
			}
		default:
			continue
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("no Work written in %s", ns)
	return nil
}

// resync makes the cache hold what the server stores and forgets the requests.
func (f *nsFixture) resync(t *testing.T) {
	t.Helper()
	list, err := f.client.WorkV1alpha1().Works("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]any, 0, len(list.Items))
	for i := range list.Items {
		objs = append(objs, &list.Items[i])
	}
	if err := f.works.Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
	f.client.ClearActions()
}

func namespace(name string, mods ...func(*corev1.Namespace)) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "ns-uid", ResourceVersion: "4", Labels: map[string]string{"team": "a"}},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	for _, m := range mods {
		m(ns)
	}
	return ns
}

func cluster(name string, deleting bool) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if deleting {
		c.DeletionTimestamp = &fixedNow
	}
	return c
}

// storedWork is the Work of team-a in cluster's execution namespace as
// the previous reconcile of ns wrote it (the registry's mutation applied).
func storedWork(t *testing.T, ns *corev1.Namespace, cluster string, mods ...func(*workv1alpha1.Work)) *workv1alpha1.Work {
	t.Helper()
	f := newNSFixture(t, nsObjects{namespaces: []*corev1.Namespace{ns}, clusters: []*clusterv1alpha1.Cluster{cluster0(cluster)}}, nil)
	if err := f.ctrl.reconcile(context.Background(), ns.Name); err != nil {
		t.Fatal(err)
	}
	w, err := f.client.WorkV1alpha1().Works(names.ExecutionNamespace(cluster)).Get(context.Background(), teamWork, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.ResourceVersion = "1"
	for _, m := range mods {
		m(w)
	}
	return w
}

func cluster0(name string) *clusterv1alpha1.Cluster { return cluster(name, false) }

func TestReconcile(t *testing.T) {
	t.Parallel()
	teamA := namespace("team-a")
	ab := []*clusterv1alpha1.Cluster{cluster0("a"), cluster0("b")}
	tests := []struct {
		name      string
		key       string
		in        nsObjects
		overrides OverrideFunc
		// wantWrites are "verb resource namespace/name", sorted.
		wantWrites []string
		// wantLabels are the labels of the Namespace manifest written, by Work namespace.
		wantLabels map[string]map[string]string
		wantErr    bool
	}{
		{
			name: "new namespace: a Work per cluster, not for a cluster being deleted",
			key:  "team-a",
			in: nsObjects{namespaces: []*corev1.Namespace{teamA},
				clusters: []*clusterv1alpha1.Cluster{cluster0("a"), cluster0("b"), cluster("c", true)}},
			wantWrites: []string{"create works karmada-es-a/" + teamWork, "create works karmada-es-b/" + teamWork},
			wantLabels: map[string]map[string]string{
				"karmada-es-a": {"team": "a", workv1alpha1.ManagedByKarmadaLabel: "true"},
				"karmada-es-b": {"team": "a", workv1alpha1.ManagedByKarmadaLabel: "true"},
			},
		},
		{
			name: "Works up to date: nothing",
			key:  "team-a",
			in: nsObjects{namespaces: []*corev1.Namespace{teamA}, clusters: ab,
				works: []*workv1alpha1.Work{storedWork(t, teamA, "a"), storedWork(t, teamA, "b")}},
		},
		{
			name: "new cluster: its Work only",
			key:  "team-a",
			in: nsObjects{namespaces: []*corev1.Namespace{teamA}, clusters: ab,
				works: []*workv1alpha1.Work{storedWork(t, teamA, "a")}},
			wantWrites: []string{"create works karmada-es-b/" + teamWork},
			wantLabels: map[string]map[string]string{"karmada-es-b": {"team": "a", workv1alpha1.ManagedByKarmadaLabel: "true"}},
		},
		{
			name: "labels changed: both Works patched",
			key:  "team-a",
			in: nsObjects{namespaces: []*corev1.Namespace{namespace("team-a", func(ns *corev1.Namespace) { ns.Labels["team"] = "b" })},
				clusters: ab, works: []*workv1alpha1.Work{storedWork(t, teamA, "a"), storedWork(t, teamA, "b")}},
			wantWrites: []string{"patch works karmada-es-a/" + teamWork, "patch works karmada-es-b/" + teamWork},
			wantLabels: map[string]map[string]string{
				"karmada-es-a": {"team": "b", workv1alpha1.ManagedByKarmadaLabel: "true"},
				"karmada-es-b": {"team": "b", workv1alpha1.ManagedByKarmadaLabel: "true"},
			},
		},
		{
			name: "Work lost its execution finalizer: patched",
			key:  "team-a",
			in: nsObjects{namespaces: []*corev1.Namespace{teamA}, clusters: []*clusterv1alpha1.Cluster{cluster0("a")},
				works: []*workv1alpha1.Work{storedWork(t, teamA, "a", func(w *workv1alpha1.Work) { w.Finalizers = nil })}},
			wantWrites: []string{"patch works karmada-es-a/" + teamWork},
			wantLabels: map[string]map[string]string{"karmada-es-a": {"team": "a", workv1alpha1.ManagedByKarmadaLabel: "true"}},
		},
		{
			name: "Work being deleted: left alone until it is gone",
			key:  "team-a",
			in: nsObjects{namespaces: []*corev1.Namespace{namespace("team-a", func(ns *corev1.Namespace) { ns.Labels["team"] = "b" })},
				clusters: []*clusterv1alpha1.Cluster{cluster0("a")},
				works:    []*workv1alpha1.Work{storedWork(t, teamA, "a", func(w *workv1alpha1.Work) { w.DeletionTimestamp = &fixedNow })}},
		},
		{name: "default is never propagated", key: "default", in: nsObjects{namespaces: []*corev1.Namespace{namespace("default")}, clusters: ab}},
		{name: "kube-* is skipped", key: "kube-node-lease", in: nsObjects{namespaces: []*corev1.Namespace{namespace("kube-node-lease")}, clusters: ab}},
		{name: "execution namespace", key: "karmada-es-a", in: nsObjects{namespaces: []*corev1.Namespace{namespace("karmada-es-a")}, clusters: ab}},
		{
			name: "skip-auto-propagation label",
			key:  "team-a",
			in: nsObjects{clusters: ab, namespaces: []*corev1.Namespace{namespace("team-a", func(ns *corev1.Namespace) {
				ns.Labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel] = "true"
			})}},
		},
		{
			name: "claimed by a ClusterPropagationPolicy: its policy decides",
			key:  "team-a",
			in: nsObjects{clusters: ab, namespaces: []*corev1.Namespace{namespace("team-a", func(ns *corev1.Namespace) {
				ns.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = "cpp1"
			})}},
		},
		{
			name: "namespace deleted: its Works deleted",
			key:  "team-a",
			in: nsObjects{clusters: ab,
				works: []*workv1alpha1.Work{storedWork(t, teamA, "a"), storedWork(t, teamA, "b")}},
			wantWrites: []string{"delete works karmada-es-a/" + teamWork, "delete works karmada-es-b/" + teamWork},
		},
		{
			name: "namespace being deleted: its Works deleted, not twice",
			key:  "team-a",
			in: nsObjects{clusters: ab, namespaces: []*corev1.Namespace{namespace("team-a", func(ns *corev1.Namespace) { ns.DeletionTimestamp = &fixedNow })},
				works: []*workv1alpha1.Work{storedWork(t, teamA, "a"), storedWork(t, teamA, "b", func(w *workv1alpha1.Work) { w.DeletionTimestamp = &fixedNow })}},
			wantWrites: []string{"delete works karmada-es-a/" + teamWork},
		},
		{
			name: "overrides fail for b: a written, the error returned",
			key:  "team-a",
			in:   nsObjects{namespaces: []*corev1.Namespace{teamA}, clusters: ab},
			overrides: func(obj *unstructured.Unstructured, c *clusterv1alpha1.Cluster, _ []*policyv1alpha1.ClusterOverridePolicy) (map[string]string, error) {
				if c.Name == "b" {
					return nil, errors.New("bad path")
				}
				obj.SetLabels(map[string]string{"team": "a1"})
				return map[string]string{policyv1alpha1.AppliedClusterOverridesAnnotation: `[{"policyName":"cop"}]`}, nil
			},
			wantWrites: []string{"create works karmada-es-a/" + teamWork},
			wantLabels: map[string]map[string]string{"karmada-es-a": {"team": "a1", workv1alpha1.ManagedByKarmadaLabel: "true"}},
			wantErr:    true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newNSFixture(t, tc.in, tc.overrides)
			err := f.ctrl.reconcile(context.Background(), tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile: %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			for ns, want := range tc.wantLabels {
				m := f.manifest(t, ns)
				if m.GetKind() != "Namespace" || m.GetAPIVersion() != "v1" || m.GetName() != "team-a" {
					t.Errorf("%s: manifest %s %s %s", ns, m.GetAPIVersion(), m.GetKind(), m.GetName())
				}
				// A patch keeps the stored Work's permanent id on the manifest.
				got := m.GetLabels()
				delete(got, workv1alpha2.WorkPermanentIDLabel)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: manifest labels (-want +got):\n%s", ns, diff)
				}
				// Pruned: no spec, status, uid or resourceVersion reach the member.
				for _, k := range []string{"spec", "status"} {
					if _, ok := m.Object[k]; ok {
						t.Errorf("%s: manifest has %s", ns, k)
					}
				}
				if m.GetUID() != "" || m.GetResourceVersion() != "" {
					t.Errorf("%s: manifest uid %q resourceVersion %q", ns, m.GetUID(), m.GetResourceVersion())
				}
			}
			if tc.wantErr {
				return
			}
			// The informer delivers the writes: nothing more to do.
			f.resync(t)
			if err := f.ctrl.reconcile(context.Background(), tc.key); err != nil {
				t.Fatal(err)
			}
			if w := f.writes(); len(w) != 0 {
				t.Errorf("second reconcile wrote %v", w)
			}
		})
	}
}
