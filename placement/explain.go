package placement

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/selectors"
)

// Explain says, for every cluster of in, whether the binding runs there
// (its spec.clusters) and, when not, the first reason the algorithm gives
// now for leaving it out, with the available replicas of the clusters that
// pass the filters and the static weights of a StaticWeight division: the
// explain subresource's clusters, by name. The decision made on the way is
// returned too (its error is the one scheduling would meet now).
func Explain(in Input) ([]flotillav1alpha1.ClusterPlacement, Decision, error) {
	dec, schedErr := Schedule(in)
	held := assigned(in.Spec.Clusters)
	quota := ""
	if c := meta(in.Status, workv1alpha2.Scheduled); c != nil && c.Status == metav1.ConditionFalse && c.Reason == workv1alpha2.BindingReasonQuotaExceeded {
		quota = c.Message
	}
	var weights map[string]int64
	if p := in.Spec.Placement; p != nil && divided(p) && staticWeighted(p) {
		weights = staticWeightsOf(in.Clusters, p)
	}
	out := make([]flotillav1alpha1.ClusterPlacement, 0, len(in.Clusters))
	for _, c := range in.Clusters {
		cp := flotillav1alpha1.ClusterPlacement{Name: c.Name}
		considered, known := dec.Considered[c.Name]
		available, feasible := availableIn(considered)
		if feasible {
			cp.AvailableReplicas = &available
		}
		if w, ok := weights[c.Name]; ok {
			cp.Weight = &w
		}
		replicas, selected := held[c.Name]
		switch {
		case selected:
			cp.Selected, cp.Replicas = true, replicas
			cp.Message = "Selected"
			if in.Spec.Replicas > 0 {
				cp.Message = fmt.Sprintf("Selected: %d of %d replicas", replicas, in.Spec.Replicas)
			}
			if feasible {
				cp.Message += fmt.Sprintf(" (%s)", considered)
			}
		case c.DeletionTimestamp != nil:
			cp.Reason, cp.Message = flotillav1alpha1.ReasonClusterDeleting, "The cluster is being removed."
		case known && !feasible:
			cp.Reason, cp.Message = refusalReason(considered), considered
		case quota != "":
			cp.Reason, cp.Message = flotillav1alpha1.ReasonQuota, quota
		case feasible && schedErr != nil:
			cp.Reason, cp.Message = failureReason(schedErr), fmt.Sprintf("Passed the filters (%s), but scheduling fails: %s", considered, schedErr.Error())
		case feasible && available == 0 && in.Spec.Replicas > 0:
			cp.Reason, cp.Message = flotillav1alpha1.ReasonInsufficientReplicas, fmt.Sprintf("Passed the filters, but can run no more replicas (%s)%s.", considered, perReplica(in.Spec.ReplicaRequirements))
		case feasible:
			cp.Reason, cp.Message = flotillav1alpha1.ReasonNotSelected, fmt.Sprintf("Passed the filters (%s), but other clusters were chosen: better placed (where the binding already runs), with more available replicas, or first by name, within the spread constraints.", considered)
		default:
			// Not reached by the filters: a clusterAffinities term before it
			// scheduled, or scheduling stopped early.
			cp.Reason, cp.Message = failureReason(schedErr), "Not considered by the term in use."
			if schedErr != nil {
				cp.Message = schedErr.Error()
			}
		}
		out = append(out, cp)
	}
	return out, dec, schedErr
}

// meta finds a condition of status.
func meta(status *workv1alpha2.ResourceBindingStatus, typ string) *metav1.Condition {
	if status == nil {
		return nil
	}
	for i := range status.Conditions {
		if status.Conditions[i].Type == typ {
			return &status.Conditions[i]
		}
	}
	return nil
}

// availableRE reads the available replicas (or sets) the decision records
// for a cluster that passed the filters.
var availableRE = regexp.MustCompile(`^available (-?\d+)( sets)?$`)

func availableIn(considered string) (int64, bool) {
	m := availableRE.FindStringSubmatch(considered)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// refusalReason is the machine-readable reason of a filter's refusal.
func refusalReason(msg string) string {
	switch {
	case msg == refusedAPI:
		return flotillav1alpha1.ReasonAPINotEnabled
	case strings.HasPrefix(msg, refusedTaintPrefix):
		if strings.Contains(msg, "{"+clusterv1alpha1.TaintClusterUnschedulable) {
			return flotillav1alpha1.ReasonCordoned
		}
		return flotillav1alpha1.ReasonTaintNotTolerated
	case msg == refusedAffinity:
		return flotillav1alpha1.ReasonClusterAffinity
	case strings.HasPrefix(msg, refusedSpreadPrefix):
		return flotillav1alpha1.ReasonSpreadConstraint
	case msg == refusedEviction:
		return flotillav1alpha1.ReasonEvicting
	case msg == refusedWorkloadAffinity, msg == refusedWorkloadAntiAffinity:
		return flotillav1alpha1.ReasonWorkloadAffinity
	case msg == noSet:
		return flotillav1alpha1.ReasonInsufficientReplicas
	}
	return flotillav1alpha1.ReasonNotSelected
}

// failureReason is the reason for the feasible clusters when scheduling
// fails as a whole.
func failureReason(err error) string {
	var se *Error
	if err == nil || !errors.As(err, &se) {
		return flotillav1alpha1.ReasonNotSelected
	}
	if strings.Contains(se.Message, "spreadConstraint") || strings.Contains(se.Message, "MinGroups") {
		return flotillav1alpha1.ReasonSpreadConstraint
	}
	return flotillav1alpha1.ReasonInsufficientReplicas
}

// perReplica says what one replica asks for, for a message.
func perReplica(req *workv1alpha2.ReplicaRequirements) string {
	if req == nil || len(req.ResourceRequest) == 0 {
		return ""
	}
	names := make([]string, 0, len(req.ResourceRequest))
	for n := range req.ResourceRequest {
		names = append(names, string(n))
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := req.ResourceRequest[corev1.ResourceName(n)]
		parts = append(parts, n+" "+q.String())
	}
	return "; each replica requests " + strings.Join(parts, ", ")
}

// staticWeightsOf is each cluster's weight under p's static weight list:
// the first rule whose target cluster matches it.
func staticWeightsOf(clusters []*clusterv1alpha1.Cluster, p *policyv1alpha1.Placement) map[string]int64 {
	out := map[string]int64{}
	for _, c := range clusters {
		for _, rule := range p.ReplicaScheduling.WeightPreference.StaticWeightList {
			if selectors.ClusterMatches(c, &rule.TargetCluster) {
				out[c.Name] = rule.Weight
				break
			}
		}
	}
	return out
}

// Division is how in's replicas are divided; nil for a template without
// replicas.
func Division(spec *workv1alpha2.ResourceBindingSpec) *flotillav1alpha1.ReplicaDivision {
	if spec.Replicas == 0 {
		return nil
	}
	d := &flotillav1alpha1.ReplicaDivision{Replicas: spec.Replicas, Scheduling: string(policyv1alpha1.ReplicaSchedulingTypeDuplicated)}
	p := spec.Placement
	if p == nil || !divided(p) {
		return d
	}
	d.Scheduling = string(policyv1alpha1.ReplicaSchedulingTypeDivided)
	switch {
	case p.ReplicaScheduling.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		d.Preference = string(policyv1alpha1.ReplicaDivisionPreferenceAggregated)
	case staticWeighted(p):
		d.Preference = "StaticWeight"
	default:
		d.Preference = "DynamicWeight"
	}
	return d
}
