package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OverridePolicy changes the resources of its namespace per target cluster
// before they are applied there.
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to override, where and how.
	Spec OverrideSpec `json:"spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OverridePolicyList is a list of OverridePolicies.
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the OverridePolicies.
	Items []OverridePolicy `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterOverridePolicy changes resources of any namespace, and cluster-scoped
// resources, per target cluster.
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to override, where and how.
	Spec OverrideSpec `json:"spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterOverridePolicyList is a list of ClusterOverridePolicies.
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterOverridePolicies.
	Items []ClusterOverridePolicy `json:"items"`
}

// OverrideSpec is the desired behaviour of a (Cluster)OverridePolicy.
type OverrideSpec struct {
	// ResourceSelectors select the resources to override; empty selects every resource.
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`
	// OverrideRules are the overriders per target cluster; excludes TargetCluster and Overriders.
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`
	// TargetCluster selects the clusters Overriders apply to.
	// Deprecated: use OverrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	// Overriders are applied on TargetCluster.
	// Deprecated: use OverrideRules.
	// +optional
	Overriders Overriders `json:"overriders,omitempty"`
}

// RuleWithCluster is a set of overriders and the clusters they apply to.
type RuleWithCluster struct {
	// TargetCluster selects the clusters; nil selects all clusters.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	// Overriders are the changes to make.
	Overriders Overriders `json:"overriders"`
}

// Overriders are changes to a resource. They are applied in the order image,
// command, args, labels, annotations, field, plaintext.
type Overriders struct {
	// Plaintext are JSON patch operations on the resource.
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`
	// ImageOverrider change container images.
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`
	// CommandOverrider change container commands.
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`
	// ArgsOverrider change container args.
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`
	// LabelsOverrider change the resource's labels.
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`
	// AnnotationsOverrider change the resource's annotations.
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`
	// FieldOverrider patch JSON or YAML text held in a string field.
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is the operation of an overrider.
type OverriderOperator string

// Overrider operators.
const (
	// OverriderOpAdd adds a value.
	OverriderOpAdd OverriderOperator = "add"
	// OverriderOpRemove removes a value.
	OverriderOpRemove OverriderOperator = "remove"
	// OverriderOpReplace replaces a value.
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is one JSON patch operation.
//
// Values of type any are apiextensionsv1.JSON as in Karmada; omitzero keeps an
// absent value off the wire instead of encoding it as null.
type PlaintextOverrider struct {
	// Path is the JSON pointer of the target field.
	Path string `json:"path"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value is the JSON value to add or replace with; must be empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty,omitzero"`
}

// ImageComponent is a part of an image reference [registry/]repository[:tag].
type ImageComponent string

// Image components.
const (
	// Registry is the registry host, e.g. registry.k8s.io.
	Registry ImageComponent = "Registry"
	// Repository is the path without registry and tag, e.g. library/nginx.
	Repository ImageComponent = "Repository"
	// Tag is the tag or digest, e.g. 1.25.
	Tag ImageComponent = "Tag"
)

// ImageOverrider changes one component of images.
type ImageOverrider struct {
	// Predicate selects the image field; nil selects the images of every container of well-known workloads.
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`
	// Component is the part of the image to change: Registry, Repository or Tag.
	Component ImageComponent `json:"component"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value is the component value; required for add and replace, ignored for remove.
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate selects an image field.
type ImagePredicate struct {
	// Path is the JSON pointer of a string field holding an image.
	Path string `json:"path"`
}

// CommandArgsOverrider changes the command or args of a container.
type CommandArgsOverrider struct {
	// ContainerName is the container to change.
	ContainerName string `json:"containerName"`
	// Operator is add (append) or remove (drop matching items).
	Operator OverriderOperator `json:"operator"`
	// Value are the items to append or remove.
	// +optional
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider changes labels or annotations of the resource.
type LabelAnnotationOverrider struct {
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value are the keys and values to add, remove or replace.
	Value map[string]string `json:"value"`
}

// FieldOverrider patches JSON or YAML text held in a string field of the resource.
type FieldOverrider struct {
	// FieldPath is the JSON pointer of the string field, e.g. /data/config.yaml.
	FieldPath string `json:"fieldPath"`
	// JSON are patch operations on JSON text; excludes YAML.
	// +optional
	JSON []JSONPatchOperation `json:"json,omitempty"`
	// YAML are patch operations on YAML text; excludes JSON.
	// +optional
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one patch operation on JSON text.
type JSONPatchOperation struct {
	// SubPath is the JSON pointer inside the text.
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value is the value to add or replace with; must be empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty,omitzero"`
}

// YAMLPatchOperation is one patch operation on YAML text.
type YAMLPatchOperation struct {
	// SubPath is the JSON pointer inside the text.
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value is the value to add or replace with; must be empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty,omitzero"`
}
