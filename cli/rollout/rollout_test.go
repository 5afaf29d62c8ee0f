package rollout

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	flotillafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/names"
)

// testMapper maps as the kubectl flags' mapper of a control plane serving
// Deployments (short name deploy) and ClusterRoles would.
func testMapper() meta.RESTMapper {
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "apps/v1",
		APIResources: []metav1.APIResource{{Name: "deployments", SingularName: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Verbs: []string{"get", "list", "update"}}},
	}, {
		GroupVersion: "rbac.authorization.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "clusterroles", SingularName: "clusterrole", Kind: "ClusterRole", Verbs: []string{"get", "list", "update"}}},
	}}}}
	cached := memory.NewMemCacheClient(disc)
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
}

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		args       []string
		ref, str   string
		namespace  string // of the runs
		binding    string
		wantErr    string
		resourceNS string
	}{
		{name: "kind/name", args: []string{"deployment/nginx"}, ref: "deployment/nginx", str: "deployment.apps/nginx", resourceNS: "web", namespace: "web", binding: "nginx-deployment"},
		{name: "resource.group/name", args: []string{"deployments.apps/nginx"}, ref: "deployment/nginx", str: "deployment.apps/nginx", resourceNS: "web", namespace: "web", binding: "nginx-deployment"},
		{name: "short name", args: []string{"deploy/nginx"}, ref: "deployment/nginx", str: "deployment.apps/nginx", resourceNS: "web", namespace: "web", binding: "nginx-deployment"},
		{name: "kind name", args: []string{"deployment", "nginx"}, ref: "deployment/nginx", str: "deployment.apps/nginx", resourceNS: "web", namespace: "web", binding: "nginx-deployment"},
		{name: "cluster-scoped: runs in karmada-system", args: []string{"clusterrole/view"}, ref: "clusterrole/view", str: "clusterrole.rbac.authorization.k8s.io/view", namespace: names.SystemNamespace, binding: "view-clusterrole"},
		{name: "unknown kind", args: []string{"widget/a"}, wantErr: `the control plane doesn't have a resource type "widget"`},
		{name: "no name", args: []string{"deployment"}, wantErr: "TYPE/NAME or TYPE NAME"},
		{name: "empty name", args: []string{"deployment/"}, wantErr: "TYPE/NAME"},
		{name: "two resources", args: []string{"deployment/a", "deployment/b"}, wantErr: "TYPE/NAME or TYPE NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target, err := Resolve(testMapper(), tc.args, "web")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{target.Ref(), target.String(), target.Namespace, target.RolloutNamespace(), target.Binding()}
			if diff := cmp.Diff([]string{tc.ref, tc.str, tc.resourceNS, tc.namespace, tc.binding}, got); diff != "" {
				t.Errorf("ref, string, namespace, rollout namespace, binding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActiveRun(t *testing.T) {
	t.Parallel()
	at := func(name string, sec int) flotillav1alpha1.RolloutRun {
		return flotillav1alpha1.RolloutRun{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(int64(sec), 0)}}
	}
	for _, tc := range []struct {
		name string
		runs []flotillav1alpha1.RolloutRun
		want string
	}{
		{name: "none"},
		{name: "one", runs: []flotillav1alpha1.RolloutRun{at("nginx-deployment-1", 10)}, want: "nginx-deployment-1"},
		{name: "latest created", runs: []flotillav1alpha1.RolloutRun{at("nginx-deployment-3", 10), at("nginx-deployment-2", 20)}, want: "nginx-deployment-2"},
		{name: "same second: larger number, not larger string", runs: []flotillav1alpha1.RolloutRun{at("nginx-deployment-10", 10), at("nginx-deployment-9", 10)}, want: "nginx-deployment-10"},
		{name: "same second: number beats no number", runs: []flotillav1alpha1.RolloutRun{at("nginx-deployment-x", 10), at("nginx-deployment-2", 10)}, want: "nginx-deployment-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ActiveRun(tc.runs)
			if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
				t.Errorf("ActiveRun = %v, want %q", got, tc.want)
			}
		})
	}
}

// fixture is a Command on deployment web/nginx over fake clients.
type fixture struct {
	*Command
	flotilla *flotillafake.Clientset
	dynamic  *dynamicfake.FakeDynamicClient
	out      *bytes.Buffer
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func newFixture(t *testing.T, template *unstructured.Unstructured, objs ...runtime.Object) *fixture {
	t.Helper()
	target, err := Resolve(testMapper(), []string{"deployment/nginx"}, "web")
	if err != nil {
		t.Fatal(err)
	}
	var templates []runtime.Object
	if template != nil {
		templates = append(templates, template)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deploymentsGVR: "DeploymentList"}, templates...)
	fl := flotillafake.NewClientset(objs...)
	out := &bytes.Buffer{}
	return &fixture{
		Command: &Command{
			Clients: Clients{Flotilla: fl, Dynamic: dyn},
			Target:  target, Self: "flotillactl", Out: out,
			Now: func() time.Time { return time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC) },
		},
		flotilla: fl, dynamic: dyn, out: out,
	}
}

// deployment is the template web/nginx.
func deployment(spec map[string]any, labels, annotations map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": "nginx", "namespace": "web", "generation": int64(7), "resourceVersion": "42", "uid": "u1"}
	if labels != nil {
		md["labels"] = labels
	}
	if annotations != nil {
		md["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md, "spec": spec,
		"status": map[string]any{"replicas": int64(3)},
	}}
}

// run is the RolloutRun nginx-deployment-<n> of web/nginx, at stage
// current.
func run(n string, phase flotillav1alpha1.RolloutPhase, current string, stages ...flotillav1alpha1.StageStatus) *flotillav1alpha1.RolloutRun {
	return &flotillav1alpha1.RolloutRun{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment-" + n, Namespace: "web", ResourceVersion: "5", Generation: 1,
			Labels: map[string]string{flotillav1alpha1.BindingLabel: "nginx-deployment"}},
		Spec:   flotillav1alpha1.RolloutRunSpec{Binding: "nginx-deployment", Strategy: "three-stages", ToRevision: "nginx-deployment-abc"},
		Status: flotillav1alpha1.RolloutRunStatus{Phase: phase, CurrentStage: current, Stages: stages},
	}
}

// stages are canary (one cluster), europe (two) and rest (one), with
// canary in phase canary and the others pending.
func stages(canary flotillav1alpha1.StagePhase, health ...flotillav1alpha1.ClusterHealth) []flotillav1alpha1.StageStatus {
	var clusters []flotillav1alpha1.ClusterRolloutStatus
	for i, h := range health {
		clusters = append(clusters, flotillav1alpha1.ClusterRolloutStatus{Name: fmt.Sprintf("member%d", i+1), Health: h})
	}
	return []flotillav1alpha1.StageStatus{
		{Name: "canary", Phase: canary, Clusters: clusters},
		{Name: "europe", Phase: flotillav1alpha1.StagePending},
		{Name: "rest", Phase: flotillav1alpha1.StagePending},
	}
}

// template is web/nginx with two replicas, nil if !exists.
func template(exists bool) *unstructured.Unstructured {
	if !exists {
		return nil
	}
	return deployment(map[string]any{"replicas": int64(2)}, nil, nil)
}
