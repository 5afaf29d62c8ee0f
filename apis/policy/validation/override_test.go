package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/policy/mutation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func jsonValue(raw string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(raw)} }

// validOP returns the plaintext policy of samples/overrides.yaml after
// mutation, changed by mods.
func validOP(mods ...func(*policyv1alpha1.OverridePolicy)) *policyv1alpha1.OverridePolicy {
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook-sample", Namespace: "default"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
					{Path: "/spec/size", Operator: policyv1alpha1.OverriderOpReplace, Value: jsonValue("4")},
					{Path: "/metadata/annotations", Operator: policyv1alpha1.OverriderOpAdd, Value: jsonValue(`{"OverridePolicy":"test"}`)},
				}},
			}},
		},
	}
	mutation.MutateOverridePolicy(op)
	for _, m := range mods {
		m(op)
	}
	return op
}

// rule0 returns the overriders of the first rule.
func rule0(op *policyv1alpha1.OverridePolicy) *policyv1alpha1.Overriders {
	return &op.Spec.OverrideRules[0].Overriders
}

const rule0Path = "spec.overrideRules[0].overriders."

func TestValidateOverridePolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*policyv1alpha1.OverridePolicy)
		want []string
	}{
		{name: "valid sample policy", mod: func(*policyv1alpha1.OverridePolicy) {}},
		{name: "no selectors and a rule for all clusters", mod: func(op *policyv1alpha1.OverridePolicy) {
			op.Spec.ResourceSelectors = nil
			op.Spec.OverrideRules[0].TargetCluster = nil
		}},
		{name: "deprecated targetCluster and overriders alone", mod: func(op *policyv1alpha1.OverridePolicy) {
			op.Spec.TargetCluster = op.Spec.OverrideRules[0].TargetCluster
			op.Spec.Overriders = op.Spec.OverrideRules[0].Overriders
			op.Spec.OverrideRules = nil
		}},

		// metadata and selectors
		{name: "invalid name", mod: func(op *policyv1alpha1.OverridePolicy) { op.Name = "-op" },
			want: []string{"metadata.name: Invalid value"}},
		{name: "selector in another namespace", mod: func(op *policyv1alpha1.OverridePolicy) { op.Spec.ResourceSelectors[0].Namespace = "other" },
			want: []string{"spec.resourceSelectors[0].namespace: Invalid value"}},
		{name: "selector without kind", mod: func(op *policyv1alpha1.OverridePolicy) { op.Spec.ResourceSelectors[0].Kind = "" },
			want: []string{"spec.resourceSelectors[0].kind: Required value"}},

		// rules vs deprecated fields
		{name: "overrideRules with targetCluster and overriders", mod: func(op *policyv1alpha1.OverridePolicy) {
			op.Spec.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
			op.Spec.Overriders = policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "c", Operator: policyv1alpha1.OverriderOpAdd}}}
		}, want: []string{"spec.targetCluster: Forbidden", "spec.overriders: Forbidden"}},
		{name: "target cluster field selector", mod: func(op *policyv1alpha1.OverridePolicy) {
			op.Spec.OverrideRules[0].TargetCluster.FieldSelector = &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{fieldReq("foo", corev1.NodeSelectorOpGt)}}
		}, want: []string{
			"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].key: Unsupported value",
			"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].operator: Unsupported value",
		}},

		// plaintext
		{name: "plaintext paths must be JSON pointers", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).Plaintext[0].Path = "spec/size"
			rule0(op).Plaintext[1].Path = "/metadata/a~2b"
			rule0(op).Plaintext = append(rule0(op).Plaintext, policyv1alpha1.PlaintextOverrider{Operator: policyv1alpha1.OverriderOpRemove})
		}, want: []string{
			rule0Path + "plaintext[0].path: Invalid value",
			rule0Path + "plaintext[1].path: Invalid value",
			rule0Path + "plaintext[2].path: Required value",
		}},
		{name: "plaintext operator and value", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).Plaintext = []policyv1alpha1.PlaintextOverrider{
				{Path: "/spec/a", Operator: "update", Value: jsonValue("1")},
				{Path: "/spec/b", Operator: policyv1alpha1.OverriderOpReplace},
				{Path: "/spec/c", Operator: policyv1alpha1.OverriderOpAdd, Value: jsonValue("null")},
				{Path: "/spec/d", Operator: policyv1alpha1.OverriderOpRemove, Value: jsonValue(`"x"`)},
				{Path: "/spec/e~1f", Operator: policyv1alpha1.OverriderOpRemove},
				{Path: "/spec/g"},
			}
		}, want: []string{
			rule0Path + "plaintext[0].operator: Unsupported value",
			rule0Path + "plaintext[1].value: Required value",
			rule0Path + "plaintext[2].value: Required value",
			rule0Path + "plaintext[3].value: Forbidden",
			rule0Path + "plaintext[5].operator: Required value",
		}},

		// image
		{name: "image overriders", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).ImageOverrider = []policyv1alpha1.ImageOverrider{
				{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd, Value: "test-repo"},
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpRemove, Value: "ignored"},
				{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: policyv1alpha1.Repository, Operator: policyv1alpha1.OverriderOpReplace, Value: "app"},
				{Component: "Digest", Operator: policyv1alpha1.OverriderOpReplace, Value: "x"},
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace},
				{Predicate: &policyv1alpha1.ImagePredicate{Path: "image"}, Component: policyv1alpha1.Tag, Operator: "set", Value: "1"},
			}
		}, want: []string{
			rule0Path + "imageOverrider[3].component: Unsupported value",
			rule0Path + "imageOverrider[4].value: Required value",
			rule0Path + "imageOverrider[5].predicate.path: Invalid value",
			rule0Path + "imageOverrider[5].operator: Unsupported value",
		}},

		// command and args
		{name: "command and args overriders", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).CommandOverrider = []policyv1alpha1.CommandArgsOverrider{
				{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"--parameter1=foo"}},
				{Operator: policyv1alpha1.OverriderOpRemove},
			}
			rule0(op).ArgsOverrider = []policyv1alpha1.CommandArgsOverrider{
				{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpReplace, Value: []string{"--x"}},
			}
		}, want: []string{
			rule0Path + "commandOverrider[1].containerName: Required value",
			rule0Path + "argsOverrider[0].operator: Unsupported value",
		}},

		// labels and annotations
		{name: "labels overriders", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).LabelsOverrider = []policyv1alpha1.LabelAnnotationOverrider{
				{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"env": "member1"}},
				{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"testannotation~projectId": "x"}},
				{Operator: policyv1alpha1.OverriderOpReplace, Value: map[string]string{"env": "not a value!"}},
				{Operator: policyv1alpha1.OverriderOpRemove},
			}
		}, want: []string{
			rule0Path + "labelsOverrider[1].value: Invalid value",
			rule0Path + "labelsOverrider[2].value: Invalid value",
			rule0Path + "labelsOverrider[3].value: Required value",
		}},
		{name: "annotations overriders", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).AnnotationsOverrider = []policyv1alpha1.LabelAnnotationOverrider{
				{Operator: policyv1alpha1.OverriderOpRemove, Value: map[string]string{"note": ""}},
				{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"bad key": "x"}},
				{Operator: "merge", Value: map[string]string{"a": "b"}},
			}
		}, want: []string{
			rule0Path + "annotationsOverrider[1].value: Invalid value",
			rule0Path + "annotationsOverrider[2].operator: Unsupported value",
		}},

		// field overriders
		{name: "field overriders", mod: func(op *policyv1alpha1.OverridePolicy) {
			rule0(op).FieldOverrider = []policyv1alpha1.FieldOverrider{
				{FieldPath: "/data/config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: jsonValue(`"db.member1"`)}}},
				{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/key", Operator: policyv1alpha1.OverriderOpRemove}}},
				{FieldPath: "/data/both",
					JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/key", Operator: policyv1alpha1.OverriderOpRemove}},
					YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/key", Operator: policyv1alpha1.OverriderOpRemove}}},
				{FieldPath: "data/neither"},
				{FieldPath: "/data/x", JSON: []policyv1alpha1.JSONPatchOperation{
					{SubPath: "/key", Operator: policyv1alpha1.OverriderOpRemove, Value: jsonValue("1")},
					{Operator: policyv1alpha1.OverriderOpAdd, Value: jsonValue("1")},
				}},
				{FieldPath: "/data/y", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/k", Operator: policyv1alpha1.OverriderOpAdd}}},
			}
		}, want: []string{
			rule0Path + "fieldOverrider[2].yaml: Forbidden",
			rule0Path + "fieldOverrider[3].fieldPath: Invalid value",
			rule0Path + "fieldOverrider[3]: Required value",
			rule0Path + "fieldOverrider[4].json[0].value: Forbidden",
			rule0Path + "fieldOverrider[4].json[1].subPath: Required value",
			rule0Path + "fieldOverrider[5].yaml[0].value: Required value",
		}},
		{name: "deprecated overriders are validated too", mod: func(op *policyv1alpha1.OverridePolicy) {
			op.Spec.OverrideRules = nil
			op.Spec.Overriders = policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "spec", Operator: policyv1alpha1.OverriderOpRemove}}}
		}, want: []string{"spec.overriders.plaintext[0].path: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, ValidateOverridePolicy(validOP(tc.mod)), tc.want)
		})
	}
}

func TestValidateOverridePolicyUpdate(t *testing.T) {
	t.Parallel()
	old := validOP(func(op *policyv1alpha1.OverridePolicy) { op.ResourceVersion = "1" })
	tests := []struct {
		name string
		mod  func(*policyv1alpha1.OverridePolicy)
		want []string
	}{
		{name: "rules change", mod: func(op *policyv1alpha1.OverridePolicy) { rule0(op).Plaintext = rule0(op).Plaintext[:1] }},
		{name: "namespace is immutable", mod: func(op *policyv1alpha1.OverridePolicy) {
			op.Namespace = "other"
			op.Spec.ResourceSelectors[0].Namespace = "other"
		}, want: []string{"metadata.namespace: Invalid value"}},
		{name: "create rules apply", mod: func(op *policyv1alpha1.OverridePolicy) { rule0(op).Plaintext[0].Path = "" },
			want: []string{rule0Path + "plaintext[0].path: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			op := old.DeepCopy()
			tc.mod(op)
			checkErrors(t, ValidateOverridePolicyUpdate(op, old), tc.want)
		})
	}
}

func TestValidateClusterOverridePolicy(t *testing.T) {
	t.Parallel()
	valid := func() *policyv1alpha1.ClusterOverridePolicy {
		return &policyv1alpha1.ClusterOverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "all-deployments", ResourceVersion: "1"},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "v1", Kind: "ConfigMap", Namespace: "team-a"}},
				OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
					LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"flotilla.io/overridden": "true"}}},
				}}},
			},
		}
	}
	tests := []struct {
		name       string
		mod        func(*policyv1alpha1.ClusterOverridePolicy)
		want       []string
		wantUpdate []string // when it differs from want
	}{
		{name: "valid, selectors in any namespace", mod: func(*policyv1alpha1.ClusterOverridePolicy) {}},
		{name: "cluster-scoped", mod: func(cop *policyv1alpha1.ClusterOverridePolicy) { cop.Namespace = "default" },
			want: []string{"metadata.namespace: Forbidden"}, wantUpdate: []string{"metadata.namespace: Invalid value"}},
		{name: "spec rules apply", mod: func(cop *policyv1alpha1.ClusterOverridePolicy) {
			cop.Spec.TargetCluster = &policyv1alpha1.ClusterAffinity{}
		}, want: []string{"spec.targetCluster: Forbidden"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cop := valid()
			tc.mod(cop)
			checkErrors(t, ValidateClusterOverridePolicy(cop), tc.want)
			wantUpdate := tc.want
			if tc.wantUpdate != nil {
				wantUpdate = tc.wantUpdate
			}
			checkErrors(t, ValidateClusterOverridePolicyUpdate(cop, valid()), wantUpdate)
		})
	}
}
