package dependencies

import (
	"strings"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Event reasons, Karmada's (docs/compatibility.md, Events).
const (
	EventReasonGetDependenciesSucceed                  = "GetDependenciesSucceed"
	EventReasonGetDependenciesFailed                   = "GetDependenciesFailed"
	EventReasonSyncScheduleResultToDependenciesSucceed = "SyncScheduleResultToDependenciesSucceed"
	EventReasonSyncScheduleResultToDependenciesFailed  = "SyncScheduleResultToDependenciesFailed"
	EventReasonDependencyPolicyConflict                = "DependencyPolicyConflict"
)

// Parts of the DependencyPolicyConflict message, Karmada's wording: the
// values are always named in this order, whichever requirer came first.
const (
	conflictMessagePrefix        = "Dependency policy conflict detected: "
	conflictResolutionConflicted = "ConflictResolution conflicted (Overwrite vs Abort)"
	preserveConflicted           = "PreserveResourcesOnDeletion conflicted (true vs false)"
)

// requirerPolicy is what an attached binding takes from the bindings that
// require it.
type requirerPolicy struct {
	ConflictResolution          policyv1alpha1.ConflictResolution
	PreserveResourcesOnDeletion bool
}

// requirer is the policy of one binding requiring a dependency; claimed
// tells whether a (Cluster)PropagationPolicy still claims the binding.
type requirer struct {
	policy  requirerPolicy
	claimed bool
}

// policyOf is the policy a binding asks of its dependencies; an empty
// conflictResolution counts as Abort.
func policyOf(spec *workv1alpha2.ResourceBindingSpec) requirerPolicy {
	cr := spec.ConflictResolution
	if cr != policyv1alpha1.ConflictOverwrite {
		cr = policyv1alpha1.ConflictAbort
	}
	return requirerPolicy{ConflictResolution: cr, PreserveResourcesOnDeletion: ptr.Deref(spec.PreserveResourcesOnDeletion, false)}
}

// requirerOf is the requirer entry of a binding.
func requirerOf(rb *workv1alpha2.ResourceBinding) requirer {
	_, pp := rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]
	_, cpp := rb.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]
	return requirer{policy: policyOf(&rb.Spec), claimed: pp || cpp}
}

// mergeRequirers is the policy of an attached binding required by rs, as
// Karmada resolves it: Overwrite when any requirer asks for Overwrite (so
// no workload is left without its dependency because a member already had
// one of that name), preserved when any requirer asks to preserve (so
// nothing some requirer wanted kept is deleted). Only requirers still
// claimed by a policy vote: a binding whose policy was deleted keeps its
// dependencies but no longer expresses an intent, so deleting a requirer's
// policy resolves a conflict it caused. When no requirer is claimed, all
// vote. conflict is the DependencyPolicyConflict message when the voters
// disagree, "" otherwise. No requirer: Abort, not preserved.
func mergeRequirers(rs []requirer) (merged requirerPolicy, conflict string) {
	var voters []requirerPolicy
	for _, r := range rs {
		if r.claimed {
			voters = append(voters, r.policy)
		}
	}
	if len(voters) == 0 {
		for _, r := range rs {
			voters = append(voters, r.policy)
		}
	}
	var overwrite, abort, keep, drop bool
	for _, p := range voters {
		if p.ConflictResolution == policyv1alpha1.ConflictOverwrite {
			overwrite = true
		} else {
			abort = true
		}
		if p.PreserveResourcesOnDeletion {
			keep = true
		} else {
			drop = true
		}
	}
	merged = requirerPolicy{ConflictResolution: policyv1alpha1.ConflictAbort, PreserveResourcesOnDeletion: keep}
	if overwrite {
		merged.ConflictResolution = policyv1alpha1.ConflictOverwrite
	}
	var parts []string
	if overwrite && abort {
		parts = append(parts, conflictResolutionConflicted)
	}
	if keep && drop {
		parts = append(parts, preserveConflicted)
	}
	if len(parts) > 0 {
		conflict = conflictMessagePrefix + strings.Join(parts, "; ") + "."
	}
	return merged, conflict
}
