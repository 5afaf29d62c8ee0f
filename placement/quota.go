package placement

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Usage is what replicas with req take of a quota, under every name a
// quota may list it by: each requested resource as <name> and
// requests.<name>, and one pod each as pods and count/pods.
func Usage(replicas int32, req *workv1alpha2.ReplicaRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	if replicas <= 0 {
		return out
	}
	n := int64(replicas)
	out[corev1.ResourcePods] = *resource.NewQuantity(n, resource.DecimalSI)
	out["count/pods"] = *resource.NewQuantity(n, resource.DecimalSI)
	if req == nil {
		return out
	}
	for name, q := range req.ResourceRequest {
		total := q.DeepCopy()
		total.Mul(n)
		out[name] = total
		out[corev1.ResourceName("requests."+string(name))] = total
	}
	return out
}

// Add sums resource lists.
func Add(lists ...corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, l := range lists {
		for name, q := range l {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	return out
}

// BindingUsage is what the scheduling result clusters of a binding with
// spec take of a quota (Karmada's FederatedQuotaEnforcement): each
// cluster's replicas at spec.replicaRequirements, or, for a workload
// described by components, each component's replicas in the cluster at
// that component's requirements (a cluster listing no components holds
// one whole set: every component with all its replicas).
func BindingUsage(spec *workv1alpha2.ResourceBindingSpec, clusters []workv1alpha2.TargetCluster) corev1.ResourceList {
	var parts []corev1.ResourceList
	for _, tc := range clusters {
		if len(spec.Components) == 0 {
			parts = append(parts, Usage(tc.Replicas, spec.ReplicaRequirements))
			continue
		}
		for _, comp := range spec.Components {
			n := comp.Replicas
			if len(tc.Components) > 0 {
				n = 0
				for _, c := range tc.Components {
					if c.Name == comp.Name {
						n += c.Replicas
					}
				}
			}
			var req *workv1alpha2.ReplicaRequirements
			if comp.ReplicaRequirements != nil {
				req = &workv1alpha2.ReplicaRequirements{ResourceRequest: comp.ReplicaRequirements.ResourceRequest}
			}
			parts = append(parts, Usage(n, req))
		}
	}
	return Add(parts...)
}

// Within keeps the resources of used that overall names: what a
// FederatedResourceQuota reports as status.overallUsed.
func Within(used, overall corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name := range overall {
		if q, ok := used[name]; ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// OverallExceeded checks a binding write against the overall limit of the
// FederatedResourceQuota namespace/quota: the binding used old and would
// use requested, the namespace's other bindings use others. Only a
// resource overall names whose use the write raises can exceed: a write
// that keeps or lowers every use passes even beyond the limit (a quota
// lowered below what runs must not block scaling down). The message is
// Karmada's webhook denial as the API server words it, for the first such
// resource by name (QuotaDenial).
func OverallExceeded(namespace, quota string, overall, others, old, requested corev1.ResourceList) (string, bool) {
	names := make([]string, 0, len(overall))
	for name := range overall {
		names = append(names, string(name))
	}
	slices.Sort(names)
	for _, n := range names {
		name := corev1.ResourceName(n)
		want, ok := requested[name]
		if !ok || want.Cmp(old[name]) <= 0 {
			continue
		}
		sum := others[name].DeepCopy()
		sum.Add(want)
		if limit := overall[name]; sum.Cmp(limit) > 0 {
			return QuotaDenial(fmt.Sprintf("FederatedResourceQuota(%s/%s) exceeded for resource %s: requested sum %s, limit %s.",
				namespace, quota, name, sum.String(), limit.String())), true
		}
	}
	return "", false
}

// QuotaDenial is why Karmada's resourcebinding webhook denied a write, as
// the API server reports a webhook's denial (and scripts match it).
func QuotaDenial(why string) string {
	return fmt.Sprintf("admission webhook %q denied the request: %s", workv1alpha2.ResourceBindingWebhookName, why)
}

// ReasonQuotaExceeded is the reason of the 403 with which
// flotilla-apiserver refuses a ResourceBinding write that OverallExceeded
// refuses; the same word as the binding's Scheduled condition then carries.
const ReasonQuotaExceeded = metav1.StatusReason(workv1alpha2.BindingReasonQuotaExceeded)

// NewQuotaRefusal is flotilla-apiserver's refusal of a write of binding
// name that OverallExceeded refuses with msg: a 403 whose message is msg
// (Karmada's webhook denial) as is, without the "is forbidden" preamble of
// an authorization failure, and whose reason is ReasonQuotaExceeded so
// that the binding's writers can tell the two apart (apierrors.IsForbidden
// still holds).
func NewQuotaRefusal(name, msg string) *apierrors.StatusError {
	err := apierrors.NewForbidden(workv1alpha2.Resource("resourcebindings"), name, errors.New(msg))
	err.ErrStatus.Reason = ReasonQuotaExceeded
	err.ErrStatus.Message = msg
	return err
}

// IsQuotaRefusal tells whether err is that refusal.
func IsQuotaRefusal(err error) bool {
	return apierrors.ReasonForError(err) == ReasonQuotaExceeded
}

// CheckQuotas refuses (an Error of reason QuotaExceeded) a decision that
// would take the namespace of a binding with spec over the overall limit
// of one of its FederatedResourceQuotas (overalls, by quota name): the
// scheduler's check before it writes clusters in place of spec.Clusters.
// others is what the namespace's other bindings use; it is asked only when
// the decision raises the binding's use.
func CheckQuotas(namespace string, spec *workv1alpha2.ResourceBindingSpec, clusters []workv1alpha2.TargetCluster,
	overalls map[string]corev1.ResourceList, others func() (corev1.ResourceList, error)) error {
	if namespace == "" || len(overalls) == 0 {
		return nil
	}
	requested := BindingUsage(spec, clusters)
	current := BindingUsage(spec, spec.Clusters)
	if !raises(requested, current) {
		return nil
	}
	used, err := others()
	if err != nil {
		return err
	}
	quotas := make([]string, 0, len(overalls))
	for q := range overalls {
		quotas = append(quotas, q)
	}
	slices.Sort(quotas)
	for _, q := range quotas {
		if msg, exceeded := OverallExceeded(namespace, q, overalls[q], used, current, requested); exceeded {
			return &Error{Reason: workv1alpha2.BindingReasonQuotaExceeded, Message: msg}
		}
	}
	return nil
}

// raises tells whether requested uses more of some resource than current.
func raises(requested, current corev1.ResourceList) bool {
	for name, q := range requested {
		if q.Cmp(current[name]) > 0 {
			return true
		}
	}
	return false
}
