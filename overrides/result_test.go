package overrides

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestApplyAnnotations(t *testing.T) {
	t.Parallel()
	all := []policyv1alpha1.ResourceSelector{selectAllDeployments}
	byName := []policyv1alpha1.ResourceSelector{selectNginxByName}
	other := &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		cops []*policyv1alpha1.ClusterOverridePolicy
		ops  []*policyv1alpha1.OverridePolicy
		want map[string]string
	}{
		{name: "nothing applied", obj: deployment(), want: nil},
		{
			name: "rule for another cluster is not recorded",
			obj:  deployment(),
			ops:  []*policyv1alpha1.OverridePolicy{op("default", "a", all, appendArg("x", other))},
			want: nil,
		},
		{
			// Karmada sorts the list by policy name, not by application
			// order ("b" is applied before "a"), with one entry per rule.
			name: "sorted by name, one entry per applied rule",
			obj:  deployment(),
			cops: []*policyv1alpha1.ClusterOverridePolicy{
				cop("a", byName, appendArg("a1", nil), appendArg("a2", other), appendArg("a3", nil)),
				cop("b", all, appendArg("b", nil)),
			},
			want: map[string]string{policyv1alpha1.AppliedClusterOverridesAnnotation: `[` +
				`{"policyName":"a","overriders":{"argsOverrider":[{"containerName":"nginx","operator":"add","value":["a1"]}]}},` +
				`{"policyName":"a","overriders":{"argsOverrider":[{"containerName":"nginx","operator":"add","value":["a3"]}]}},` +
				`{"policyName":"b","overriders":{"argsOverrider":[{"containerName":"nginx","operator":"add","value":["b"]}]}}]`},
		},
		{
			name: "both kinds, empty overriders recorded",
			obj:  deployment(),
			cops: []*policyv1alpha1.ClusterOverridePolicy{cop("c", nil, policyv1alpha1.RuleWithCluster{})},
			ops:  []*policyv1alpha1.OverridePolicy{op("default", "n", nil, policyv1alpha1.RuleWithCluster{})},
			want: map[string]string{
				policyv1alpha1.AppliedClusterOverridesAnnotation: `[{"policyName":"c","overriders":{}}]`,
				policyv1alpha1.AppliedOverridesAnnotation:        `[{"policyName":"n","overriders":{}}]`,
			},
		},
		{
			name: "cluster-scoped object gets no OverridePolicy",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "r"}}},
			cops: []*policyv1alpha1.ClusterOverridePolicy{cop("c", nil, policyv1alpha1.RuleWithCluster{})},
			ops:  []*policyv1alpha1.OverridePolicy{op("", "n", nil, policyv1alpha1.RuleWithCluster{})},
			want: map[string]string{policyv1alpha1.AppliedClusterOverridesAnnotation: `[{"policyName":"c","overriders":{}}]`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Apply(tc.obj, member("member1", nil), tc.cops, tc.ops)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	rule := func(o policyv1alpha1.Overriders) policyv1alpha1.RuleWithCluster {
		return policyv1alpha1.RuleWithCluster{Overriders: o}
	}
	for _, tc := range []struct {
		name string
		cops []*policyv1alpha1.ClusterOverridePolicy
		ops  []*policyv1alpha1.OverridePolicy
		want []string
	}{
		{
			name: "plaintext remove of a missing path",
			ops: []*policyv1alpha1.OverridePolicy{op("default", "bad", nil, rule(policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
				{Path: "/spec/missing", Operator: policyv1alpha1.OverriderOpRemove}}}))},
			want: []string{"OverridePolicy default/bad", "cluster member1", "plaintext", "/spec/missing"},
		},
		{
			name: "image predicate on a non-string",
			cops: []*policyv1alpha1.ClusterOverridePolicy{cop("img", nil, rule(policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"},
				{Predicate: &policyv1alpha1.ImagePredicate{Path: "/metadata/name"}, Component: policyv1alpha1.Tag,
					Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"},
				{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/replicas"}, Component: policyv1alpha1.Tag,
					Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"}}}))},
			want: []string{"ClusterOverridePolicy img", "imageOverrider[2]", "not a string"},
		},
		{
			name: "later policy fails after an earlier one applied",
			ops: []*policyv1alpha1.OverridePolicy{
				op("default", "a", nil, appendArg("a", nil)),
				op("default", "b", nil, rule(policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{
					{FieldPath: "/spec/replicas", JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/x", Operator: policyv1alpha1.OverriderOpRemove}}}}})),
			},
			want: []string{"OverridePolicy default/b", "fieldOverrider[0]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			annos, err := Apply(deployment(), member("member1", nil), tc.cops, tc.ops)
			if err == nil {
				t.Fatalf("no error, annotations %v", annos)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if annos != nil {
				t.Errorf("annotations on error: %v", annos)
			}
		})
	}
}

func TestApplyNil(t *testing.T) {
	t.Parallel()
	if _, err := Apply(deployment(), nil, nil, nil); err == nil {
		t.Error("nil cluster: no error")
	}
	if _, err := Apply(nil, member("member1", nil), nil, nil); err == nil {
		t.Error("nil object: no error")
	}
}

// TestApplyLeavesPoliciesAlone checks that the shared cache objects passed
// in are not modified, not even through the slices they share with obj.
func TestApplyLeavesPoliciesAlone(t *testing.T) {
	t.Parallel()
	p := op("default", "p", nil, policyv1alpha1.RuleWithCluster{Overriders: policyv1alpha1.Overriders{
		ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{
			{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"a", "b"}},
			{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"a"}},
		},
		LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"x": "y"}}},
		Plaintext:       []policyv1alpha1.PlaintextOverrider{{Path: "/spec/paused", Operator: policyv1alpha1.OverriderOpAdd, Value: rawJSON(t, true)}},
	}})
	c := cop("c", nil, appendArg("c", nil))
	before, cbefore := p.DeepCopy(), c.DeepCopy()
	obj := deployment()
	if _, err := Apply(obj, member("member1", nil), []*policyv1alpha1.ClusterOverridePolicy{c}, []*policyv1alpha1.OverridePolicy{p}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, p); diff != "" {
		t.Errorf("OverridePolicy modified (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(cbefore, c); diff != "" {
		t.Errorf("ClusterOverridePolicy modified (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"--port=80", "c", "b"}, nginxArgs(t, obj)); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}
