package placement

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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

// QuotaExceeded checks the use a binding would have against a
// FederatedResourceQuota's overall limit, given what the namespace's other
// bindings use: only the resources overall names count. It returns
// Karmada's message naming the quota and each exceeded resource, and
// whether any is exceeded.
func QuotaExceeded(quota string, overall, others, requested corev1.ResourceList) (string, bool) {
	var exceeded []string
	for name, limit := range overall {
		want, ok := requested[name]
		if !ok {
			continue
		}
		total := others[name].DeepCopy()
		total.Add(want)
		if total.Cmp(limit) > 0 {
			used := others[name]
			exceeded = append(exceeded, fmt.Sprintf("%s: requested %s, used %s, limited %s", name, want.String(), used.String(), limit.String()))
		}
	}
	if len(exceeded) == 0 {
		return "", false
	}
	slices.Sort(exceeded)
	return fmt.Sprintf("exceeded FederatedResourceQuota %s: %s", quota, strings.Join(exceeded, "; ")), true
}
