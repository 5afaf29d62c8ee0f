package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PlacementReviewKind is the kind of a dry-run placement.
const PlacementReviewKind = "PlacementReview"

// MaxReviewObjects bounds the objects of one PlacementReview.
const MaxReviewObjects = 1000

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PlacementReview is a dry-run placement (flotillactl apply
// --dry-run=placement): created with manifests (resource templates and the
// policies and override policies that would go with them), it answers, in
// its status, where each template would run, with how many replicas and
// which overrides, by the same policy choice, scheduling and overrides as
// the control plane, over the clusters as they are. Like a
// SubjectAccessReview it is never stored, and nothing is written.
type PlacementReview struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PlacementReviewSpec `json:"spec"`
	// +optional
	Status PlacementReviewStatus `json:"status,omitempty"`
}

// PlacementReviewSpec is what to review.
type PlacementReviewSpec struct {
	// Objects are the manifests, as they would be applied: resource
	// templates, PropagationPolicies, ClusterPropagationPolicies,
	// OverridePolicies and ClusterOverridePolicies (at most 1,000).
	// Namespaced objects name their namespace.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +listType=atomic
	Objects []runtime.RawExtension `json:"objects"`
	// Existing says whether the control plane's own policies, override
	// policies and templates count too: Include (the default; an object of
	// the manifests replaces the existing one of its name, and a policy of
	// the manifests is also reviewed on the existing templates it would
	// claim, those of the namespaces the caller may list) or Ignore (the
	// manifests alone).
	// +optional
	Existing string `json:"existing,omitempty"`
}

// The Existing values of a PlacementReviewSpec.
const (
	ReviewExistingInclude = "Include"
	ReviewExistingIgnore  = "Ignore"
)

// PlacementReviewStatus is the answer.
type PlacementReviewStatus struct {
	// Estimator is where the available replicas come from: Accurate or
	// ResourceSummary.
	// +optional
	Estimator string `json:"estimator,omitempty"`
	// Templates are the reviewed templates: those of the manifests, then
	// the existing ones a policy of the manifests would claim.
	// +optional
	// +listType=atomic
	Templates []TemplatePlacement `json:"templates,omitempty"`
	// Omitted counts the existing templates a policy of the manifests
	// would claim beyond those listed (at most 1,000 are).
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
}

// TemplatePlacement is where one template would run.
type TemplatePlacement struct {
	// APIVersion of the template.
	APIVersion string `json:"apiVersion"`
	// Kind of the template.
	Kind string `json:"kind"`
	// Namespace of the template; empty when cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the template.
	Name string `json:"name"`
	// Existing says the template is the control plane's, not one of the
	// manifests.
	// +optional
	Existing bool `json:"existing,omitempty"`
	// Policy is the policy that would claim the template, as
	// "PropagationPolicy <namespace>/<name>" or "ClusterPropagationPolicy
	// <name>"; empty when none would.
	// +optional
	Policy string `json:"policy,omitempty"`
	// Result is Placed, NoPolicy (no policy would claim the template: it
	// would not be propagated), Unschedulable (the scheduler would fail;
	// the message says why) or Invalid (the template cannot be read).
	Result string `json:"result"`
	// Message says why a template would not be placed.
	// +optional
	Message string `json:"message,omitempty"`
	// Replicas are the template's replicas, when its kind has replicas.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Clusters are where the template would run.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ReviewedCluster `json:"clusters,omitempty"`
}

// The Result values of a TemplatePlacement.
const (
	ReviewPlaced        = "Placed"
	ReviewNoPolicy      = "NoPolicy"
	ReviewUnschedulable = "Unschedulable"
	ReviewInvalid       = "Invalid"
)

// ReviewedCluster is one cluster a template would run on.
type ReviewedCluster struct {
	// Name of the cluster.
	Name string `json:"name"`
	// Replicas the cluster would be assigned, for a template with replicas.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Overrides are the override policies that would change the template
	// there, in the order they apply: "ClusterOverridePolicy <name>" or
	// "OverridePolicy <namespace>/<name>".
	// +optional
	// +listType=atomic
	Overrides []string `json:"overrides,omitempty"`
}
