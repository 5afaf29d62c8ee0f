package dependencies

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Event reasons, Karmada's (API-SPEC §14).
const (
	EventReasonGetDependenciesSucceed                  = "GetDependenciesSucceed"
	EventReasonGetDependenciesFailed                   = "GetDependenciesFailed"
	EventReasonSyncScheduleResultToDependenciesSucceed = "SyncScheduleResultToDependenciesSucceed"
	EventReasonSyncScheduleResultToDependenciesFailed  = "SyncScheduleResultToDependenciesFailed"
	EventReasonDependencyPolicyConflict                = "DependencyPolicyConflict"
)

// requirerPolicy is what an attached binding takes from the bindings that
// require it.
type requirerPolicy struct {
	ConflictResolution          policyv1alpha1.ConflictResolution
	PreserveResourcesOnDeletion bool
}

func policyOf(spec *workv1alpha2.ResourceBindingSpec) requirerPolicy {
	cr := spec.ConflictResolution
	if cr != policyv1alpha1.ConflictOverwrite {
		cr = policyv1alpha1.ConflictAbort
	}
	return requirerPolicy{ConflictResolution: cr, PreserveResourcesOnDeletion: ptr.Deref(spec.PreserveResourcesOnDeletion, false)}
}

// mergePolicies is the policy of an attached binding required by bindings
// with the given policies: theirs when they agree; when they disagree, the
// safe choice (Abort: never take over a member object some requirer did not
// allow to; preserve: never delete what some requirer wanted kept), with a
// message naming each conflict. No requirer: Abort, not preserved.
func mergePolicies(ps []requirerPolicy) (requirerPolicy, string) {
	if len(ps) == 0 {
		return requirerPolicy{ConflictResolution: policyv1alpha1.ConflictAbort}, ""
	}
	out := ps[0]
	var conflicts []string
	for _, p := range ps[1:] {
		if p.ConflictResolution != policyv1alpha1.ConflictOverwrite {
			out.ConflictResolution = policyv1alpha1.ConflictAbort
		}
		out.PreserveResourcesOnDeletion = out.PreserveResourcesOnDeletion || p.PreserveResourcesOnDeletion
	}
	if cr := distinct(ps, func(p requirerPolicy) string { return string(p.ConflictResolution) }); len(cr) > 1 {
		conflicts = append(conflicts, fmt.Sprintf("ConflictResolution conflicted (%s)", strings.Join(cr, " vs ")))
	}
	if pr := distinct(ps, func(p requirerPolicy) string { return strconv.FormatBool(p.PreserveResourcesOnDeletion) }); len(pr) > 1 {
		conflicts = append(conflicts, fmt.Sprintf("PreserveResourcesOnDeletion conflicted (%s)", strings.Join(pr, " vs ")))
	}
	return out, strings.Join(conflicts, "; ")
}

// distinct lists the distinct values of f over ps, in first-seen order.
func distinct(ps []requirerPolicy, f func(requirerPolicy) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ps {
		if v := f(p); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
