package deletionprotection

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// TestHostPolicyExpression compiles the host policy's expression as a new
// expression (the stricter check the host applies when the policy is
// written) and evaluates it on DELETE requests, where object is null.
func TestHostPolicyExpression(t *testing.T) {
	t.Parallel()
	p := HostPolicy()
	if len(p.Spec.Validations) != 1 {
		t.Fatalf("validations: %d", len(p.Spec.Validations))
	}
	v := p.Spec.Validations[0]
	if *v.Message != Message || *v.Reason != metav1.StatusReasonForbidden {
		t.Errorf("message %q reason %q", *v.Message, *v.Reason)
	}
	compiler := plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	eval := compiler.CompileCondition([]plugincel.ExpressionAccessor{&validating.ValidationCondition{Expression: *v.Expression}},
		plugincel.OptionalVariableDeclarations{}, environment.NewExpressions)
	if errs := eval.CompilationErrors(); len(errs) > 0 {
		t.Fatalf("compiling %q: %v", *v.Expression, errs)
	}

	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	tests := []struct {
		name    string
		labels  map[string]any
		allowed bool
	}{
		{name: "Always", labels: map[string]any{Label: Always}},
		{name: "other value", labels: map[string]any{Label: "Never"}, allowed: true},
		{name: "empty value", labels: map[string]any{Label: ""}, allowed: true},
		{name: "other labels", labels: map[string]any{"app": "nginx"}, allowed: true},
		{name: "no labels", allowed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			meta := map[string]any{"name": "nginx", "namespace": "default"}
			if tc.labels != nil {
				meta["labels"] = tc.labels
			}
			old := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}}
			attrs := admission.NewAttributesRecord(nil, old, gvk, "default", "nginx", gvr, "", admission.Delete, &metav1.DeleteOptions{}, false, nil)
			versioned := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedOldObject: old}
			results, _, err := eval.ForInput(context.Background(), versioned, plugincel.CreateAdmissionRequest(attrs, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk)),
				plugincel.OptionalVariableBindings{}, nil, celconfig.RuntimeCELCostBudget)
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 1 || results[0].Error != nil {
				t.Fatalf("results %+v", results)
			}
			if got := results[0].EvalResult.Value(); got != tc.allowed {
				t.Errorf("allowed = %v, want %v", got, tc.allowed)
			}
		})
	}
}

// TestHostPolicyMatch checks what the policy and its binding select: DELETE
// of every resource whose object has the label, denied.
func TestHostPolicyMatch(t *testing.T) {
	t.Parallel()
	m := HostPolicy().Spec.MatchConstraints
	if len(m.ResourceRules) != 1 {
		t.Fatalf("rules %d", len(m.ResourceRules))
	}
	r := m.ResourceRules[0]
	if len(r.Operations) != 1 || r.Operations[0] != admissionregistrationv1.Delete ||
		r.APIGroups[0] != "*" || r.APIVersions[0] != "*" || r.Resources[0] != "*" {
		t.Errorf("rule %+v", r)
	}
	sel := m.ObjectSelector.MatchExpressions
	if len(sel) != 1 || *sel[0].Key != Label || *sel[0].Operator != metav1.LabelSelectorOpExists {
		t.Errorf("object selector %+v", m.ObjectSelector)
	}
	b := HostPolicyBinding()
	if *b.Spec.PolicyName != HostPolicyName || len(b.Spec.ValidationActions) != 1 || b.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Errorf("binding %+v", b.Spec)
	}
}
