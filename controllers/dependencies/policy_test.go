package dependencies

import (
	"testing"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestMergePolicies(t *testing.T) {
	over, abort := policyv1alpha1.ConflictOverwrite, policyv1alpha1.ConflictAbort
	p := func(cr policyv1alpha1.ConflictResolution, keep bool) requirerPolicy {
		return requirerPolicy{ConflictResolution: cr, PreserveResourcesOnDeletion: keep}
	}
	for name, tc := range map[string]struct {
		in       []requirerPolicy
		want     requirerPolicy
		conflict string
	}{
		"nobody":             {want: p(abort, false)},
		"one overwrite":      {in: []requirerPolicy{p(over, false)}, want: p(over, false)},
		"agree":              {in: []requirerPolicy{p(over, true), p(over, true)}, want: p(over, true)},
		"overwrite vs abort": {in: []requirerPolicy{p(over, false), p(abort, false)}, want: p(abort, false), conflict: "ConflictResolution conflicted (Overwrite vs Abort)"},
		"abort vs overwrite": {in: []requirerPolicy{p(abort, false), p(over, false)}, want: p(abort, false), conflict: "ConflictResolution conflicted (Abort vs Overwrite)"},
		"preserve differs":   {in: []requirerPolicy{p(over, false), p(over, true)}, want: p(over, true), conflict: "PreserveResourcesOnDeletion conflicted (false vs true)"},
		"both differ": {in: []requirerPolicy{p(over, true), p(abort, false), p(over, false)}, want: p(abort, true),
			conflict: "ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false)"},
	} {
		got, conflict := mergePolicies(tc.in)
		if got != tc.want || conflict != tc.conflict {
			t.Errorf("%s: got %+v %q, want %+v %q", name, got, conflict, tc.want, tc.conflict)
		}
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
