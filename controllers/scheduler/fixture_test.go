package scheduler

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// The controller-level fixture: listers over indexers, the fake clientset,
// a fake recorder, a real queue that records delayed adds, a fixed clock.

var (
	fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rbGVR    = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}
	crbGVR   = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "clusterresourcebindings"}
)

const fixedNowJSON = "2026-01-02T03:04:05Z"

// s2Placement is the weighted division of samples/nginx-propagation.yaml:
// clusters a and b, static weights 1:1.
func s2Placement() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{
		ClusterAffinity:   pt.OnClusters("a", "b"),
		ReplicaScheduling: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")), pt.Weight(1, pt.OnClusters("b"))),
	}
}

// s2PlacementJSON is s2Placement as the applied-placement annotation holds it.
const s2PlacementJSON = `{"clusterAffinity":{"clusterNames":["a","b"]},"replicaScheduling":{"replicaSchedulingType":"Divided",` +
	`"replicaDivisionPreference":"Weighted","weightPreference":{"staticWeightList":[{"targetCluster":{"clusterNames":["a"]},"weight":1},` +
	`{"targetCluster":{"clusterNames":["b"]},"weight":1}]}}}`

// fixtureClusters are a and b, each with room for 10 pods.
func fixtureClusters() []*clusterv1alpha1.Cluster {
	return []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("10"))}
}

// newRB is a ResourceBinding "default/web" at generation 3,
// resourceVersion 7, for 2 replicas under s2Placement, never scheduled.
func newRB(mods ...func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Generation: 3, ResourceVersion: "7"},
		Spec:       *pt.BindingSpec(2, s2Placement()),
	}
	for _, m := range mods {
		m(b)
	}
	return b
}

func newCRB(mods ...func(*workv1alpha2.ClusterResourceBinding)) *workv1alpha2.ClusterResourceBinding {
	b := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 3, ResourceVersion: "7"},
		Spec:       *pt.BindingSpec(2, s2Placement()),
	}
	for _, m := range mods {
		m(b)
	}
	return b
}

// scheduledRB holds s2Placement's decision for generation 3: nothing to write.
func scheduledRB(b *workv1alpha2.ResourceBinding) {
	b.Annotations = map[string]string{workv1alpha2.AppliedPlacementAnnotation: s2PlacementJSON}
	b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)}
	last := metav1.NewTime(fixedNow.Add(-time.Hour))
	b.Status = workv1alpha2.ResourceBindingStatus{
		SchedulerObservedGeneration: 3,
		LastScheduledTime:           &last,
		Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, ObservedGeneration: 3,
			LastTransitionTime: last, Reason: workv1alpha2.BindingReasonSuccess, Message: "Binding has been scheduled successfully."}},
	}
}

// The queue double of every controller test.
type (
	delayedKey     = workertest.Delayed
	recordingQueue = workertest.Queue
)

type fixture struct {
	ctrl                          *Controller
	client                        *fake.Clientset
	recorder                      *record.FakeRecorder
	queue                         *recordingQueue
	rbs, crbs, clustersI, quotasI cache.Indexer
}

func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

func newFixture(t *testing.T, clusters []*clusterv1alpha1.Cluster, bindings ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{rbs: newIndexer(), crbs: newIndexer(), clustersI: newIndexer(), quotasI: newIndexer(), recorder: record.NewFakeRecorder(32)}
	for _, c := range clusters {
		if err := f.clustersI.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	var stored []runtime.Object
	for _, b := range bindings {
		f.store(t, b)
		stored = append(stored, b.DeepCopyObject())
	}
	f.client = fake.NewSimpleClientset(stored...)
	f.client.PrependReactor("patch", "*", f.mergePatch)
	q := worker.NewQueue(ControllerName)
	t.Cleanup(q.ShutDown)
	f.queue = &recordingQueue{TypedRateLimitingInterface: q}
	f.ctrl = &Controller{
		rbs:      worklisters.NewResourceBindingLister(f.rbs),
		crbs:     worklisters.NewClusterResourceBindingLister(f.crbs),
		clusters: clusterlisters.NewClusterLister(f.clustersI),
		quotas:   policylisters.NewFederatedResourceQuotaLister(f.quotasI),
		client:   f.client,
		recorder: f.recorder,
		queue:    f.queue,
		now:      func() time.Time { return fixedNow },
	}
	return f
}

// mergePatch applies a JSON merge patch as flotilla-apiserver does (the
// fake tracker does none of it): a resourceVersion in the patch is a
// precondition; the binding keeps its stored status and the status
// subresource keeps everything but status; the generation follows the
// spec; every write makes a new resourceVersion.
func (f *fixture) mergePatch(a clienttesting.Action) (bool, runtime.Object, error) {
	p, ok := a.(clienttesting.PatchAction)
	if !ok || p.GetPatchType() != types.MergePatchType {
		return false, nil, nil
	}
	old, err := f.client.Tracker().Get(p.GetResource(), p.GetNamespace(), p.GetName())
	if err != nil {
		return true, nil, err
	}
	oldMeta := old.(metav1.Object)
	var precondition struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(p.GetPatch(), &precondition); err != nil {
		return true, nil, err
	}
	if rv := precondition.Metadata.ResourceVersion; rv != "" && rv != oldMeta.GetResourceVersion() {
		return true, nil, apierrors.NewConflict(p.GetResource().GroupResource(), p.GetName(),
			fmt.Errorf("resourceVersion %s, stored %s", rv, oldMeta.GetResourceVersion()))
	}
	before, err := json.Marshal(old)
	if err != nil {
		return true, nil, err
	}
	merged, err := jsonpatch.MergePatch(before, p.GetPatch())
	if err != nil {
		return true, nil, err
	}
	var was, is map[string]any
	if err := json.Unmarshal(before, &was); err != nil {
		return true, nil, err
	}
	if err := json.Unmarshal(merged, &is); err != nil {
		return true, nil, err
	}
	switch p.GetSubresource() {
	case "":
		is["status"] = was["status"]
	case "status":
		was["status"], is = is["status"], was
	case workv1alpha2.SchedulingSubresource:
		// The stored spec but for its clusters.
		spec, _ := was["spec"].(map[string]any)
		spec = maps.Clone(spec)
		if c, ok := is["spec"].(map[string]any)["clusters"]; ok {
			spec["clusters"] = c
		} else {
			delete(spec, "clusters")
		}
		is["spec"] = spec
	default:
		return true, nil, fmt.Errorf("no subresource %q", p.GetSubresource())
	}
	after, err := json.Marshal(is)
	if err != nil {
		return true, nil, err
	}
	obj := reflect.New(reflect.TypeOf(old).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(after, obj); err != nil {
		return true, nil, err
	}
	m := obj.(metav1.Object)
	if !reflect.DeepEqual(was["spec"], is["spec"]) {
		m.SetGeneration(oldMeta.GetGeneration() + 1)
		if p.GetSubresource() == workv1alpha2.SchedulingSubresource {
			// A decision for the stored generation observes the one its
			// result made.
			observeOwnResult(obj, oldMeta.GetGeneration())
		}
	}
	rv, _ := strconv.Atoi(oldMeta.GetResourceVersion())
	m.SetResourceVersion(strconv.Itoa(rv + 1))
	if err := f.client.Tracker().Update(p.GetResource(), obj, p.GetNamespace()); err != nil {
		return true, nil, err
	}
	return true, obj, nil
}

// observeOwnResult moves the generations a binding's status observes from
// was to was+1, as the scheduling subresource does when its clusters change.
func observeOwnResult(obj runtime.Object, was int64) {
	status := bindingOf(obj).status
	if status.SchedulerObservedGeneration == was {
		status.SchedulerObservedGeneration = was + 1
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c != nil && c.ObservedGeneration == was {
		c.ObservedGeneration = was + 1
	}
}

// store puts a binding into the informer cache.
func (f *fixture) store(t *testing.T, obj runtime.Object) {
	t.Helper()
	idx := f.rbs
	if _, ok := obj.(*workv1alpha2.ClusterResourceBinding); ok {
		idx = f.crbs
	}
	if err := idx.Update(obj); err != nil {
		t.Fatal(err)
	}
}

// resync copies the stored binding into the cache, as the informer would,
// and forgets the actions so far.
func (f *fixture) resync(t *testing.T, gvr schema.GroupVersionResource, ns, name string) runtime.Object {
	t.Helper()
	obj, err := f.client.Tracker().Get(gvr, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	f.store(t, obj)
	f.client.ClearActions()
	return obj
}

func (f *fixture) events() []string { return workertest.Events(f.recorder.Events) }

// patches returns the patch actions, failing on any other action.
func (f *fixture) patches(t *testing.T) []clienttesting.PatchAction {
	t.Helper()
	var out []clienttesting.PatchAction
	for _, a := range f.client.Actions() {
		p, ok := a.(clienttesting.PatchAction)
		if !ok {
			t.Fatalf("unexpected action %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		out = append(out, p)
	}
	return out
}

// writes returns the bodies of the actions, which must be merge patches
// of gvr ns/name, the first of subresources[0] ("" for the binding
// itself), the next of subresources[1], and so on.
func (f *fixture) writes(t *testing.T, gvr schema.GroupVersionResource, ns, name string, subresources ...string) [][]byte {
	t.Helper()
	ps := f.patches(t)
	got := make([]string, len(ps))
	bodies := make([][]byte, len(ps))
	for i, p := range ps {
		got[i], bodies[i] = p.GetSubresource(), p.GetPatch()
		if p.GetResource() != gvr || p.GetNamespace() != ns || p.GetName() != name {
			t.Errorf("patched %v %s/%s, want %v %s/%s", p.GetResource(), p.GetNamespace(), p.GetName(), gvr, ns, name)
		}
		if p.GetPatchType() != types.MergePatchType {
			t.Errorf("patch type %s, want a merge patch", p.GetPatchType())
		}
	}
	if !slices.Equal(got, subresources) {
		t.Fatalf("wrote the subresources %q, want %q", got, subresources)
	}
	return bodies
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

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
