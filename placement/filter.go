package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/selectors"
)

// filter returns the clusters a binding may be placed on under affinity, and,
// when none may, why each was refused (karmada-scheduler's filter plugins).
// Clusters the binding already runs on skip the API enablement and taint
// checks, so a running workload is not moved by them.
func filter(clusters []*clusterv1alpha1.Cluster, spec *workv1alpha2.ResourceBindingSpec, affinity *policyv1alpha1.ClusterAffinity,
	groups peerClusters) ([]*clusterv1alpha1.Cluster, map[string]string) {
	held := assigned(spec.Clusters)
	var out []*clusterv1alpha1.Cluster
	refused := map[string]string{}
	for _, c := range clusters {
		if c.DeletionTimestamp != nil {
			// Never a candidate, and not worth a reason (Karmada skips it).
			continue
		}
		_, scheduled := held[c.Name]
		why := refuse(c, spec, affinity, scheduled)
		if why == "" && groups.affinity != nil && !groups.affinity[c.Name] {
			why = refusedWorkloadAffinity
		}
		if why == "" && groups.antiAffinity[c.Name] {
			why = refusedWorkloadAntiAffinity
		}
		if why != "" {
			refused[c.Name] = why
			continue
		}
		out = append(out, c)
	}
	return out, refused
}

// Why the filters refuse a cluster, in karmada-scheduler's words (Explain
// reads them back as reasons).
const (
	refusedAPI                  = "cluster(s) did not have the API resource"
	refusedTaintPrefix          = "cluster(s) had untolerated taint "
	refusedAffinity             = "cluster(s) did not match the placement cluster affinity constraint"
	refusedSpreadPrefix         = "cluster(s) did not have "
	refusedEviction             = "cluster(s) is in the process of eviction"
	refusedWorkloadAffinity     = "cluster(s) didn't satisfy workload affinity"
	refusedWorkloadAntiAffinity = "cluster(s) didn't satisfy workload anti-affinity"
)

// refuse returns why c cannot take the binding, or "".
func refuse(c *clusterv1alpha1.Cluster, spec *workv1alpha2.ResourceBindingSpec, affinity *policyv1alpha1.ClusterAffinity, scheduled bool) string {
	if !scheduled && !apiEnabled(c, spec.Resource.APIVersion, spec.Resource.Kind) {
		return refusedAPI
	}
	if !scheduled {
		if t := untolerated(c.Spec.Taints, spec.Placement); t != nil {
			return fmt.Sprintf(refusedTaintPrefix+"{%s}", t.ToString())
		}
	}
	if !selectors.ClusterMatches(c, affinity) {
		return refusedAffinity
	}
	if spec.Placement != nil {
		for _, sc := range spec.Placement.SpreadConstraints {
			if sc.SpreadByField != "" && sc.SpreadByField != policyv1alpha1.SpreadByFieldCluster && groupOf(c, sc) == "" {
				return fmt.Sprintf(refusedSpreadPrefix+"%s property", sc.SpreadByField)
			}
		}
	}
	for _, t := range spec.GracefulEvictionTasks {
		if t.FromCluster == c.Name {
			return refusedEviction
		}
	}
	return ""
}

// apiEnabled tells whether the cluster serves kind in apiVersion.
func apiEnabled(c *clusterv1alpha1.Cluster, apiVersion, kind string) bool {
	for _, e := range c.Status.APIEnablements {
		if e.GroupVersion != apiVersion {
			continue
		}
		for _, r := range e.Resources {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}

// untolerated returns the first NoSchedule or NoExecute taint the
// placement's cluster tolerations do not tolerate.
func untolerated(taints []corev1.Taint, p *policyv1alpha1.Placement) *corev1.Taint {
	var tolerations []corev1.Toleration
	if p != nil {
		tolerations = p.ClusterTolerations
	}
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(klog.Background(), t, false)
		}) {
			return t
		}
	}
	return nil
}

// groupOf is the spread group of c under constraint sc: its provider,
// region, first zone or label value ("" when it has none).
func groupOf(c *clusterv1alpha1.Cluster, sc policyv1alpha1.SpreadConstraint) string {
	if sc.SpreadByLabel != "" {
		return c.Labels[sc.SpreadByLabel]
	}
	switch sc.SpreadByField {
	case policyv1alpha1.SpreadByFieldCluster, "":
		return c.Name
	case policyv1alpha1.SpreadByFieldRegion:
		return c.Spec.Region
	case policyv1alpha1.SpreadByFieldProvider:
		return c.Spec.Provider
	case policyv1alpha1.SpreadByFieldZone:
		if len(c.Spec.Zones) > 0 {
			return c.Spec.Zones[0]
		}
		return c.Spec.Zone
	}
	return ""
}

// fitError is Karmada's "0/N clusters are available: ..." message: how many
// clusters each reason refused, reasons sorted.
func fitError(total int, refused map[string]string) string {
	counts := map[string]int{}
	for _, why := range refused {
		counts[why]++
	}
	var parts []string
	for why, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d clusters are available: %s.", total, strings.Join(parts, ", "))
}
