package execution

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/member"
)

const (
	testCluster = "member1"
	testNS      = "karmada-es-member1"
	testWorkID  = "11111111-1111-1111-1111-111111111111"
)

var (
	configMapsGVR  = corev1.SchemeGroupVersion.WithResource("configmaps")
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
)

// resettable adds a no-op Reset to a static mapper.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// fixture is a controller over fake clients: flotilla-apiserver's and one
// member's dynamic client.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	karmada *karmadafake.Clientset
	dyn     *dynamicfake.FakeDynamicClient
	factory externalversions.SharedInformerFactory
	c       *Controller
	hub     *member.Hub
	m       *memberState
	events  *record.FakeRecorder
	// client is the member's client the hub reaches it with.
	client atomic.Pointer[member.Client]
}

func newFixture(t *testing.T, ready bool, works []*workv1alpha1.Work, memberObjects ...runtime.Object) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	cond := metav1.ConditionFalse
	if ready {
		cond = metav1.ConditionTrue
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: testCluster},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push},
		Status:     clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: cond}}},
	}
	objs := []runtime.Object{cluster}
	for _, w := range works {
		objs = append(objs, w)
	}
	karmada := karmadafake.NewSimpleClientset(objs...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		configMapsGVR: "ConfigMapList", deploymentsGVR: "DeploymentList",
	}, memberObjects...)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	client := &member.Client{Clientset: fake.NewClientset(), Dynamic: dyn, Mapper: resettable{mapper}}

	factory := externalversions.NewSharedInformerFactory(karmada, 0)
	clusters := factory.Cluster().V1alpha1().Clusters()
	events := record.NewFakeRecorder(100)
	f := &fixture{t: t, ctx: ctx, karmada: karmada, dyn: dyn, factory: factory, events: events}
	f.client.Store(client)
	hub := member.NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return clusters.Lister().List(labels.Everything()) },
		func(*clusterv1alpha1.Cluster) (*member.Client, error) { return f.client.Load(), nil })
	c, err := New(factory.Work().V1alpha1().Works(), clusters, karmada, nil, hub,
		interpreter.NewNative(), events, Options{CacheSyncTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.memberClient = func(*clusterv1alpha1.Cluster) (*member.Client, error) { return f.client.Load(), nil }
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	c.useHub(ctx)
	go hub.Run(ctx)
	if ready {
		// The hub runs a Ready member's informers, as it would the
		// members of the process.
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			_, ok := hub.Member(testCluster)
			return ok, nil
		}); err != nil {
			t.Fatal("the hub never ran the member's informers")
		}
	}
	f.c, f.hub, f.m = c, hub, c.member(testCluster)
	t.Cleanup(f.m.stop)
	return f
}

// reconcile reconciles a Work and waits until the Work informer has seen
// what the reconcile wrote.
func (f *fixture) reconcile(name string) error {
	f.t.Helper()
	err := f.c.reconcile(f.ctx, f.m, testNS+"/"+name)
	f.waitWorkCache(name)
	return err
}

func (f *fixture) waitWorkCache(name string) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		live, err := f.karmada.WorkV1alpha1().Works(testNS).Get(ctx, name, metav1.GetOptions{})
		cached, cerr := f.c.works.Works(testNS).Get(name)
		if err != nil {
			return cerr != nil, nil // deleted
		}
		return cerr == nil && reflect.DeepEqual(live, cached), nil
	})
	if err != nil {
		f.t.Fatalf("the Work informer never caught up with %s", name)
	}
}

// waitMemberCache waits until the member informer on gvr holds n objects.
func (f *fixture) waitMemberCache(gvr schema.GroupVersionResource, n int) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		inf, ok := f.hub.Informer(testCluster, gvr)
		return ok && len(inf.GetStore().List()) == n, nil
	})
	if err != nil {
		f.t.Fatalf("the member informer on %s never held %d objects", gvr, n)
	}
}

// writes returns the member writes since the last call, as "verb resource/name".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.dyn.Actions() {
		name := ""
		switch a := a.(type) {
		case clienttesting.CreateAction:
			name = a.GetObject().(*unstructured.Unstructured).GetName()
		case clienttesting.PatchAction:
			name = a.GetName()
		case clienttesting.DeleteAction:
			name = a.GetName()
		}
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+name)
		}
	}
	f.dyn.ClearActions()
	return out
}

func (f *fixture) work(name string) *workv1alpha1.Work {
	f.t.Helper()
	w, err := f.karmada.WorkV1alpha1().Works(testNS).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}

func (f *fixture) member(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	f.t.Helper()
	u, err := f.dyn.Resource(gvr).Namespace("default").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// configMap is a manifest as the binding controller writes it.
func configMap(name string, data map[string]string, annotations map[string]string) map[string]any {
	a := map[string]any{
		"work.karmada.io/name": name, "work.karmada.io/namespace": testNS,
		"resourcetemplate.karmada.io/uid":                 "template-uid",
		"resourcetemplate.karmada.io/managed-annotations": "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,resourcetemplate.karmada.io/uid,work.karmada.io/name,work.karmada.io/namespace",
		"resourcetemplate.karmada.io/managed-labels":      "app,karmada.io/managed,work.karmada.io/permanent-id",
	}
	for k, v := range annotations {
		a[k] = v
	}
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "annotations": a,
			"labels": map[string]any{"app": name, "karmada.io/managed": "true", "work.karmada.io/permanent-id": testWorkID},
		},
		"data": d,
	}
}

func newWork(t *testing.T, name string, manifests ...map[string]any) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: testNS, UID: "work-uid-" + "name", Generation: 1,
		Labels:     map[string]string{"work.karmada.io/permanent-id": testWorkID},
		Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer},
	}}
	for _, m := range manifests {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}

func memberObject(m map[string]any) *unstructured.Unstructured {
	return (&unstructured.Unstructured{Object: m}).DeepCopy()
}

func appliedCondition(t *testing.T, w *workv1alpha1.Work) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
	if c == nil {
		t.Fatalf("no Applied condition: %+v", w.Status.Conditions)
	}
	return c
}

func TestApplyCreatesThenSkips(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true, []*workv1alpha1.Work{newWork(t, "cm", configMap("cm", map[string]string{"k": "v"}, nil))})
	if err := f.reconcile("cm"); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); !reflect.DeepEqual(got, []string{"create configmaps/cm"}) {
		t.Errorf("first apply wrote %v", got)
	}
	w := f.work("cm")
	if c := appliedCondition(t, w); c.Status != metav1.ConditionTrue || c.Reason != "AppliedSuccessful" {
		t.Errorf("Applied %+v", c)
	}
	if d := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching); d == nil || d.Status != metav1.ConditionTrue {
		t.Errorf("Dispatching %+v", d)
	}
	if len(w.Status.ManifestStatuses) != 1 || w.Status.ManifestStatuses[0].Identifier != (workv1alpha1.ResourceIdentifier{
		Ordinal: 0, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "cm"}) ||
		w.Status.ManifestStatuses[0].Health != workv1alpha1.ResourceHealthy {
		t.Errorf("manifestStatuses %+v", w.Status.ManifestStatuses)
	}
	if got := drain(f.events); !containsAll(got, "SyncSucceed Successfully applied resource(default/cm) to cluster member1",
		"SyncSucceed Sync work(karmada-es-member1/cm) to cluster(member1) successful.", "WorkDispatching") {
		t.Errorf("events %q", got)
	}

	f.waitMemberCache(configMapsGVR, 1)
	if err := f.reconcile("cm"); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("second apply wrote %v", got)
	}
	if got := drain(f.events); len(got) != 0 {
		t.Errorf("a no-op apply recorded events %q", got)
	}
}

func TestRestartWritesNothing(t *testing.T) {
	t.Parallel()
	// The member holds what a previous run applied, with member-owned
	// additions; the controller has no records.
	applied := memberObject(configMap("cm", map[string]string{"k": "v"}, nil))
	applied.SetResourceVersion("12")
	applied.SetFinalizers([]string{"member.io/guard"})
	labels := applied.GetLabels()
	labels["member-only"] = "yes"
	applied.SetLabels(labels)
	f := newFixture(t, true, []*workv1alpha1.Work{newWork(t, "cm", configMap("cm", map[string]string{"k": "v"}, nil))}, applied)
	if err := f.reconcile("cm"); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("restart wrote %v", got)
	}
	if c := appliedCondition(t, f.work("cm")); c.Status != metav1.ConditionTrue {
		t.Errorf("Applied %+v", c)
	}
}

func TestApplyUpdatesDriftAndKeepsMemberFields(t *testing.T) {
	t.Parallel()
	drifted := memberObject(configMap("cm", map[string]string{"k": "edited"}, nil))
	drifted.SetFinalizers([]string{"member.io/guard"})
	labels := drifted.GetLabels()
	labels["member-only"] = "yes"
	drifted.SetLabels(labels)
	f := newFixture(t, true, []*workv1alpha1.Work{newWork(t, "cm", configMap("cm", map[string]string{"k": "v"}, nil))}, drifted)
	if err := f.reconcile("cm"); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); !reflect.DeepEqual(got, []string{"update configmaps/cm"}) {
		t.Errorf("writes %v", got)
	}
	got := f.member(configMapsGVR, "cm")
	if data, _, _ := unstructured.NestedString(got.Object, "data", "k"); data != "v" {
		t.Errorf("data.k %q, want the manifest's", data)
	}
	if got.GetLabels()["member-only"] != "yes" || !reflect.DeepEqual(got.GetFinalizers(), []string{"member.io/guard"}) {
		t.Errorf("member-owned metadata lost: labels %v finalizers %v", got.GetLabels(), got.GetFinalizers())
	}
}

func TestConflictResolution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		annotation map[string]string
		wantWrites []string
		wantData   string
	}{
		{"abort by default", nil, []string{"create configmaps/cm"}, "theirs"},
		{"abort", map[string]string{"work.karmada.io/conflict-resolution": "abort"}, []string{"create configmaps/cm"}, "theirs"},
		{"overwrite", map[string]string{"work.karmada.io/conflict-resolution": "overwrite"}, []string{"create configmaps/cm", "update configmaps/cm"}, "ours"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			theirs := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "cm", "namespace": "default", "labels": map[string]any{"owner": "someone"}},
				"data":     map[string]any{"k": "theirs"},
			}}
			f := newFixture(t, true, []*workv1alpha1.Work{newWork(t, "cm", configMap("cm", map[string]string{"k": "ours"}, tc.annotation))}, theirs)
			// The create is tried first (no probe before it) and refused, and
			// not always with AlreadyExists: like a NodePort Service whose
			// port the existing object holds. The existing object is then
			// found with a GET and handled as someone else's.
			f.dyn.PrependReactor("create", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm",
					field.ErrorList{field.Invalid(field.NewPath("spec", "ports"), 30080, "provided port is already allocated")})
			})
			err := f.reconcile("cm")
			if got := f.writes(); !reflect.DeepEqual(got, tc.wantWrites) {
				t.Errorf("writes %v, want %v", got, tc.wantWrites)
			}
			got := f.member(configMapsGVR, "cm")
			if data, _, _ := unstructured.NestedString(got.Object, "data", "k"); data != tc.wantData {
				t.Errorf("data.k %q, want %q", data, tc.wantData)
			}
			c := appliedCondition(t, f.work("cm"))
			if tc.wantData == "theirs" {
				if err == nil || c.Status != metav1.ConditionFalse || c.Reason != "AppliedFailed" ||
					!strings.Contains(c.Message, "already exists in the cluster member1") || len(f.work("cm").Status.ManifestStatuses) != 0 {
					t.Errorf("err %v, Applied %+v", err, c)
				}
				return
			}
			if err != nil || c.Status != metav1.ConditionTrue || got.GetLabels()["owner"] != "someone" || got.GetLabels()["karmada.io/managed"] != "true" {
				t.Errorf("err %v, Applied %+v, labels %v", err, c, got.GetLabels())
			}
			if got.GetAnnotations()[workv1alpha2.AdoptedAnnotation] != "true" {
				t.Errorf("taken-over object not marked adopted: annotations %v", got.GetAnnotations())
			}
			// Applied again, it stays adopted and is not written.
			if err := f.reconcile("cm"); err != nil {
				t.Fatal(err)
			}
			if w := f.writes(); len(w) != 0 || f.member(configMapsGVR, "cm").GetAnnotations()[workv1alpha2.AdoptedAnnotation] != "true" {
				t.Errorf("second apply wrote %v", w)
			}
		})
	}
}

func TestSuspendedAndNotReady(t *testing.T) {
	t.Parallel()
	suspended := newWork(t, "cm", configMap("cm", nil, nil))
	suspended.Spec.SuspendDispatching = ptr.To(true)
	f := newFixture(t, true, []*workv1alpha1.Work{suspended})
	if err := f.reconcile("cm"); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("a suspended Work wrote %v", got)
	}
	w := f.work("cm")
	if d := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching); d == nil || d.Status != metav1.ConditionFalse || d.Reason != "SuspendDispatching" {
		t.Errorf("Dispatching %+v", d)
	}
	if meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied) != nil {
		t.Error("a suspended Work has an Applied condition")
	}

	g := newFixture(t, false, []*workv1alpha1.Work{newWork(t, "cm", configMap("cm", nil, nil))})
	if err := g.reconcile("cm"); err != nil {
		t.Fatal(err)
	}
	if got := g.writes(); len(got) != 0 {
		t.Errorf("a Work of a cluster not Ready wrote %v", got)
	}
}

func TestDeletion(t *testing.T) {
	t.Parallel()
	ours := memberObject(configMap("cm", nil, nil))
	other := memberObject(configMap("other", nil, nil))
	labels := other.GetLabels()
	labels["work.karmada.io/permanent-id"] = "someone-else"
	other.SetLabels(labels)
	unmanaged := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "theirs", "namespace": "default"}}}
	// Taken over with conflict resolution overwrite: released, never deleted.
	adopted := memberObject(configMap("adopted", nil, nil))
	adoptedAnnotations := adopted.GetAnnotations()
	adoptedAnnotations[workv1alpha2.AdoptedAnnotation] = "true"
	adopted.SetAnnotations(adoptedAnnotations)
	for _, preserve := range []bool{false, true} {
		w := newWork(t, "cm", configMap("cm", nil, nil), configMap("other", nil, nil), configMap("theirs", nil, nil), configMap("adopted", nil, nil))
		w.DeletionTimestamp = ptr.To(metav1.Now())
		w.Spec.PreserveResourcesOnDeletion = ptr.To(preserve)
		f := newFixture(t, true, []*workv1alpha1.Work{w}, ours.DeepCopy(), other.DeepCopy(), unmanaged.DeepCopy(), adopted.DeepCopy())
		if err := f.reconcile("cm"); err != nil {
			t.Fatal(err)
		}
		want := []string{"delete configmaps/cm", "patch configmaps/adopted"}
		if preserve {
			want = []string{"patch configmaps/cm", "patch configmaps/adopted"}
		}
		if got := f.member(configMapsGVR, "adopted"); len(got.GetAnnotations()) != 0 || got.GetLabels()["karmada.io/managed"] != "" {
			t.Errorf("preserve=%v: adopted object not released: labels %v annotations %v", preserve, got.GetLabels(), got.GetAnnotations())
		}
		if got := f.writes(); !reflect.DeepEqual(got, want) {
			t.Errorf("preserve=%v: writes %v, want %v (only the Work's own object)", preserve, got, want)
		}
		if preserve {
			got := f.member(configMapsGVR, "cm")
			if len(got.GetAnnotations()) != 0 || !reflect.DeepEqual(got.GetLabels(), map[string]string{"app": "cm"}) {
				t.Errorf("released object keeps labels %v annotations %v", got.GetLabels(), got.GetAnnotations())
			}
		}
		if fin := f.work("cm").Finalizers; len(fin) != 0 {
			t.Errorf("preserve=%v: finalizers %v", preserve, fin)
		}
	}
}

func TestManifestStatusReflectsDeployment(t *testing.T) {
	t.Parallel()
	manifest := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default",
			"labels":      map[string]any{"karmada.io/managed": "true", "work.karmada.io/permanent-id": testWorkID},
			"annotations": map[string]any{"work.karmada.io/name": "web", "work.karmada.io/namespace": testNS}},
		"spec": map[string]any{"replicas": int64(2)},
	}
	applied := memberObject(manifest)
	applied.SetGeneration(1)
	_ = unstructured.SetNestedMap(applied.Object, map[string]any{
		"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(2),
		"readyReplicas": int64(2), "availableReplicas": int64(2)}, "status")
	f := newFixture(t, true, []*workv1alpha1.Work{newWork(t, "web", manifest)}, applied)
	if err := f.reconcile("web"); err != nil {
		t.Fatal(err)
	}
	ms := f.work("web").Status.ManifestStatuses
	if len(ms) != 1 || ms[0].Health != workv1alpha1.ResourceHealthy || ms[0].Identifier.Resource != "deployments" || ms[0].Identifier.Group != "apps" {
		t.Fatalf("manifestStatuses %+v", ms)
	}
	var status map[string]any
	if err := json.Unmarshal(ms[0].Status.Raw, &status); err != nil || status["readyReplicas"] != float64(2) {
		t.Errorf("status %s", ms[0].Status.Raw)
	}
	// An unchanged status is not written again.
	f.karmada.ClearActions()
	if err := f.reconcile("web"); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.karmada.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("unchanged status written: %v", a)
		}
	}
}

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func containsAll(events []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, e := range events {
			if strings.Contains(e, w) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// A Work reconciled again before the Work informer delivered the status
// write (a member event arrives first) is not written again.
func TestStaleWorkCacheWritesStatusOnce(t *testing.T) {
	t.Parallel()
	work := newWork(t, "cm", configMap("cm", map[string]string{"k": "v"}, nil))
	work.ResourceVersion = "5"
	f := newFixture(t, true, []*workv1alpha1.Work{work})
	// The cache stays at the Work as first seen.
	stale := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := stale.Add(work.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	f.c.works = worklisters.NewWorkLister(stale)
	for range 3 {
		if err := f.c.reconcile(f.ctx, f.m, testNS+"/cm"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // apart, so transition times would differ
	}
	n := 0
	for _, a := range f.karmada.Actions() {
		if a.GetVerb() == "patch" && a.GetSubresource() == "status" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d status writes over a stale cache, want 1", n)
	}
	if c := appliedCondition(t, f.work("cm")); c.Status != metav1.ConditionTrue {
		t.Errorf("Applied %+v", c)
	}
}
