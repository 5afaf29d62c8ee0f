package binding

import (
	"errors"
	"reflect"
	"testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestAppliedOverrideEvents(t *testing.T) {
	for name, tc := range map[string]struct {
		annos map[string]string
		want  []string
	}{
		"none": {},
		"both kinds": {annos: map[string]string{
			policyv1alpha1.AppliedOverridesAnnotation:        `[{"policyName":"op-a","overriders":{}},{"policyName":"op-a","overriders":{}},{"policyName":"op-b","overriders":{}}]`,
			policyv1alpha1.AppliedClusterOverridesAnnotation: `[{"policyName":"cop","overriders":{}}]`,
		}, want: []string{
			"Apply cluster override policy(cop) for cluster(member1) succeed.",
			"Apply override policy(default/op-a) for cluster(member1) succeed.",
			"Apply override policy(default/op-b) for cluster(member1) succeed.",
		}},
		"bad json ignored": {annos: map[string]string{policyv1alpha1.AppliedOverridesAnnotation: `{`}},
	} {
		var got []string
		for _, e := range appliedOverrideEvents(tc.annos, "default", "member1") {
			if e.reason != EventReasonApplyOverridePolicySucceed || e.eventType != "Normal" {
				t.Errorf("%s: event %+v", name, e)
			}
			got = append(got, e.message)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
	e := overrideFailedEvent("member2", errors.New("boom"))
	if e.eventType != "Warning" || e.reason != EventReasonApplyOverridePolicyFailed || e.message != "Apply override policies for cluster(member2) failed: boom" {
		t.Errorf("failed event %+v", e)
	}
}
