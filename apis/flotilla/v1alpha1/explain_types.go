package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlacementExplanationKind is the kind the explain subresource of
// ResourceBindings and ClusterResourceBindings answers with.
const PlacementExplanationKind = "PlacementExplanation"

// ExplainSubresource is the bindings' subresource that explains their
// placement: GET resourcebindings/{name}/explain.
const ExplainSubresource = "explain"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PlacementExplanation says, for every cluster, whether a binding's
// template runs there and, when not, the first reason it was not placed
// there, in words and as a machine-readable reason; and how its replicas
// are divided, with the inputs of the division. It is read from the
// explain subresource of a ResourceBinding or ClusterResourceBinding
// (flotillactl explain-placement) and computed on each read by the
// scheduler's own algorithm over the clusters as they are then; it is
// never stored. Its metadata names the binding.
type PlacementExplanation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Template is the binding's resource template, as
	// "<apiVersion> <kind> [<namespace>/]<name>".
	Template string `json:"template"`
	// Scheduled says the binding was scheduled: its Scheduled condition is
	// True. A binding never scheduled, or whose last scheduling failed, is
	// still explained, by what scheduling it now would find.
	Scheduled bool `json:"scheduled"`
	// Message is the binding's Scheduled condition message, or says it was
	// never scheduled.
	Message string `json:"message"`
	// AffinityName is the clusterAffinities term the placement uses, when
	// it has terms.
	// +optional
	AffinityName string `json:"affinityName,omitempty"`
	// Estimator is where the available replicas come from: Accurate (the
	// members' nodes, pods and quotas) or ResourceSummary (the clusters'
	// resource summaries).
	Estimator string `json:"estimator"`
	// Division is how the replicas are divided; absent for a template
	// without replicas.
	// +optional
	Division *ReplicaDivision `json:"division,omitempty"`
	// Clusters are every cluster, by name.
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterPlacement `json:"clusters"`
}

// ReplicaDivision is how a binding's replicas are divided among its
// clusters, and from what.
type ReplicaDivision struct {
	// Replicas are the template's replicas.
	Replicas int32 `json:"replicas"`
	// Scheduling is Karmada's replicaSchedulingType: Duplicated or Divided.
	Scheduling string `json:"scheduling"`
	// Preference is the division preference when Divided: Aggregated,
	// StaticWeight (the weights are in clusters[].weight) or
	// DynamicWeight (by available replicas).
	// +optional
	Preference string `json:"preference,omitempty"`
}

// ClusterPlacement is one cluster's part in a placement.
type ClusterPlacement struct {
	// Name of the cluster.
	Name string `json:"name"`
	// Selected says the binding is placed on the cluster.
	Selected bool `json:"selected"`
	// Replicas the cluster is assigned, when selected.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Reason is why the cluster was not selected, machine-readable (one of
	// the PlacementReason values); empty when selected.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says, in words, why the cluster was or was not selected.
	Message string `json:"message"`
	// AvailableReplicas are the replicas the cluster could still run, as
	// the estimator says, when it passed the filters.
	// +optional
	AvailableReplicas *int64 `json:"availableReplicas,omitempty"`
	// Weight is the cluster's static weight, under a StaticWeight
	// division.
	// +optional
	Weight *int64 `json:"weight,omitempty"`
}

// Reasons of ClusterPlacement: why a cluster was not selected.
const (
	// ReasonAPINotEnabled: the cluster does not serve the template's kind.
	ReasonAPINotEnabled = "APINotEnabled"
	// ReasonTaintNotTolerated: the cluster has a NoSchedule or NoExecute
	// taint the placement does not tolerate (the message names it).
	ReasonTaintNotTolerated = "TaintNotTolerated"
	// ReasonCordoned: the cluster is cordoned (the unschedulable taint).
	ReasonCordoned = "Cordoned"
	// ReasonClusterAffinity: the cluster does not match the placement's
	// cluster affinity (names, label or field selectors, exclusions).
	ReasonClusterAffinity = "ClusterAffinityNotMatched"
	// ReasonSpreadConstraint: the cluster lacks the property a spread
	// constraint spreads by, or the spread constraints left it out.
	ReasonSpreadConstraint = "SpreadConstraint"
	// ReasonInsufficientReplicas: the cluster passed the filters but can run
	// no more replicas (the message has the estimator's numbers).
	ReasonInsufficientReplicas = "InsufficientReplicas"
	// ReasonEvicting: the binding is being evicted from the cluster
	// (a graceful eviction is pending).
	ReasonEvicting = "Evicting"
	// ReasonWorkloadAffinity: the cluster does not run the template's
	// workload affinity group, or runs its anti-affinity group.
	ReasonWorkloadAffinity = "WorkloadAffinity"
	// ReasonQuota: a FederatedResourceQuota refused the placement.
	ReasonQuota = "QuotaExceeded"
	// ReasonNotSelected: the cluster was feasible but not needed (the
	// placement chose others by score, available replicas and name).
	ReasonNotSelected = "NotSelected"
	// ReasonClusterDeleting: the cluster is being removed.
	ReasonClusterDeleting = "ClusterDeleting"
)

// The Estimator values of a PlacementExplanation.
const (
	EstimatorAccurate        = "Accurate"
	EstimatorResourceSummary = "ResourceSummary"
)
