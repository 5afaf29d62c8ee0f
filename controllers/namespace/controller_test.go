package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func TestSkip(t *testing.T) {
	var c *Controller
	var err error
	if c, err = newSkipper([]string{DefaultSkippedPattern, "team-.*-tmp"}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		labels map[string]string
		want   bool
	}{
		"prod":               {nil, false},
		"default":            {nil, true},
		"kube-system":        {nil, true},
		"kube-public":        {nil, true},
		"my-kube-ns":         {nil, false},
		"karmada-system":     {nil, true},
		"karmada-cluster":    {nil, true},
		"karmada-es-member1": {nil, true},
		"team-a-tmp":         {nil, true},
		"labelled":           {map[string]string{"namespace.karmada.io/skip-auto-propagation": "true"}, true},
		"claimed":            {map[string]string{"clusterpropagationpolicy.karmada.io/permanent-id": "x"}, true},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: tc.labels}}
		if got := c.Skip(ns); got != tc.want {
			t.Errorf("%s: skip %v, want %v", name, got, tc.want)
		}
	}
	if _, err := newSkipper([]string{"("}); err == nil {
		t.Error("bad pattern accepted")
	}
}

// The ClusterOverridePolicies selecting a namespace are applied per
// cluster to the Work of each: plaintext, labels and annotations.
func TestSyncWorkAppliesClusterOverrides(t *testing.T) {
	t.Parallel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}}
	member1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	member2 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
	cop := &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "ns-overrides"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "team-a"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{
					Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/labels/plain", Operator: policyv1alpha1.OverriderOpAdd,
						Value: apiextensionsv1.JSON{Raw: []byte(`"text"`)}}},
					LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpReplace, Value: map[string]string{"team": "a1"}}},
					AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"owner": "ops"}}},
				},
			}},
		},
	}
	indexer := func(objs ...any) cache.Indexer {
		i := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, o := range objs {
			if err := i.Add(o); err != nil {
				t.Fatal(err)
			}
		}
		return i
	}
	client := karmadafake.NewSimpleClientset()
	c := &Controller{
		namespaces: corelisters.NewNamespaceLister(indexer(ns)),
		clusters:   clusterlisters.NewClusterLister(indexer(member1, member2)),
		works:      worklisters.NewWorkLister(indexer()),
		cops:       policylisters.NewClusterOverridePolicyLister(indexer(cop)),
		client:     client,
		overrides:  ApplyClusterOverrides,
	}
	if err := c.reconcile(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	manifest := func(cluster string) (*unstructured.Unstructured, map[string]string) {
		w, err := client.WorkV1alpha1().Works(names.ExecutionNamespace(cluster)).Get(t.Context(), names.WorkName("Namespace", "team-a", ""), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", cluster, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			t.Fatal(err)
		}
		return u, w.Annotations
	}
	got, annos := manifest("member1")
	if l := got.GetLabels(); l["team"] != "a1" || l["plain"] != "text" || l[workv1alpha1.ManagedByKarmadaLabel] != "true" {
		t.Errorf("member1 labels %v", l)
	}
	if got.GetAnnotations()["owner"] != "ops" {
		t.Errorf("member1 annotations %v", got.GetAnnotations())
	}
	if annos[policyv1alpha1.AppliedClusterOverridesAnnotation] == "" {
		t.Errorf("member1 Work annotations %v lack the applied overrides", annos)
	}
	got, annos = manifest("member2")
	if l := got.GetLabels(); l["team"] != "a" || l["plain"] != "" || got.GetAnnotations()["owner"] != "" {
		t.Errorf("member2, not targeted: labels %v annotations %v", l, got.GetAnnotations())
	}
	if annos[policyv1alpha1.AppliedClusterOverridesAnnotation] != "" {
		t.Errorf("member2 Work annotations %v", annos)
	}
}
