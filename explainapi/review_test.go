package explainapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/placement/placementtest"
	"github.com/flotilla-io/flotilla/selectors"
)

// fakeTemplates serves Deployments (namespaced), ConfigMaps and Namespaces
// from memory; a dry-run apply returns the object as given, with
// spec.replicas defaulted to 1 as the host would.
type fakeTemplates struct {
	mapper   meta.RESTMapper
	existing []*unstructured.Unstructured
	listed   []string
}

func newFakeTemplates(existing ...*unstructured.Unstructured) *fakeTemplates {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return &fakeTemplates{mapper: m, existing: existing}
}

func (f *fakeTemplates) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

func (f *fakeTemplates) DryRunApply(_ context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	if obj.GetKind() == "Deployment" {
		if _, ok, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); !ok {
			_ = unstructured.SetNestedField(out.Object, int64(1), "spec", "replicas")
		}
	}
	return out, nil
}

func (f *fakeTemplates) List(_ context.Context, m *meta.RESTMapping, namespace string, each func(*unstructured.Unstructured) bool) error {
	f.listed = append(f.listed, m.Resource.Resource+"/"+namespace)
	for _, o := range f.existing {
		if o.GetKind() == m.GroupVersionKind.Kind && (namespace == "" || o.GetNamespace() == namespace) && !each(o) {
			return nil
		}
	}
	return nil
}

// replicasOf reads spec.replicas, as the interpreter does for Deployments.
func replicasOf(gvk schema.GroupVersionKind) selectors.Workload {
	if gvk.Kind != "Deployment" {
		return selectors.Workload{}
	}
	return selectors.Workload{Replicas: func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
		n, _, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		var req *workv1alpha2.ReplicaRequirements
		cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if len(cs) > 0 {
			if cpu, ok, _ := unstructured.NestedString(cs[0].(map[string]any), "resources", "requests", "cpu"); ok {
				req = &workv1alpha2.ReplicaRequirements{ResourceRequest: placementtest.RL("cpu", cpu)}
			}
		}
		return int32(n), req, true, err
	}}
}

func deploymentYAML(ns, name string, replicas int, labels string) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"labels":{%s}},"spec":{"replicas":%d}}`,
		name, ns, labels, replicas)
}

func existingDeployment(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
	return u
}

// deploymentCPU is a Deployment whose replicas request 100m CPU each.
func deploymentCPU(ns, name string, replicas int) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q},
"spec":{"replicas":%d,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}}}}`, name, ns, replicas)
}

// usingCPU is a ResourceBinding of namespace default placed on member1
// whose one replica uses cpu.
func usingCPU(name, cpu string) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 1,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: placementtest.RL("cpu", cpu)},
			Clusters:            []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}}}}
}

const onMember1PP = `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"one","namespace":"default"},
"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],"placement":{"clusterAffinity":{"clusterNames":["member1"]},
"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Aggregated"}}}}`

const weightedPP = `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"web","namespace":"default"},
"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}],
"placement":{"clusterAffinity":{"clusterNames":["member1","member2"]},"replicaScheduling":{"replicaSchedulingType":"Divided",
"replicaDivisionPreference":"Weighted","weightPreference":{"staticWeightList":[
{"targetCluster":{"clusterNames":["member1"]},"weight":3},{"targetCluster":{"clusterNames":["member2"]},"weight":1}]}}}}}`

const labelPP = `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"tiers","namespace":"default"},
"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","labelSelector":{"matchLabels":{"tier":"a"}}}],
"placement":{"clusterAffinity":{"clusterNames":["member3"]}}}}`

const edgeOP = `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"edge","namespace":"default"},
"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
"overrideRules":[{"targetCluster":{"clusterNames":["member2"]},"overriders":{"labelsOverrider":[{"operator":"add","value":{"edge":"true"}}]}}]}}`

// summary is "name result policy clusters" of each reviewed template.
func summary(s *flotillav1alpha1.PlacementReviewStatus) []string {
	var out []string
	for _, t := range s.Templates {
		var cs []string
		for _, c := range t.Clusters {
			x := c.Name
			if c.Replicas != nil {
				x += fmt.Sprintf("=%d", *c.Replicas)
			}
			if len(c.Overrides) > 0 {
				x += "[" + strings.Join(c.Overrides, ",") + "]"
			}
			cs = append(cs, x)
		}
		name := t.Name
		if t.Existing {
			name += "(existing)"
		}
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", name, t.Result, t.Policy, strings.Join(cs, " "))))
	}
	return out
}

type allowList map[string]bool

func (a allowList) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	if a[attr.GetResource()+"/"+attr.GetNamespace()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionDeny, "", nil
}

func TestReview(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{placementtest.Cluster("member2"), placementtest.Cluster("member1", placementtest.WithSummary(placementtest.RL("cpu", "10", "pods", "100"), nil, nil)), placementtest.Cluster("member3")}
	tests := []struct {
		name     string
		objects  []string
		existing string
		// pps are the control plane's PropagationPolicies; ops its
		// OverridePolicies; templates its Deployments.
		pps       []*policyv1alpha1.PropagationPolicy
		templates []*unstructured.Unstructured
		allowed   allowList
		// bindings are the namespace's ResourceBindings; quotas its
		// FederatedResourceQuotas' overall limits.
		bindings []*workv1alpha2.ResourceBinding
		quotas   map[string]corev1.ResourceList
		want     []string
		wantErr  string
		omitted  int32
	}{
		{name: "divided by static weights", objects: []string{deploymentYAML("default", "web", 4, ""), weightedPP},
			want: []string{"web Placed PropagationPolicy default/web member1=3 member2=1"}},
		{name: "the host's default replicas", objects: []string{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`, weightedPP},
			want: []string{"web Placed PropagationPolicy default/web member1=1"}},
		{name: "no policy", objects: []string{deploymentYAML("default", "web", 1, ""), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`},
			want: []string{"web NoPolicy", "c NoPolicy"}},
		{name: "reserved namespace", objects: []string{deploymentYAML("kube-system", "web", 1, "")},
			pps:  []*policyv1alpha1.PropagationPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "kube-system"}, Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}},
			want: []string{"web NoPolicy"}},
		{name: "the control plane's policy", objects: []string{deploymentYAML("default", "web", 2, "")},
			pps:  []*policyv1alpha1.PropagationPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "default"}, Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}, Placement: policyv1alpha1.Placement{ClusterAffinity: placementtest.OnClusters("member3")}}}},
			want: []string{"web Placed PropagationPolicy default/all member3=2"}},
		{name: "ignoring the control plane's policy", objects: []string{deploymentYAML("default", "web", 2, "")}, existing: flotillav1alpha1.ReviewExistingIgnore,
			pps:  []*policyv1alpha1.PropagationPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "default"}, Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}},
			want: []string{"web NoPolicy"}},
		{name: "a manifest policy replaces the existing one of its name", objects: []string{deploymentYAML("default", "web", 4, ""), weightedPP},
			pps:  []*policyv1alpha1.PropagationPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}, Placement: policyv1alpha1.Placement{ClusterAffinity: placementtest.OnClusters("member3")}}}},
			want: []string{"web Placed PropagationPolicy default/web member1=3 member2=1"}},
		{name: "overrides per cluster", objects: []string{deploymentYAML("default", "web", 4, ""), weightedPP, edgeOP},
			want: []string{"web Placed PropagationPolicy default/web member1=3 member2=1[OverridePolicy default/edge]"}},
		{name: "unschedulable", objects: []string{deploymentYAML("default", "web", 1, ""),
			`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"nowhere","namespace":"default"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],"placement":{"clusterAffinity":{"clusterNames":["member9"]}}}}`},
			want: []string{"web Unschedulable PropagationPolicy default/nowhere"}},
		{name: "within the quota", objects: []string{deploymentCPU("default", "a", 2), deploymentCPU("default", "b", 2), onMember1PP},
			quotas:   map[string]corev1.ResourceList{"team": placementtest.RL("cpu", "500m")},
			bindings: []*workv1alpha2.ResourceBinding{usingCPU("other", "100m")},
			want:     []string{"a Placed PropagationPolicy default/one member1=2", "b Placed PropagationPolicy default/one member1=2"}},
		{name: "over the quota with the templates reviewed before", objects: []string{deploymentCPU("default", "a", 2), deploymentCPU("default", "b", 2), onMember1PP},
			quotas:   map[string]corev1.ResourceList{"team": placementtest.RL("cpu", "500m")},
			bindings: []*workv1alpha2.ResourceBinding{usingCPU("other", "200m")},
			want:     []string{"a Placed PropagationPolicy default/one member1=2", "b Unschedulable PropagationPolicy default/one"}},
		{name: "a kind the control plane does not serve", objects: []string{`{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"}}`},
			want: []string{"w Invalid"}},
		{name: "existing templates the policy would claim", objects: []string{labelPP},
			templates: []*unstructured.Unstructured{existingDeployment("default", "a1", map[string]string{"tier": "a"}), existingDeployment("default", "b1", map[string]string{"tier": "b"}),
				existingDeployment("other", "a2", map[string]string{"tier": "a"})},
			allowed: allowList{"deployments/default": true},
			want:    []string{"a1(existing) Placed PropagationPolicy default/tiers member3=2"}},
		{name: "existing templates the caller may not list", objects: []string{labelPP},
			templates: []*unstructured.Unstructured{existingDeployment("default", "a1", map[string]string{"tier": "a"})},
			allowed:   allowList{}},
		{name: "namespaced object without namespace", objects: []string{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`},
			wantErr: "spec.objects[0].metadata.namespace: Required value"},
		{name: "a policy that does not validate", objects: []string{deploymentYAML("default", "web", 1, ""),
			`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"bad","namespace":"default"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],"placement":{"replicaScheduling":{"replicaSchedulingType":"Sideways"}}}}`},
			wantErr: "spec.objects[1].spec.placement.replicaScheduling.replicaSchedulingType"},
		{name: "a policy kind not reviewed", objects: []string{`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"FederatedResourceQuota","metadata":{"name":"q","namespace":"default"}}`},
			wantErr: "spec.objects[0].kind: Unsupported value"},
		{name: "not an object", objects: []string{`[1,2]`}, wantErr: "spec.objects[0]: Invalid value"},
		{name: "nothing to review", wantErr: "spec.objects: Required value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pps []*selectors.Policy
			for _, p := range tc.pps {
				pps = append(pps, selectors.FromPP(p))
			}
			cfg := ReviewConfig{
				Clusters: func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil },
				Workload: replicasOf,
				Policies: func(context.Context) ([]*selectors.Policy, []*selectors.Policy, error) { return pps, nil, nil },
				Overrides: func(context.Context) ([]*policyv1alpha1.ClusterOverridePolicy, []*policyv1alpha1.OverridePolicy, error) {
					return nil, nil, nil
				},
				Binding: func(context.Context, string, string) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus, bool, error) {
					return nil, nil, false, nil
				},
				NamespaceBindings: func(context.Context, string) ([]*workv1alpha2.ResourceBinding, error) { return tc.bindings, nil },
				Quotas:            func(context.Context, string) (map[string]corev1.ResourceList, error) { return tc.quotas, nil },
				Templates:         newFakeTemplates(tc.templates...),
			}
			if tc.allowed != nil {
				cfg.Authorizer = tc.allowed
			}
			rev := &flotillav1alpha1.PlacementReview{Spec: flotillav1alpha1.PlacementReviewSpec{Existing: tc.existing}}
			for _, o := range tc.objects {
				rev.Spec.Objects = append(rev.Spec.Objects, runtime.RawExtension{Raw: []byte(o)})
			}
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
			got, err := NewReviewREST(cfg).Create(ctx, rev, nil, &metav1.CreateOptions{})
			if tc.wantErr != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want Invalid with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			status := &got.(*flotillav1alpha1.PlacementReview).Status
			if s := summary(status); !slices.Equal(s, tc.want) {
				for _, tp := range status.Templates {
					t.Log(tp.Message)
				}
				t.Errorf("review:\n  %s\nwant\n  %s", strings.Join(s, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if status.Omitted != tc.omitted {
				t.Errorf("omitted %d, want %d", status.Omitted, tc.omitted)
			}
		})
	}
}

// TestReviewOmitsPastTheCap: at most MaxReviewedExisting existing
// templates are listed; the rest are counted.
func TestReviewOmitsPastTheCap(t *testing.T) {
	t.Parallel()
	var templates []*unstructured.Unstructured
	for i := range MaxReviewedExisting + 5 {
		templates = append(templates, existingDeployment("default", fmt.Sprintf("d%04d", i), map[string]string{"tier": "a"}))
	}
	cfg := ReviewConfig{
		Clusters: func() ([]*clusterv1alpha1.Cluster, error) {
			return []*clusterv1alpha1.Cluster{placementtest.Cluster("member3")}, nil
		},
		Workload: replicasOf,
		Policies: func(context.Context) ([]*selectors.Policy, []*selectors.Policy, error) { return nil, nil, nil },
		Overrides: func(context.Context) ([]*policyv1alpha1.ClusterOverridePolicy, []*policyv1alpha1.OverridePolicy, error) {
			return nil, nil, nil
		},
		Binding: func(context.Context, string, string) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus, bool, error) {
			return nil, nil, false, nil
		},
		NamespaceBindings: func(context.Context, string) ([]*workv1alpha2.ResourceBinding, error) { return nil, nil },
		Quotas:            func(context.Context, string) (map[string]corev1.ResourceList, error) { return nil, nil },
		Templates:         newFakeTemplates(templates...),
	}
	rev := &flotillav1alpha1.PlacementReview{Spec: flotillav1alpha1.PlacementReviewSpec{Objects: []runtime.RawExtension{{Raw: []byte(labelPP)}}}}
	got, err := NewReviewREST(cfg).Create(context.Background(), rev, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := got.(*flotillav1alpha1.PlacementReview).Status
	if len(s.Templates) != MaxReviewedExisting || s.Omitted != 5 {
		t.Errorf("%d templates, %d omitted; want %d and 5", len(s.Templates), s.Omitted, MaxReviewedExisting)
	}
}
