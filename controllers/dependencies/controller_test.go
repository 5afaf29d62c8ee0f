package dependencies

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/member"
)

const testNS = "ns"

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// resettable adds a no-op Reset to a static mapper.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// fixture is a controller over fake clients: the binding lister is fed
// directly; Deployments are read from a started template informer, the
// dependencies from the host's dynamic client.
type fixture struct {
	c        *Controller
	karmada  *fake.Clientset
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, bindings []*workv1alpha2.ResourceBinding, host ...runtime.Object) *fixture {
	t.Helper()
	objs := make([]runtime.Object, 0, len(bindings))
	for _, b := range bindings {
		objs = append(objs, b)
	}
	cs := fake.NewClientset(objs...)
	factory := externalversions.NewSharedInformerFactory(cs, 0)
	rbs := factory.Work().V1alpha2().ResourceBindings()
	for _, b := range bindings {
		if err := rbs.Informer().GetIndexer().Add(b); err != nil {
			t.Fatal(err)
		}
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
	for _, kind := range []string{"ConfigMap", "Secret", "ServiceAccount"} {
		mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: kind}, meta.RESTScopeNamespace)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deploymentGVR: "DeploymentList"}, host...)
	tmpl := templates.New(dyn, resettable{mapper})
	recorder := record.NewFakeRecorder(100)
	c, err := New(tmpl, rbs, cs, interpreter.NewNative(), recorder)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tmpl.Ensure(ctx, map[schema.GroupVersionKind]bool{deploymentGVK: true})
	cs.ClearActions()
	return &fixture{c: c, karmada: cs, recorder: recorder}
}

func (f *fixture) events() []string { return workertest.Events(f.recorder.Events) }

func (f *fixture) binding(t *testing.T, name string) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb, err := f.karmada.WorkV1alpha2().ResourceBindings(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

// deployment is a Deployment template whose pod spec is spec.
func deployment(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": testNS, "uid": name + "-uid", "generation": int64(1), "resourceVersion": "1"},
		"spec":     map[string]any{"template": map[string]any{"spec": spec}},
	}}
}

func object(kind, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": testNS, "uid": name + "-uid"},
	}}
}

func configMapVolume(name string) map[string]any {
	return map[string]any{"name": name, "configMap": map[string]any{"name": name}}
}

// requirerBinding is the binding of Deployment name, propagating its
// dependencies to m1, claimed by a policy unless unclaimed.
func requirerBinding(name string, cr policyv1alpha1.ConflictResolution, preserve, unclaimed bool) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-deployment", Namespace: testNS, Generation: 1,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: name + "-id", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-" + name}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:      workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: testNS, Name: name, UID: "uid"},
			PropagateDeps: true, ConflictResolution: cr, PreserveResourcesOnDeletion: ptr.To(preserve),
			Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
		},
	}
	if unclaimed {
		delete(rb.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
	}
	return rb
}

// attachedBinding is the attached binding of kind/name required by the
// given Deployments' bindings.
func attachedBinding(kind, name string, cr policyv1alpha1.ConflictResolution, preserve bool, requiredBy ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + strings.ToLower(kind), Namespace: testNS, Labels: map[string]string{}, ResourceVersion: "7"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:           workv1alpha2.ObjectReference{APIVersion: "v1", Kind: kind, Namespace: testNS, Name: name},
			ConflictResolution: cr, PreserveResourcesOnDeletion: ptr.To(preserve),
		},
	}
	for _, r := range requiredBy {
		rb.Labels[DependedByLabel(testNS, r+"-deployment")] = r + "-id"
		rb.Spec.RequiredBy = append(rb.Spec.RequiredBy, workv1alpha2.BindingSnapshot{Namespace: testNS, Name: r + "-deployment",
			Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}}})
	}
	return rb
}

func requiredByNames(rb *workv1alpha2.ResourceBinding) []string {
	var out []string
	for _, s := range rb.Spec.RequiredBy {
		out = append(out, s.Name)
	}
	return out
}

// TestReconcileFollowsTemplate: a template that no
// longer refers to a ServiceAccount or a Secret leaves their requiredBy
// and depended-by label; an attached binding nobody requires any more is
// deleted; what the template still refers to stays.
func TestReconcileFollowsTemplate(t *testing.T) {
	t.Parallel()
	app := requirerBinding("app", policyv1alpha1.ConflictAbort, false, false)
	other := requirerBinding("other", policyv1alpha1.ConflictAbort, false, false)
	// The template had serviceAccountName sa1 and volumes cm and sec; now
	// it has a new service account (not created yet) and only cm.
	tmpl := deployment("app", map[string]any{"serviceAccountName": "sa2", "volumes": []any{configMapVolume("cm")}})
	f := newFixture(t, []*workv1alpha2.ResourceBinding{
		app, other,
		attachedBinding("ServiceAccount", "sa1", policyv1alpha1.ConflictAbort, false, "app"),
		attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictAbort, false, "app"),
		attachedBinding("Secret", "sec", policyv1alpha1.ConflictAbort, false, "app", "other"),
	}, tmpl, object("ServiceAccount", "sa1"), object("ConfigMap", "cm"), object("Secret", "sec"))

	if err := f.c.reconcile(context.Background(), testNS+"/app-deployment"); err != nil {
		t.Fatal(err)
	}
	if rb := f.binding(t, "sa1-serviceaccount"); rb != nil {
		t.Errorf("the attached binding of sa1, required by nobody, still exists: requiredBy %v", requiredByNames(rb))
	}
	if rb := f.binding(t, "cm-configmap"); rb == nil || !slices.Equal(requiredByNames(rb), []string{"app-deployment"}) {
		t.Errorf("the attached binding of cm, still referred to, changed: %+v", rb)
	}
	sec := f.binding(t, "sec-secret")
	if sec == nil {
		t.Fatal("the attached binding of sec, still required by other, was deleted")
	}
	if got := requiredByNames(sec); !slices.Equal(got, []string{"other-deployment"}) {
		t.Errorf("sec requiredBy = %v, want only other-deployment", got)
	}
	if _, ok := sec.Labels[DependedByLabel(testNS, "app-deployment")]; ok {
		t.Errorf("sec keeps app's depended-by label: %v", sec.Labels)
	}
	if _, ok := sec.Labels[DependedByLabel(testNS, "other-deployment")]; !ok {
		t.Errorf("sec lost other's depended-by label: %v", sec.Labels)
	}
}

// TestTemplateKey: a template's own change syncs its
// binding's dependencies again, even when the binding's spec did not
// change; status-only updates and bindings without dependencies do not.
func TestTemplateKey(t *testing.T) {
	t.Parallel()
	plain := requirerBinding("plain", policyv1alpha1.ConflictAbort, false, false)
	plain.Spec.PropagateDeps = false
	formerly := requirerBinding("formerly", policyv1alpha1.ConflictAbort, false, false)
	formerly.Spec.PropagateDeps = false
	formerly.Annotations = map[string]string{workv1alpha2.BindingDependenciesAnnotationKey: `[{"kind":"ConfigMap"}]`}
	f := newFixture(t, []*workv1alpha2.ResourceBinding{requirerBinding("app", policyv1alpha1.ConflictAbort, false, false), plain, formerly})

	changed := func(name string) (old, obj *unstructured.Unstructured) {
		old = deployment(name, map[string]any{"serviceAccountName": "sa1"})
		obj = deployment(name, map[string]any{"serviceAccountName": "sa2"})
		obj.SetGeneration(2)
		obj.SetResourceVersion("2")
		return old, obj
	}
	statusOnly := func(name string) (old, obj *unstructured.Unstructured) {
		old = deployment(name, nil)
		obj = deployment(name, nil)
		obj.SetResourceVersion("2")
		return old, obj
	}
	for _, tc := range []struct {
		name    string
		event   func(string) (old, obj *unstructured.Unstructured)
		tmpl    string
		deleted bool
		want    string
	}{
		{name: "pod template changed", event: changed, tmpl: "app", want: testNS + "/app-deployment"},
		{name: "status only", event: statusOnly, tmpl: "app"},
		{name: "deleted", event: changed, tmpl: "app", deleted: true},
		{name: "no dependencies propagated", event: changed, tmpl: "plain"},
		{name: "dependencies to release", event: changed, tmpl: "formerly", want: testNS + "/formerly-deployment"},
		{name: "no binding", event: changed, tmpl: "nobinding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, obj := tc.event(tc.tmpl)
			got, ok := f.c.templateKey(deploymentGVK, compact(t, old), compact(t, obj), tc.deleted)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("templateKey = %q %v, want %q", got, ok, tc.want)
			}
		})
	}
}

// compact is a template as the template informers hold it.
func compact(t *testing.T, u *unstructured.Unstructured) *member.Compact {
	t.Helper()
	c, err := member.CompactOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReconcileMergesPolicies: the attached binding of a
// shared dependency takes Overwrite and preserve when any requirer asks
// for them, with a DependencyPolicyConflict warning naming only what
// conflicts; a requirer whose policy was deleted no longer votes.
func TestReconcileMergesPolicies(t *testing.T) {
	t.Parallel()
	const warning = "Warning DependencyPolicyConflict Dependency policy conflict detected: "
	for _, tc := range []struct {
		name         string
		app, other   *workv1alpha2.ResourceBinding
		wantCR       policyv1alpha1.ConflictResolution
		wantPreserve bool
		wantEvent    string
	}{
		{
			name:   "both conflict",
			app:    requirerBinding("app", policyv1alpha1.ConflictOverwrite, true, false),
			other:  requirerBinding("other", policyv1alpha1.ConflictAbort, false, false),
			wantCR: policyv1alpha1.ConflictOverwrite, wantPreserve: true,
			wantEvent: warning + "ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false).",
		},
		{
			name:      "conflictResolution only, empty counts as Abort",
			app:       requirerBinding("app", "", false, false),
			other:     requirerBinding("other", policyv1alpha1.ConflictOverwrite, false, false),
			wantCR:    policyv1alpha1.ConflictOverwrite,
			wantEvent: warning + "ConflictResolution conflicted (Overwrite vs Abort).",
		},
		{
			name:   "preserve only",
			app:    requirerBinding("app", policyv1alpha1.ConflictAbort, false, false),
			other:  requirerBinding("other", policyv1alpha1.ConflictAbort, true, false),
			wantCR: policyv1alpha1.ConflictAbort, wantPreserve: true,
			wantEvent: warning + "PreserveResourcesOnDeletion conflicted (true vs false).",
		},
		{
			name:   "the other's policy was deleted",
			app:    requirerBinding("app", policyv1alpha1.ConflictAbort, false, false),
			other:  requirerBinding("other", policyv1alpha1.ConflictOverwrite, true, true),
			wantCR: policyv1alpha1.ConflictAbort,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmpl := deployment("app", map[string]any{"volumes": []any{configMapVolume("cm")}})
			// The attached binding has the other's policy: it required cm first.
			op := policyOf(&tc.other.Spec)
			f := newFixture(t, []*workv1alpha2.ResourceBinding{tc.app, tc.other,
				attachedBinding("ConfigMap", "cm", op.ConflictResolution, op.PreserveResourcesOnDeletion, "other")},
				tmpl, object("ConfigMap", "cm"))
			if err := f.c.reconcile(context.Background(), testNS+"/app-deployment"); err != nil {
				t.Fatal(err)
			}
			cm := f.binding(t, "cm-configmap")
			if got := requiredByNames(cm); !slices.Equal(got, []string{"other-deployment", "app-deployment"}) {
				t.Errorf("requiredBy = %v", got)
			}
			if cm.Spec.ConflictResolution != tc.wantCR || ptr.Deref(cm.Spec.PreserveResourcesOnDeletion, false) != tc.wantPreserve {
				t.Errorf("attached policy = %s/%v, want %s/%v", cm.Spec.ConflictResolution, ptr.Deref(cm.Spec.PreserveResourcesOnDeletion, false), tc.wantCR, tc.wantPreserve)
			}
			var conflicts []string
			for _, e := range f.events() {
				if strings.Contains(e, EventReasonDependencyPolicyConflict) {
					conflicts = append(conflicts, e)
				}
			}
			switch {
			case tc.wantEvent == "" && len(conflicts) > 0:
				t.Errorf("unexpected conflict events %q", conflicts)
			case tc.wantEvent != "" && !slices.Contains(conflicts, tc.wantEvent):
				t.Errorf("conflict events %q, want %q", conflicts, tc.wantEvent)
			}
		})
	}
}
