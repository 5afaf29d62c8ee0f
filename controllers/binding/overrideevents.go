package binding

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Event reasons of override policies, recorded on templates
// (docs/compatibility.md, Events).
const (
	EventReasonApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	EventReasonApplyOverridePolicyFailed  = "ApplyOverridePolicyFailed"
)

// overrideEvent is one event to record on a template.
type overrideEvent struct {
	eventType, reason, message string
}

// appliedOverrideEvents are the ApplyOverridePolicySucceed events for the
// policies a Work's annotations say were applied for cluster: one per
// policy, cluster override policies first, each in the annotation's order.
func appliedOverrideEvents(workAnnos map[string]string, namespace, cluster string) []overrideEvent {
	var out []overrideEvent
	for _, a := range []struct {
		key    string
		format string
	}{
		{policyv1alpha1.AppliedClusterOverridesAnnotation, "Apply cluster override policy(%s) for cluster(%s) succeed."},
		{policyv1alpha1.AppliedOverridesAnnotation, "Apply override policy(%s) for cluster(%s) succeed."},
	} {
		v := workAnnos[a.key]
		if v == "" {
			continue
		}
		var shadows []struct {
			PolicyName string `json:"policyName"`
		}
		if err := json.Unmarshal([]byte(v), &shadows); err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, s := range shadows {
			if seen[s.PolicyName] {
				continue
			}
			seen[s.PolicyName] = true
			name := s.PolicyName
			if a.key == policyv1alpha1.AppliedOverridesAnnotation {
				name = namespace + "/" + name
			}
			out = append(out, overrideEvent{corev1.EventTypeNormal, EventReasonApplyOverridePolicySucceed, fmt.Sprintf(a.format, name, cluster)})
		}
	}
	return out
}

// overrideFailedEvent is the ApplyOverridePolicyFailed event of cluster.
func overrideFailedEvent(cluster string, err error) overrideEvent {
	return overrideEvent{corev1.EventTypeWarning, EventReasonApplyOverridePolicyFailed,
		fmt.Sprintf("Apply override policies for cluster(%s) failed: %v", cluster, err)}
}
