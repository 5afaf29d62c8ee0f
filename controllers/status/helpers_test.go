package status

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
)

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	widgetGVK     = schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
	widgetGVR     = schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "widgets"}
	fixedNow      = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// fixture is a controller over fake clients whose informer stores are fed
// directly (the informers are never started).
type fixture struct {
	c        *Controller
	karmada  *fake.Clientset
	host     *dynamicfake.FakeDynamicClient
	recorder *record.FakeRecorder
	factory  externalversions.SharedInformerFactory
}

// newFixture returns a controller knowing objs (bindings and Works) and
// the host objects; the Widget kind has no AggregateStatus hook unless
// interp says so.
func newFixture(t *testing.T, interp interpreter.Interpreter, objs []runtime.Object, hostObjs ...runtime.Object) *fixture {
	t.Helper()
	cs := fake.NewClientset(objs...)
	factory := externalversions.NewSharedInformerFactory(cs, 0)
	works := factory.Work().V1alpha1().Works()
	rbs := factory.Work().V1alpha2().ResourceBindings()
	crbs := factory.Work().V1alpha2().ClusterResourceBindings()
	host := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deploymentGVR: "DeploymentList", widgetGVR: "WidgetList"}, hostObjs...)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
	mapper.Add(widgetGVK, meta.RESTScopeRoot)
	recorder := record.NewFakeRecorder(100)
	if interp == nil {
		interp = interpreter.NewNative()
	}
	clusters := factory.Cluster().V1alpha1().Clusters()
	c, err := New(works, clusters, rbs, crbs, cs, host, mapper, interp, recorder)
	if err != nil {
		t.Fatal(err)
	}
	// m1 and m2 are Ready; m3 is not.
	for name, ready := range map[string]metav1.ConditionStatus{"m1": metav1.ConditionTrue, "m2": metav1.ConditionTrue, "m3": metav1.ConditionFalse} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready}}}}
		if err := clusters.Informer().GetIndexer().Add(cl); err != nil {
			t.Fatal(err)
		}
	}
	c.now = func() time.Time { return fixedNow }
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *workv1alpha1.Work:
			err = works.Informer().GetIndexer().Add(o)
		case *workv1alpha2.ResourceBinding:
			err = rbs.Informer().GetIndexer().Add(o)
		case *workv1alpha2.ClusterResourceBinding:
			err = crbs.Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cs.ClearActions()
	return &fixture{c: c, karmada: cs, host: host, recorder: recorder, factory: factory}
}

// statusPatches counts the patches of binding status sent so far.
func (f *fixture) statusPatches() int {
	n := 0
	for _, a := range f.karmada.Actions() {
		if a.GetVerb() == "patch" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// templateWrites counts the patches of templates sent so far.
func (f *fixture) templateWrites() int {
	n := 0
	for _, a := range f.host.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

func (f *fixture) events() []string { return workertest.Events(f.recorder.Events) }

func rawJSON(t *testing.T, v any) *runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: b}
}

// deployment is a Deployment template on the host.
func deployment(generation int64) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(deploymentGVK)
	obj.SetNamespace("default")
	obj.SetName("nginx")
	obj.SetUID("uid-nginx")
	obj.SetGeneration(generation)
	obj.SetResourceVersion("7")
	_ = unstructured.SetNestedField(obj.Object, int64(4), "spec", "replicas")
	return obj
}

// rb is a ResourceBinding of the nginx Deployment scheduled to clusters,
// with a Scheduled condition.
func rb(clusters ...string) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-deployment", ResourceVersion: "3",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb-id"}},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{
			APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", UID: "uid-nginx"}},
		Status: workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled,
			Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess, Message: "scheduled", LastTransitionTime: metav1.NewTime(fixedNow.Add(-time.Hour))}}},
	}
	for _, c := range clusters {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 2})
	}
	return b
}

// deploymentStatus is the reflected status of a member Deployment with
// ready of replicas ready, caught up with template generation 1.
func deploymentStatus(t *testing.T, replicas, ready int64) *runtime.RawExtension {
	return rawJSON(t, map[string]any{"replicas": replicas, "readyReplicas": ready, "updatedReplicas": replicas,
		"availableReplicas": ready, "observedGeneration": 1, "generation": 1, "resourceTemplateGeneration": 1})
}

// work is the Work of the nginx binding in cluster; applied is the Applied
// condition ("" for none) and status the reflected status of the template.
func work(t *testing.T, cluster string, applied metav1.ConditionStatus, message string, status *runtime.RawExtension) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespacePrefix + cluster, Name: "nginx-687f7fb96f",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb-id"},
			Annotations: map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: "default",
				workv1alpha2.ResourceBindingNameAnnotationKey: "nginx-deployment"}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: *rawJSON(t, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"namespace": "default", "name": "nginx"}})},
		}}},
	}
	if applied != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: applied, Reason: "r", Message: message}}
	}
	if status != nil {
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
			Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment",
				Resource: "deployments", Namespace: "default", Name: "nginx"},
			Status: status, Health: workv1alpha1.ResourceHealthy,
		}}
	}
	return w
}
