package detector

import (
	"encoding/json"
	"testing"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// The binding patch clears what the policy no longer sets, nested too.
func TestBindingPatch(t *testing.T) {
	suspend := func(s policyv1alpha1.Suspension) *workv1alpha2.Suspension {
		return &workv1alpha2.Suspension{Suspension: s}
	}
	for name, tc := range map[string]struct {
		from, to *workv1alpha2.ResourceBindingSpec
		want     string // the spec part of the patch
	}{
		"suspension narrowed to one cluster": {
			from: &workv1alpha2.ResourceBindingSpec{Suspension: suspend(policyv1alpha1.Suspension{Dispatching: ptr.To(true)})},
			to: &workv1alpha2.ResourceBindingSpec{Suspension: suspend(policyv1alpha1.Suspension{
				DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}})},
			want: `{"suspension":{"dispatching":null,"dispatchingOnClusters":{"clusterNames":["member2"]}}}`,
		},
		"spread constraint removed": {
			from: &workv1alpha2.ResourceBindingSpec{Placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1}}}},
			to:   &workv1alpha2.ResourceBindingSpec{Placement: &policyv1alpha1.Placement{}},
			want: `{"placement":{"spreadConstraints":null}}`,
		},
		"nothing changed": {
			from: &workv1alpha2.ResourceBindingSpec{Replicas: 3},
			to:   &workv1alpha2.ResourceBindingSpec{Replicas: 3},
			want: `{}`,
		},
	} {
		b, err := bindingPatch(tc.from, tc.to, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got struct {
			Spec json.RawMessage `json:"spec"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Spec) != tc.want {
			t.Errorf("%s: spec patch %s, want %s", name, got.Spec, tc.want)
		}
	}
}
