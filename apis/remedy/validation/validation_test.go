package validation

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

// dnsRemedy blocks traffic to member1 and member2 while their Service DNS
// does not resolve, as in Karmada's remedy example.
const dnsRemedy = `
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: foo}
spec:
  clusterAffinity: {clusterNames: [member1, member2]}
  decisionMatches:
    - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: Equal, conditionStatus: "False"}
    - clusterConditionMatch: {conditionType: Ready, operator: NotEqual, conditionStatus: "True"}
  actions: [TrafficControl]
`

func validRemedy(t *testing.T) *remedyv1alpha1.Remedy {
	t.Helper()
	r := &remedyv1alpha1.Remedy{}
	if err := yaml.UnmarshalStrict([]byte(dnsRemedy), r); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return r
}

func TestValidateRemedy(t *testing.T) {
	t.Parallel()
	type rm = remedyv1alpha1.Remedy
	cond := func(r *rm, i int) *remedyv1alpha1.ClusterConditionRequirement {
		return r.Spec.DecisionMatches[i].ClusterConditionMatch
	}
	tests := []struct {
		name    string
		mutate  func(*rm)
		wantErr string
	}{
		{"valid", func(*rm) {}, ""},
		{"empty spec", func(r *rm) { r.Spec = remedyv1alpha1.RemedySpec{} }, ""},
		{"match without condition", func(r *rm) { r.Spec.DecisionMatches[0].ClusterConditionMatch = nil }, ""},
		{"namespaced", func(r *rm) { r.Namespace = "default" }, "metadata.namespace: Forbidden"},
		{"bad name", func(r *rm) { r.Name = "Foo" }, "metadata.name: Invalid"},
		{"empty cluster name", func(r *rm) { r.Spec.ClusterAffinity.ClusterNames[0] = "" }, "spec.clusterAffinity.clusterNames[0]: Required"},
		{"bad cluster name", func(r *rm) { r.Spec.ClusterAffinity.ClusterNames[1] = "Member2" }, "spec.clusterAffinity.clusterNames[1]: Invalid"},
		{"no condition type", func(r *rm) { cond(r, 0).ConditionType = "" }, "spec.decisionMatches[0].clusterConditionMatch.conditionType: Required"},
		{"no operator", func(r *rm) { cond(r, 1).Operator = "" }, "spec.decisionMatches[1].clusterConditionMatch.operator: Required"},
		{"bad operator", func(r *rm) { cond(r, 1).Operator = "In" }, "spec.decisionMatches[1].clusterConditionMatch.operator: Unsupported value: \"In\""},
		{"no condition status", func(r *rm) { cond(r, 0).ConditionStatus = "" }, "spec.decisionMatches[0].clusterConditionMatch.conditionStatus: Required"},
		{"unknown action", func(r *rm) { r.Spec.Actions = append(r.Spec.Actions, "Evict") }, "spec.actions[1]: Unsupported value: \"Evict\""},
		{"duplicate action", func(r *rm) { r.Spec.Actions = append(r.Spec.Actions, remedyv1alpha1.TrafficControl) }, "spec.actions[1]: Duplicate value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := validRemedy(t)
			tc.mutate(r)
			validationtest.Expect(t, ValidateRemedy(r).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateRemedyUpdate(t *testing.T) {
	t.Parallel()
	old := validRemedy(t)
	old.ResourceVersion = "1"
	r := old.DeepCopy()
	r.Spec.DecisionMatches = nil
	validationtest.Expect(t, ValidateRemedyUpdate(r, old).ToAggregate(), "")
	r.Spec.Actions[0] = "Nothing"
	validationtest.Expect(t, ValidateRemedyUpdate(r, old).ToAggregate(), "spec.actions[0]")
	r = old.DeepCopy()
	r.Name = "bar"
	validationtest.Expect(t, ValidateRemedyUpdate(r, old).ToAggregate(), "metadata.name")
}
