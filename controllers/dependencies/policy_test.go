package dependencies

import (
	"testing"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestMergeRequirers(t *testing.T) {
	t.Parallel()
	over, abort := policyv1alpha1.ConflictOverwrite, policyv1alpha1.ConflictAbort
	p := func(cr policyv1alpha1.ConflictResolution, keep bool) requirerPolicy {
		return requirerPolicy{ConflictResolution: cr, PreserveResourcesOnDeletion: keep}
	}
	claimed := func(cr policyv1alpha1.ConflictResolution, keep bool) requirer {
		return requirer{policy: p(cr, keep), claimed: true}
	}
	unclaimed := func(cr policyv1alpha1.ConflictResolution, keep bool) requirer { return requirer{policy: p(cr, keep)} }
	const (
		both     = "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false)."
		crOnly   = "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort)."
		keepOnly = "Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted (true vs false)."
	)
	for _, tc := range []struct {
		name     string
		in       []requirer
		want     requirerPolicy
		conflict string
	}{
		{name: "nobody", want: p(abort, false)},
		{name: "one overwrite", in: []requirer{claimed(over, false)}, want: p(over, false)},
		{name: "agree", in: []requirer{claimed(over, true), claimed(over, true)}, want: p(over, true)},
		{name: "overwrite wins over abort", in: []requirer{claimed(over, false), claimed(abort, false)}, want: p(over, false), conflict: crOnly},
		{name: "values named in a fixed order", in: []requirer{claimed(abort, false), claimed(over, false)}, want: p(over, false), conflict: crOnly},
		{name: "preserve wins", in: []requirer{claimed(over, false), claimed(over, true)}, want: p(over, true), conflict: keepOnly},
		{name: "both differ", in: []requirer{claimed(abort, false), claimed(over, true)}, want: p(over, true), conflict: both},
		{name: "both differ across three", in: []requirer{claimed(over, true), claimed(abort, false), claimed(over, false)}, want: p(over, true), conflict: both},
		{name: "a requirer whose policy was deleted does not vote", in: []requirer{claimed(over, true), unclaimed(abort, false)}, want: p(over, true)},
		{name: "the other way round", in: []requirer{unclaimed(over, true), claimed(abort, false)}, want: p(abort, false)},
		{name: "nobody claimed: all vote", in: []requirer{unclaimed(over, false), unclaimed(abort, true)}, want: p(over, true), conflict: both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, conflict := mergeRequirers(tc.in)
			if got != tc.want || conflict != tc.conflict {
				t.Errorf("got %+v %q, want %+v %q", got, conflict, tc.want, tc.conflict)
			}
		})
	}
}

func TestPolicyOf(t *testing.T) {
	for name, tc := range map[string]struct {
		spec workv1alpha2.ResourceBindingSpec
		want requirerPolicy
	}{
		"defaults":  {want: requirerPolicy{ConflictResolution: policyv1alpha1.ConflictAbort}},
		"overwrite": {spec: workv1alpha2.ResourceBindingSpec{ConflictResolution: policyv1alpha1.ConflictOverwrite}, want: requirerPolicy{ConflictResolution: policyv1alpha1.ConflictOverwrite}},
		"preserve": {spec: workv1alpha2.ResourceBindingSpec{PreserveResourcesOnDeletion: ptr.To(true)},
			want: requirerPolicy{ConflictResolution: policyv1alpha1.ConflictAbort, PreserveResourcesOnDeletion: true}},
	} {
		if got := policyOf(&tc.spec); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", name, got, tc.want)
		}
	}
}
