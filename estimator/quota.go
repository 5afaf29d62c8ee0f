package estimator

import (
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

const (
	requestsPrefix = "requests."
	limitsPrefix   = "limits."
)

// QuotaReplicas returns how many more replicas described by req the
// ResourceQuotas allow, and false when none of them limits anything a
// replica consumes. quotas are those of the replicas' namespace; they are
// not filtered by namespace here.
//
// Each quota that applies to the replicas (QuotaApplies) limits them by
// every entry of status.hard a replica consumes, to
// floor((hard - used) / per-replica), used read from status.used; the
// result is the minimum over all those entries, never negative. An entry
// a replica consumes is:
//   - pods and count/pods: one per replica;
//   - cpu, memory, ephemeral-storage, requests.<same>, requests.hugepages-*,
//     and extended resources (bare or requests.-prefixed), when the replica
//     requests a positive amount of that resource.
//
// limits.* entries are skipped (replicas carry requests only), and so is
// an entry status.used does not list yet (the quota controller has not
// counted it). Everything else (storage, object counts other than pods)
// is not consumed by a replica.
//
// Karmada's ResourceQuota estimator plugin counts cpu, memory and extended
// resources only; pods, count/pods, ephemeral-storage and hugepages are
// counted here too since the member's quota admission rejects a replica
// that exceeds them just the same.
func QuotaReplicas(quotas []*corev1.ResourceQuota, req *workv1alpha2.ReplicaRequirements) (int64, bool) {
	return QuotaReplicasAssuming(quotas, req, nil)
}

// QuotaReplicasAssuming is QuotaReplicas once the assumed replicas of the
// namespace (Assumed.Quota, by priority class) count as used: every quota
// counts those of the priority classes it applies to (QuotaApplies), each
// entry what they consume of it (the entry's resource, or a pod each for
// pods and count/pods), on top of status.used. The member's quota
// admission will count them the same way once their pods are created.
func QuotaReplicasAssuming(quotas []*corev1.ResourceQuota, req *workv1alpha2.ReplicaRequirements, assumed map[string]Usage) (int64, bool) {
	var priorityClass string
	var request corev1.ResourceList
	if req != nil {
		priorityClass, request = req.PriorityClassName, req.ResourceRequest
	}
	n, limited := int64(math.MaxInt64), false
	for _, q := range quotas {
		if q == nil || !QuotaApplies(q, priorityClass) {
			continue
		}
		for name, hard := range q.Status.Hard {
			resource, per := perReplica(name, request)
			if per <= 0 {
				continue
			}
			used, ok := q.Status.Used[name]
			if !ok {
				continue
			}
			taken := value(resource, used) + assumedIn(q, assumed, resource)
			n, limited = min(n, (value(resource, hard)-taken)/per), true
		}
	}
	if !limited {
		return 0, false
	}
	return max(n, 0), true
}

// assumedIn is what the assumed replicas of the priority classes quota
// applies to take of resource (pods: their number).
func assumedIn(quota *corev1.ResourceQuota, assumed map[string]Usage, resource corev1.ResourceName) int64 {
	var n int64
	for class, u := range assumed {
		if !QuotaApplies(quota, class) {
			continue
		}
		if resource == corev1.ResourcePods {
			n += u.pods
		} else {
			n += u.requests[resource]
		}
	}
	return n
}

// perReplica returns the resource a quota entry named name limits and how
// much of it one replica requesting request consumes (in value's unit);
// zero when a replica does not consume it.
func perReplica(name corev1.ResourceName, request corev1.ResourceList) (corev1.ResourceName, int64) {
	if name == corev1.ResourcePods || name == "count/pods" {
		return corev1.ResourcePods, 1
	}
	s := string(name)
	if strings.HasPrefix(s, limitsPrefix) {
		return "", 0
	}
	r := corev1.ResourceName(strings.TrimPrefix(s, requestsPrefix))
	switch {
	case r == corev1.ResourceCPU, r == corev1.ResourceMemory, r == corev1.ResourceEphemeralStorage:
	case strings.HasPrefix(string(r), corev1.ResourceHugePagesPrefix):
	case extended(r):
	default:
		return "", 0
	}
	q, ok := request[r]
	if !ok {
		return "", 0
	}
	return r, value(r, q)
}

// extended reports whether name is an extended resource: a qualified name
// with a domain outside kubernetes.io (nvidia.com/gpu), and not an object
// count (count/services).
func extended(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.HasPrefix(s, corev1.ResourceDefaultNamespacePrefix) &&
		!strings.HasPrefix(s, "count/") && !strings.HasPrefix(s, requestsPrefix) && !strings.HasPrefix(s, limitsPrefix)
}

// QuotaApplies reports whether quota counts replicas of priority class
// priorityClass, the way Karmada's ResourceQuota estimator decides it: a
// quota without scopes applies to every replica; a scoped one applies when
// at least one of its scopes (spec.scopes and spec.scopeSelector) matches.
// Only the PriorityClass scope can match: Terminating, NotTerminating,
// BestEffort, NotBestEffort and CrossNamespacePodAffinity depend on what
// replica requirements do not carry (activeDeadlineSeconds, limits, pod
// affinity), so they never match, and a quota scoped only by them is left
// out.
//
// The kube quota evaluator requires every scope to match; Karmada's "at
// least one" makes a quota combining a PriorityClass scope with one of the
// others apply more often, which errs towards fewer replicas.
func QuotaApplies(quota *corev1.ResourceQuota, priorityClass string) bool {
	if len(quota.Spec.Scopes) == 0 && (quota.Spec.ScopeSelector == nil || len(quota.Spec.ScopeSelector.MatchExpressions) == 0) {
		return true
	}
	for _, s := range quota.Spec.Scopes {
		// A listed scope is an Exists requirement.
		if s == corev1.ResourceQuotaScopePriorityClass && priorityClass != "" {
			return true
		}
	}
	if quota.Spec.ScopeSelector != nil {
		for _, r := range quota.Spec.ScopeSelector.MatchExpressions {
			if r.ScopeName == corev1.ResourceQuotaScopePriorityClass && priorityClassMatches(r, priorityClass) {
				return true
			}
		}
	}
	return false
}

// priorityClassMatches evaluates a PriorityClass scope requirement as a
// label requirement on a set holding the priority class, or nothing when
// there is none.
func priorityClassMatches(r corev1.ScopedResourceSelectorRequirement, priorityClass string) bool {
	switch r.Operator {
	case corev1.ScopeSelectorOpExists:
		return priorityClass != ""
	case corev1.ScopeSelectorOpDoesNotExist:
		return priorityClass == ""
	case corev1.ScopeSelectorOpIn:
		return priorityClass != "" && slices.Contains(r.Values, priorityClass)
	case corev1.ScopeSelectorOpNotIn:
		return priorityClass == "" || !slices.Contains(r.Values, priorityClass)
	}
	return false
}
