package overrides

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// deployment returns default/nginx with two containers and an init container.
func deployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":      "nginx",
			"namespace": "default",
			"labels":    map[string]any{"app": "nginx"},
		},
		"spec": map[string]any{
			"replicas": int64(2),
			"template": map[string]any{
				"spec": map[string]any{
					"initContainers": []any{
						map[string]any{"name": "init", "image": "busybox:1.36"},
					},
					"containers": []any{
						map[string]any{"name": "nginx", "image": "myapp:1.0.0", "args": []any{"--port=80"}},
						map[string]any{"name": "sidecar", "image": "registry.k8s.io/pause:3.9"},
					},
				},
			},
		},
	}}
}

// workload returns a minimal object of kind whose pod (template) has one
// container named app.
func workload(t *testing.T, apiVersion, kind string, podPath ...string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"name": "w", "namespace": "default"},
	}}
	c := []any{map[string]any{"name": "app", "image": "myapp:1.0.0"}}
	if err := unstructured.SetNestedSlice(obj.Object, c, podPath...); err != nil {
		t.Fatal(err)
	}
	return obj
}

func member(name string, labels map[string]string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func rawJSON(t *testing.T, v any) apiextensionsv1.JSON {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return apiextensionsv1.JSON{Raw: b}
}

func cop(name string, sels []policyv1alpha1.ResourceSelector, rules ...policyv1alpha1.RuleWithCluster) *policyv1alpha1.ClusterOverridePolicy {
	return &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: sels, OverrideRules: rules},
	}
}

func op(ns, name string, sels []policyv1alpha1.ResourceSelector, rules ...policyv1alpha1.RuleWithCluster) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: sels, OverrideRules: rules},
	}
}

// appendArg is a rule that appends arg to the nginx container's args, so
// that the args record the order in which rules were applied.
func appendArg(arg string, target *policyv1alpha1.ClusterAffinity) policyv1alpha1.RuleWithCluster {
	return policyv1alpha1.RuleWithCluster{
		TargetCluster: target,
		Overriders: policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{
			{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{arg}},
		}},
	}
}

// nginxArgs returns the args of deployment()'s nginx container.
func nginxArgs(t *testing.T, obj *unstructured.Unstructured) []string {
	t.Helper()
	cs, err := containers(obj)
	if err != nil {
		t.Fatal(err)
	}
	args, err := stringList(cs[0]["args"])
	if err != nil {
		t.Fatal(err)
	}
	return args
}

var (
	selectAllDeployments = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	selectNginxByLabel   = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}}
	selectNginxByName = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	selectOther       = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}
)
