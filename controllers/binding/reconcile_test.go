package binding

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	flotillalisters "github.com/flotilla-io/flotilla/apis/generated/listers/flotilla/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"github.com/flotilla-io/flotilla/rolloutplan"
)

// The controller-level fixture: listers over indexers, the fake clientset
// recording the writes, a fake recorder; templates are read from a template
// informer over a fake dynamic client (the one the manager builds).

var (
	deploymentGVK  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	deploymentGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	clusterRoleGVK = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	clusterRoleGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	worksGVR       = workv1alpha1.SchemeGroupVersion.WithResource("works")
	rbGVR          = workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings")
	crbGVR         = workv1alpha2.SchemeGroupVersion.WithResource("clusterresourcebindings")
)

// nginxWork is the name of the Works of the nginx Deployment template.
var nginxWork = names.WorkName("Deployment", "nginx", "default")

// resettable adds a no-op Reset to a static mapper.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

type fixture struct {
	ctrl     *Controller
	client   *fake.Clientset
	recorder *record.FakeRecorder
	works    cache.Indexer
}

func newIndexer(indexers cache.Indexers) cache.Indexer {
	all := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	for k, v := range indexers {
		all[k] = v
	}
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, all)
}

// objects is what a case starts from: the caches and the servers hold the same.
type objects struct {
	templates []runtime.Object // on the host (dynamic client)
	bindings  []runtime.Object
	works     []*workv1alpha1.Work
	clusters  []*clusterv1alpha1.Cluster
	revisions []*flotillav1alpha1.ResourceRevision
}

func newFixture(t *testing.T, in objects, overrides OverrideFunc) *fixture {
	t.Helper()
	rbs, crbs, clusters := newIndexer(nil), newIndexer(nil), newIndexer(nil)
	f := &fixture{recorder: record.NewFakeRecorder(64), works: newIndexer(cache.Indexers{worksByBinding: indexByBinding})}
	var stored []runtime.Object
	for _, b := range in.bindings {
		idx := rbs
		if _, ok := b.(*workv1alpha2.ClusterResourceBinding); ok {
			idx = crbs
		}
		mustAdd(t, idx, b)
		stored = append(stored, b.DeepCopyObject())
	}
	for _, w := range in.works {
		mustAdd(t, f.works, w)
		stored = append(stored, w.DeepCopy())
	}
	for _, c := range in.clusters {
		mustAdd(t, clusters, c)
	}
	revisions := newIndexer(nil)
	for _, r := range in.revisions {
		mustAdd(t, revisions, r)
	}
	f.client = fake.NewSimpleClientset(stored...)

	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
	mapper.Add(clusterRoleGVK, meta.RESTScopeRoot)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deploymentGVR: "DeploymentList", clusterRoleGVR: "ClusterRoleList"}, in.templates...)
	tmpl := templates.New(dyn, resettable{mapper})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if missing := tmpl.Ensure(ctx, map[schema.GroupVersionKind]bool{deploymentGVK: true, clusterRoleGVK: true}); len(missing) > 0 {
		t.Fatalf("kinds not mapped: %v", missing)
	}
	f.ctrl = &Controller{
		templates: tmpl,
		rbs:       worklisters.NewResourceBindingLister(rbs),
		crbs:      worklisters.NewClusterResourceBindingLister(crbs),
		works:     f.works,
		clusters:  clusterlisters.NewClusterLister(clusters),
		cops:      policylisters.NewClusterOverridePolicyLister(newIndexer(nil)),
		ops:       policylisters.NewOverridePolicyLister(newIndexer(nil)),
		revisions: flotillalisters.NewResourceRevisionLister(revisions),
		interp:    interpreter.NewNative(),
		overrides: overrides,
		recorder:  f.recorder,
	}
	f.ctrl.setReconcilers(f.client, nil)
	return f
}

func mustAdd(t *testing.T, idx cache.Indexer, obj any) {
	t.Helper()
	if err := idx.Add(obj); err != nil {
		t.Fatal(err)
	}
}

// events are the recorded events, sorted.
func (f *fixture) events() []string {
	out := workertest.Events(f.recorder.Events)
	sort.Strings(out)
	return out
}

// writes are the recorded writes as "verb resource namespace/name", sorted.
func (f *fixture) writes() []string { return workertest.Writes(f.client.Actions()) }

// written returns the Work the write to namespace ns sent (created, or the
// patch decoded as a Work), with its manifest.
func (f *fixture) written(t *testing.T, ns string) (*workv1alpha1.Work, *unstructured.Unstructured) {
	t.Helper()
	for _, a := range f.client.Actions() {
		if a.GetResource() != worksGVR || a.GetNamespace() != ns {
			continue
		}
		w := &workv1alpha1.Work{}
		switch a := a.(type) {
		case clienttesting.CreateAction:
			w = a.GetObject().(*workv1alpha1.Work)
		case clienttesting.PatchAction:
			if a.GetPatchType() != "application/merge-patch+json" {
				t.Errorf("patch type %s, want a merge patch", a.GetPatchType())
			}
			if err := json.Unmarshal(a.GetPatch(), w); err != nil {
				t.Fatal(err)
			}
		default:
			continue
		}
		if len(w.Spec.Workload.Manifests) != 1 {
			t.Fatalf("Work in %s has %d manifests", ns, len(w.Spec.Workload.Manifests))
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			t.Fatal(err)
		}
		return w, m
	}
	t.Fatalf("no Work written in %s", ns)
	return nil, nil
}

// resync copies the stored Works into the cache, as the informer would,
// and forgets the requests so far.
func (f *fixture) resync(t *testing.T) {
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

// nginxTemplate is the Deployment default/nginx, 2 replicas.
func nginxTemplate() *unstructured.Unstructured {
	u := nginx()
	u.SetResourceVersion("7")
	return u
}

func clusterRole() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": "reader", "uid": "cr1", "resourceVersion": "3"},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}},
	}}
}

// divided1to1 divides the replicas between a and b by static weights.
func divided1to1() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{
		ClusterAffinity:   pt.OnClusters("a", "b"),
		ReplicaScheduling: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")), pt.Weight(1, pt.OnClusters("b"))),
	}
}

// newRB is the ResourceBinding of nginx, scheduled 1:1 on a and b.
func newRB(mods ...func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-deployment", ResourceVersion: "5",
			Labels:     map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb1"},
			Finalizers: []string{workv1alpha2.BindingControllerFinalizer}},
		Spec: *pt.BindingSpec(2, divided1to1(), pt.At("a", 1), pt.At("b", 1)),
	}
	b.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", UID: "u1"}
	for _, m := range mods {
		m(b)
	}
	return b
}

func deleting(b *workv1alpha2.ResourceBinding) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b.DeletionTimestamp = &now
}

// storedWork is a Work of the nginx binding in cluster's namespace, as a
// previous reconcile left it (replicas is the manifest's).
func storedWork(t *testing.T, cluster string, replicas int32) *workv1alpha1.Work {
	t.Helper()
	c := &Controller{interp: interpreter.NewNative()}
	b := newRB()
	view := &bindingView{namespace: b.Namespace, name: b.Name, id: "rb1", spec: &b.Spec}
	w, err := c.buildWork(view, nginxTemplate(), pt.At(cluster, replicas), pt.Cluster(cluster), nil, "w-"+cluster)
	if err != nil {
		t.Fatal(err)
	}
	w.ResourceVersion = "1"
	return w
}

const (
	rbSucceeded = "Normal SyncWorkSucceed Sync work of resourceBinding(default/nginx-deployment) successful."
)

func TestReconcileResourceBinding(t *testing.T) {
	t.Parallel()
	ab := []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b")}
	tests := []struct {
		name      string
		in        objects
		overrides OverrideFunc
		// wantWrites are "verb resource namespace/name", sorted.
		wantWrites []string
		// wantReplicas are the manifest replicas of the Works written, by namespace.
		wantReplicas map[string]int64
		wantEvents   []string
		wantErr      bool
	}{
		{
			name:         "scheduled, no Works: one Work per cluster, replicas divided",
			in:           objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()}, clusters: ab},
			wantWrites:   []string{"create works karmada-es-a/" + nginxWork, "create works karmada-es-b/" + nginxWork},
			wantReplicas: map[string]int64{"karmada-es-a": 1, "karmada-es-b": 1},
			wantEvents:   []string{rbSucceeded, rbSucceeded},
		},
		{
			name: "Works up to date: nothing",
			in: objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()}, clusters: ab,
				works: []*workv1alpha1.Work{storedWork(t, "a", 1), storedWork(t, "b", 1)}},
		},
		{
			name: "rescheduled 2:0: the Work of a patched, the Work of b deleted",
			in: objects{templates: []runtime.Object{nginxTemplate()}, clusters: ab,
				bindings: []runtime.Object{newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 2)} })},
				works:    []*workv1alpha1.Work{storedWork(t, "a", 1), storedWork(t, "b", 1)}},
			wantWrites:   []string{"delete works karmada-es-b/" + nginxWork, "patch works karmada-es-a/" + nginxWork},
			wantReplicas: map[string]int64{"karmada-es-a": 2},
			wantEvents:   []string{rbSucceeded, rbSucceeded},
		},
		{
			name: "a Work being evicted stays",
			in: objects{templates: []runtime.Object{nginxTemplate()}, clusters: ab,
				bindings: []runtime.Object{newRB(func(b *workv1alpha2.ResourceBinding) {
					b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 1)}
					b.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "b", Reason: "TaintUntolerated"}}
				})},
				works: []*workv1alpha1.Work{storedWork(t, "a", 1), storedWork(t, "b", 1)}},
		},
		{
			name: "cluster being deleted: no Work for it",
			in: objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()},
				clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b", pt.BeingDeleted())}},
			wantWrites:   []string{"create works karmada-es-a/" + nginxWork},
			wantReplicas: map[string]int64{"karmada-es-a": 1},
			wantEvents:   []string{rbSucceeded, rbSucceeded},
		},
		{
			name: "unknown cluster: the other Work written, SyncWorkFailed",
			in: objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()},
				clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a")}},
			wantWrites:   []string{"create works karmada-es-a/" + nginxWork},
			wantReplicas: map[string]int64{"karmada-es-a": 1},
			wantEvents: []string{
				`Warning SyncWorkFailed Failed to sync work of resourceBinding(default/nginx-deployment): cluster b: cluster.cluster.karmada.io "b" not found`,
				`Warning SyncWorkFailed cluster b: cluster.cluster.karmada.io "b" not found`,
			},
			wantErr: true,
		},
		{
			name: "overrides applied: ApplyOverridePolicySucceed per cluster",
			in:   objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()}, clusters: ab},
			overrides: func(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, _ []*policyv1alpha1.ClusterOverridePolicy,
				_ []*policyv1alpha1.OverridePolicy) (map[string]string, error) {
				obj.SetLabels(map[string]string{"at": cluster.Name})
				return map[string]string{policyv1alpha1.AppliedOverridesAnnotation: `[{"policyName":"op"}]`}, nil
			},
			wantWrites:   []string{"create works karmada-es-a/" + nginxWork, "create works karmada-es-b/" + nginxWork},
			wantReplicas: map[string]int64{"karmada-es-a": 1, "karmada-es-b": 1},
			wantEvents: []string{
				"Normal ApplyOverridePolicySucceed Apply override policy(default/op) for cluster(a) succeed.",
				"Normal ApplyOverridePolicySucceed Apply override policy(default/op) for cluster(b) succeed.",
				rbSucceeded, rbSucceeded,
			},
		},
		{
			name: "overrides fail for b: ApplyOverridePolicyFailed, SyncWorkFailed",
			in:   objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()}, clusters: ab},
			overrides: func(_ *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, _ []*policyv1alpha1.ClusterOverridePolicy,
				_ []*policyv1alpha1.OverridePolicy) (map[string]string, error) {
				if cluster.Name == "b" {
					return nil, errors.New("bad path")
				}
				return nil, nil
			},
			wantWrites:   []string{"create works karmada-es-a/" + nginxWork},
			wantReplicas: map[string]int64{"karmada-es-a": 1},
			wantEvents: []string{
				"Warning ApplyOverridePolicyFailed Apply override policies for cluster(b) failed: bad path",
				"Warning SyncWorkFailed Failed to sync work of resourceBinding(default/nginx-deployment): applying overrides for cluster b: bad path",
				"Warning SyncWorkFailed applying overrides for cluster b: bad path",
			},
			wantErr: true,
		},
		{
			name: "template gone: nothing (the detector deletes the binding)",
			in:   objects{bindings: []runtime.Object{newRB()}, clusters: ab},
		},
		{
			name: "template re-created with another uid: nothing",
			in: objects{bindings: []runtime.Object{newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.UID = "old" })},
				templates: []runtime.Object{nginxTemplate()}, clusters: ab},
		},
		{
			name: "no permanent id yet: nothing",
			in: objects{bindings: []runtime.Object{newRB(func(b *workv1alpha2.ResourceBinding) { b.Labels = nil })},
				templates: []runtime.Object{nginxTemplate()}, clusters: ab},
		},
		{
			name: "being deleted with Works: the Works deleted, the finalizer kept",
			in: objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB(deleting)}, clusters: ab,
				works: []*workv1alpha1.Work{storedWork(t, "a", 1), storedWork(t, "b", 1)}},
			wantWrites: []string{"delete works karmada-es-a/" + nginxWork, "delete works karmada-es-b/" + nginxWork},
		},
		{
			name: "being deleted, Works gone: the finalizer dropped",
			in: objects{templates: []runtime.Object{nginxTemplate()}, clusters: ab,
				bindings: []runtime.Object{newRB(deleting, func(b *workv1alpha2.ResourceBinding) { b.Finalizers = append(b.Finalizers, "other") })}},
			wantWrites: []string{"patch resourcebindings default/nginx-deployment"},
		},
		{
			name: "being deleted, no finalizer of ours: nothing",
			in: objects{templates: []runtime.Object{nginxTemplate()}, clusters: ab,
				bindings: []runtime.Object{newRB(deleting, func(b *workv1alpha2.ResourceBinding) { b.Finalizers = []string{"other"} })}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.in, tc.overrides)
			err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment")
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile: %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			for ns, replicas := range tc.wantReplicas {
				w, m := f.written(t, ns)
				if got, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); got != replicas {
					t.Errorf("%s: manifest replicas %d, want %d", ns, got, replicas)
				}
				if w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] != "rb1" ||
					w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey] != "nginx-deployment" {
					t.Errorf("%s: Work labels %v annotations %v", ns, w.Labels, w.Annotations)
				}
				if m.GetLabels()[workv1alpha1.ManagedByKarmadaLabel] != workv1alpha1.ManagedByKarmadaLabelValue || m.GetAnnotations()[workv1alpha2.ResourceTemplateUIDAnnotation] != "u1" {
					t.Errorf("%s: manifest labels %v annotations %v", ns, m.GetLabels(), m.GetAnnotations())
				}
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for _, a := range f.client.Actions() {
				if p, ok := a.(clienttesting.PatchAction); ok && p.GetResource() == rbGVR {
					jsonEqual(t, `{"metadata":{"finalizers":["other"]}}`, p.GetPatch())
				}
			}
			if tc.wantErr {
				return
			}
			// The informer delivers the writes: nothing more to do.
			f.resync(t)
			if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err != nil {
				t.Fatal(err)
			}
			if hasDeletion(tc.in.bindings) {
				return
			}
			if w := f.writes(); len(w) != 0 {
				t.Errorf("second reconcile wrote %v", w)
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("second reconcile recorded %v", ev)
			}
		})
	}
}

// hasDeletion tells whether a case's binding is being deleted: its next
// reconcile goes on finalizing (the Works gone, the finalizer next).
func hasDeletion(bindings []runtime.Object) bool {
	for _, b := range bindings {
		if b.(metav1.Object).GetDeletionTimestamp() != nil {
			return true
		}
	}
	return false
}

func TestReconcileClusterResourceBinding(t *testing.T) {
	t.Parallel()
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader-clusterrole",
			Labels:     map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb1"},
			Finalizers: []string{workv1alpha2.ClusterResourceBindingControllerFinalizer}},
		Spec: *pt.BindingSpec(0, &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a")}, pt.At("a", 0)),
	}
	crb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader", UID: "cr1"}
	f := newFixture(t, objects{templates: []runtime.Object{clusterRole()}, bindings: []runtime.Object{crb}, clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a")}}, nil)
	if err := f.ctrl.reconcile(context.Background(), "crb/reader-clusterrole"); err != nil {
		t.Fatal(err)
	}
	work := names.WorkName("ClusterRole", "reader", "")
	if diff := cmp.Diff([]string{"create works karmada-es-a/" + work}, f.writes()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	w, m := f.written(t, "karmada-es-a")
	if w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != "crb1" ||
		w.Annotations[workv1alpha2.ClusterResourceBindingAnnotationKey] != "reader-clusterrole" {
		t.Errorf("Work labels %v annotations %v", w.Labels, w.Annotations)
	}
	if m.GetKind() != "ClusterRole" || m.GetName() != "reader" {
		t.Errorf("manifest %s %s", m.GetKind(), m.GetName())
	}
	succeeded := "Normal SyncWorkSucceed Sync work of clusterResourceBinding(reader-clusterrole) successful."
	if diff := cmp.Diff([]string{succeeded, succeeded}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Being deleted, its Works gone: the finalizer dropped.
	deleted := crb.DeepCopy()
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	f = newFixture(t, objects{templates: []runtime.Object{clusterRole()}, bindings: []runtime.Object{deleted}, clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a")}}, nil)
	if err := f.ctrl.reconcile(context.Background(), "crb/reader-clusterrole"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch clusterresourcebindings /reader-clusterrole"}, f.writes()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	p := f.client.Actions()[0].(clienttesting.PatchAction)
	jsonEqual(t, `{"metadata":{"finalizers":null}}`, p.GetPatch())
	if p.GetResource() != crbGVR {
		t.Errorf("patched %v", p.GetResource())
	}
}

// A failed Work deletion of a binding being deleted is CleanupWorkFailed.
func TestReconcileCleanupFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB(deleting)},
		clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a")}, works: []*workv1alpha1.Work{storedWork(t, "a", 1)}}, nil)
	f.client.PrependReactor("delete", "works", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd down")
	})
	if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err == nil {
		t.Fatal("no error")
	}
	want := []string{"Warning CleanupWorkFailed Failed to clean up the works of resourceBinding(default/nginx-deployment): etcd down"}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, want string, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad wanted JSON: %v\n%s", err, want)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, got)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("patch (-want +got):\n%s\ngot: %s", diff, got)
	}
}

func TestClaimSeen(t *testing.T) {
	pp, cpp := policyv1alpha1.PropagationPolicyPermanentIDLabel, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	for _, tc := range []struct {
		name              string
		binding, template map[string]string
		want              bool
	}{
		{name: "binding claims nothing", template: map[string]string{}, want: true},
		{name: "same PropagationPolicy", binding: map[string]string{pp: "a"}, template: map[string]string{pp: "a"}, want: true},
		{name: "same ClusterPropagationPolicy", binding: map[string]string{cpp: "c"}, template: map[string]string{cpp: "c", "x": "y"}, want: true},
		{name: "template not claimed yet", binding: map[string]string{cpp: "c"}, template: map[string]string{"x": "y"}},
		{name: "template claimed by another policy", binding: map[string]string{pp: "a"}, template: map[string]string{pp: "b"}},
		{name: "template still has the old claim", binding: map[string]string{cpp: "c"}, template: map[string]string{pp: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := claimSeen(tc.binding, tc.template); got != tc.want {
				t.Errorf("claimSeen = %v, want %v", got, tc.want)
			}
		})
	}
}

// Under a rollout strategy, a cluster the binding holds at an older
// revision gets that revision's template (from its ResourceRevision, with
// that revision's generation), the others the template as it is; every Work
// says which revision it carries. Without the revision cached the held
// cluster's Work is not written.
func TestReconcileHeldAtRevision(t *testing.T) {
	t.Parallel()
	old := nginxTemplate()
	_ = unstructured.SetNestedSlice(old.Object, []any{map[string]any{"name": "nginx", "image": "nginx:1.7.8"}}, "spec", "template", "spec", "containers")
	old.SetGeneration(2)
	raw, err := json.Marshal(rolloutplan.Content(old))
	if err != nil {
		t.Fatal(err)
	}
	oldHash, curHash := rolloutplan.Hash(old), rolloutplan.Hash(nginxTemplate())
	rev := &flotillav1alpha1.ResourceRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: names.RevisionName("nginx-deployment", oldHash)},
		Resource:   flotillav1alpha1.RolloutResource{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"},
		Binding:    "nginx-deployment", Revision: 1, Hash: oldHash, Template: runtime.RawExtension{Raw: raw},
	}
	held := func(b *workv1alpha2.ResourceBinding) {
		b.Annotations = map[string]string{flotillav1alpha1.RevisionsAnnotation: "a=" + oldHash + ",b=" + curHash}
	}
	ab := []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b")}
	image := func(m *unstructured.Unstructured) string {
		c, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
		return c[0].(map[string]any)["image"].(string)
	}

	f := newFixture(t, objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB(held)}, clusters: ab,
		revisions: []*flotillav1alpha1.ResourceRevision{rev}}, nil)
	if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err != nil {
		t.Fatal(err)
	}
	wa, ma := f.written(t, "karmada-es-a")
	wb, mb := f.written(t, "karmada-es-b")
	if image(ma) != "nginx:1.7.8" || ma.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey] != "2" || wa.Annotations[flotillav1alpha1.RevisionAnnotation] != oldHash {
		t.Errorf("held cluster a: image %s, generation %s, revision %s; want the old revision's nginx:1.7.8, 2, %s",
			image(ma), ma.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey], wa.Annotations[flotillav1alpha1.RevisionAnnotation], oldHash)
	}
	if image(mb) != "nginx:1.7.9" || wb.Annotations[flotillav1alpha1.RevisionAnnotation] != curHash {
		t.Errorf("cluster b: image %s, revision %s; want the template's nginx:1.7.9, %s", image(mb), wb.Annotations[flotillav1alpha1.RevisionAnnotation], curHash)
	}

	// A cluster the binding does not name gets the revision of "*" (a
	// strategy holding new clusters in their stage).
	f = newFixture(t, objects{templates: []runtime.Object{nginxTemplate()}, clusters: ab, revisions: []*flotillav1alpha1.ResourceRevision{rev},
		bindings: []runtime.Object{newRB(func(b *workv1alpha2.ResourceBinding) {
			b.Annotations = map[string]string{flotillav1alpha1.RevisionsAnnotation: "*=" + oldHash + ",b=" + curHash}
		})}}, nil)
	if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err != nil {
		t.Fatal(err)
	}
	if _, m := f.written(t, "karmada-es-a"); image(m) != "nginx:1.7.8" {
		t.Errorf("cluster a, not named: image %s, want the revision of *, nginx:1.7.8", image(m))
	}

	f = newFixture(t, objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB(held)}, clusters: ab}, nil)
	if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create works karmada-es-b/" + nginxWork}, f.writes()); diff != "" {
		t.Errorf("writes without the revision cached (-want +got):\n%s", diff)
	}
}

// The apply annotations of a binding go to its Works, not into the
// manifests (nor the member objects); a change of them rewrites the Works.
func TestWorksCarryApplyAnnotations(t *testing.T) {
	t.Parallel()
	ab := []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b")}
	annotated := func(b *workv1alpha2.ResourceBinding) {
		b.Annotations = map[string]string{flotillav1alpha1.ApplyModeAnnotation: "ReportOnly", flotillav1alpha1.TakeOverAnnotation: "IfNoDiff"}
	}
	f := newFixture(t, objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB(annotated)}, clusters: ab,
		works: []*workv1alpha1.Work{storedWork(t, "a", 1), storedWork(t, "b", 1)}}, nil)
	if err := f.ctrl.reconcile(context.Background(), "rb/default/nginx-deployment"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch works karmada-es-a/" + nginxWork, "patch works karmada-es-b/" + nginxWork}, f.writes()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	for _, ns := range []string{"karmada-es-a", "karmada-es-b"} {
		w, m := f.written(t, ns)
		if w.Annotations[flotillav1alpha1.ApplyModeAnnotation] != "ReportOnly" || w.Annotations[flotillav1alpha1.TakeOverAnnotation] != "IfNoDiff" {
			t.Errorf("%s: Work annotations %v, want the binding's apply annotations", ns, w.Annotations)
		}
		for _, k := range flotillav1alpha1.ApplyAnnotations {
			if _, ok := m.GetAnnotations()[k]; ok {
				t.Errorf("%s: the manifest carries %s", ns, k)
			}
		}
	}
	old, cur := newRB(), newRB(annotated)
	cur.ResourceVersion = "6"
	if !bindingChanged(old, cur) {
		t.Error("a change of the apply annotations does not queue the binding")
	}
}

// A pass queued by another event of the same change (the template's claim
// arriving, a scheduling patch) may come before the informer delivers the
// Works the last pass created: it writes nothing, and reports no failure
// (the server would refuse the creates with AlreadyExists). A Work the
// informer then deletes is created again.
func TestReconcileBeforeWorksDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, objects{templates: []runtime.Object{nginxTemplate()}, bindings: []runtime.Object{newRB()},
		clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b")}}, nil)
	const key = "rb/default/nginx-deployment"
	if err := f.ctrl.reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if got, want := f.writes(), []string{"create works karmada-es-a/" + nginxWork, "create works karmada-es-b/" + nginxWork}; !cmp.Equal(got, want) {
		t.Fatalf("first pass wrote %v, want %v", got, want)
	}
	f.events()
	f.client.ClearActions()

	// The informer has not delivered them.
	if err := f.ctrl.reconcile(context.Background(), key); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("second pass before delivery wrote %v", w)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("second pass before delivery recorded %v", ev)
	}
	if n := f.ctrl.created.Len(); n != 2 {
		t.Errorf("%d Works remembered before delivery, want 2", n)
	}

	// Delivered: forgotten.
	f.resync(t)
	for _, o := range f.works.List() {
		f.ctrl.created.Handler().OnAdd(o, false)
	}
	if n := f.ctrl.created.Len(); n != 0 {
		t.Errorf("%d Works remembered after delivery", n)
	}

	// Someone deletes the Work of b; the informer delivers the deletion.
	gone, _, err := f.works.GetByKey("karmada-es-b/" + nginxWork)
	if err != nil || gone == nil {
		t.Fatalf("Work of b not in the cache: %v", err)
	}
	if err := f.client.WorkV1alpha1().Works("karmada-es-b").Delete(context.Background(), nginxWork, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustDelete(t, f.works, gone)
	f.ctrl.created.Handler().OnDelete(gone)
	f.client.ClearActions()
	if err := f.ctrl.reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if got, want := f.writes(), []string{"create works karmada-es-b/" + nginxWork}; !cmp.Equal(got, want) {
		t.Errorf("after the deletion wrote %v, want %v", got, want)
	}
}

func mustDelete(t *testing.T, idx cache.Indexer, obj any) {
	t.Helper()
	if err := idx.Delete(obj); err != nil {
		t.Fatal(err)
	}
}
