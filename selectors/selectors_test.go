package selectors

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestResourceMatchPriority(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("default")
	obj.SetName("nginx")
	obj.SetLabels(map[string]string{"app": "nginx"})
	sel := func(mod func(*policyv1alpha1.ResourceSelector)) policyv1alpha1.ResourceSelector {
		s := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
		mod(&s)
		return s
	}
	for name, tc := range map[string]struct {
		sel  policyv1alpha1.ResourceSelector
		want int
	}{
		"kind only":       {sel(func(*policyv1alpha1.ResourceSelector) {}), MatchAll},
		"other kind":      {sel(func(s *policyv1alpha1.ResourceSelector) { s.Kind = "StatefulSet" }), NoMatch},
		"other version":   {sel(func(s *policyv1alpha1.ResourceSelector) { s.APIVersion = "apps/v1beta1" }), NoMatch},
		"namespace":       {sel(func(s *policyv1alpha1.ResourceSelector) { s.Namespace = "default" }), MatchAll},
		"other namespace": {sel(func(s *policyv1alpha1.ResourceSelector) { s.Namespace = "prod" }), NoMatch},
		"name":            {sel(func(s *policyv1alpha1.ResourceSelector) { s.Name = "nginx" }), NameSelected},
		"other name":      {sel(func(s *policyv1alpha1.ResourceSelector) { s.Name = "web" }), NoMatch},
		"labels": {sel(func(s *policyv1alpha1.ResourceSelector) {
			s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
		}), LabelSelected},
		"other labels": {sel(func(s *policyv1alpha1.ResourceSelector) {
			s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		}), NoMatch},
		"name beats labels": {sel(func(s *policyv1alpha1.ResourceSelector) {
			s.Name = "nginx"
			s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		}), NameSelected},
	} {
		if got := ResourceMatchPriority(tc.sel, obj); got != tc.want {
			t.Errorf("%s: got %d, want %d", name, got, tc.want)
		}
	}
	if got := BestMatch([]policyv1alpha1.ResourceSelector{sel(func(*policyv1alpha1.ResourceSelector) {}), sel(func(s *policyv1alpha1.ResourceSelector) { s.Name = "nginx" })}, obj); got != NameSelected {
		t.Errorf("BestMatch = %d", got)
	}
}

func TestClusterMatches(t *testing.T) {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"location": "us"}},
		Spec: clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"a", "b"}}}
	req := func(key string, op corev1.NodeSelectorOperator, v ...string) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: v}}}}
	}
	for name, tc := range map[string]struct {
		a    *policyv1alpha1.ClusterAffinity
		want bool
	}{
		"nil":             {nil, true},
		"names":           {&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}, true},
		"other names":     {&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, false},
		"excluded":        {&policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member1"}}, false},
		"labels":          {&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"location": "us"}}}, true},
		"other labels":    {&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"location": "eu"}}}, false},
		"provider in":     {req("provider", corev1.NodeSelectorOpIn, "aws"), true},
		"provider not in": {req("provider", corev1.NodeSelectorOpNotIn, "aws"), false},
		"region in":       {req("region", corev1.NodeSelectorOpIn, "eu-west-1"), false},
		"zones all in":    {req("zone", corev1.NodeSelectorOpIn, "a", "b", "c"), true},
		"zones partly in": {req("zone", corev1.NodeSelectorOpIn, "a"), false},
		"zones not in":    {req("zone", corev1.NodeSelectorOpNotIn, "c"), true},
		"unknown field":   {req("color", corev1.NodeSelectorOpIn, "red"), false},
	} {
		if got := ClusterMatches(c, tc.a); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}
