package v1alpha1

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:path=resourceinterpretercustomizations,scope="Cluster",shortName=ric,categories={karmada-io}
// +kubebuilder:printcolumn:JSONPath=`.spec.target.apiVersion`,name="TARGET-API-VERSION",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.target.kind`,name="TARGET-KIND",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="AGE",type=date

// ResourceInterpreterCustomization declares, in Lua, how to interpret one
// kind of resource. It takes precedence over interpreter webhooks and the
// built-in interpreters.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the target kind and its interpretation rules.
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is the target kind and its rules.
type ResourceInterpreterCustomizationSpec struct {
	// Target is the kind of resource the rules apply to.
	Target CustomizationTarget `json:"target"`
	// Customizations are the interpretation rules, one per operation.
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget is the kind of resource a customization applies to.
type CustomizationTarget struct {
	// APIVersion is the group/version of the target, e.g. apps/v1.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind of the target.
	Kind string `json:"kind"`
}

// CustomizationRules are the Lua rules of a customization; a nil rule leaves
// that operation to the next interpreter.
type CustomizationRules struct {
	// Retention keeps values changed in member clusters (operation Retain, function Retain).
	// +optional
	Retention *LocalValueRetention `json:"retention,omitempty"`
	// ReplicaResource reports replicas and per-replica requirements (InterpretReplica, GetReplicas).
	// +optional
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`
	// ComponentResource reports the components of a multi-template workload (InterpretComponent, GetComponents).
	// +optional
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`
	// ReplicaRevision sets the replicas of the object for one cluster (ReviseReplica, ReviseReplica).
	// +optional
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`
	// StatusReflection picks the status reported from a member (InterpretStatus, ReflectStatus).
	// +optional
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`
	// StatusAggregation folds member statuses into the template (AggregateStatus, AggregateStatus).
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`
	// HealthInterpretation says whether a member's object is healthy (InterpretHealth, InterpretHealth).
	// +optional
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`
	// DependencyInterpretation lists the objects the resource depends on (InterpretDependency, GetDependencies).
	// +optional
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`
}

// LocalValueRetention holds the script of Retain(desiredObj, observedObj).
type LocalValueRetention struct {
	// LuaScript defines the global function Retain and returns the object to apply.
	LuaScript string `json:"luaScript"`
}

// ReplicaResourceRequirement holds the script of GetReplicas(desiredObj).
type ReplicaResourceRequirement struct {
	// LuaScript defines the global function GetReplicas and returns replicas and requirements.
	LuaScript string `json:"luaScript"`
}

// ComponentResourceRequirement holds the script of GetComponents(desiredObj).
type ComponentResourceRequirement struct {
	// LuaScript defines the global function GetComponents and returns the components.
	LuaScript string `json:"luaScript"`
}

// ReplicaRevision holds the script of ReviseReplica(desiredObj, desiredReplica).
type ReplicaRevision struct {
	// LuaScript defines the global function ReviseReplica and returns the revised object.
	LuaScript string `json:"luaScript"`
}

// StatusReflection holds the script of ReflectStatus(observedObj).
type StatusReflection struct {
	// LuaScript defines the global function ReflectStatus and returns the status to report.
	LuaScript string `json:"luaScript"`
}

// StatusAggregation holds the script of AggregateStatus(desiredObj, statusItems).
type StatusAggregation struct {
	// LuaScript defines the global function AggregateStatus and returns the object with status.
	LuaScript string `json:"luaScript"`
}

// HealthInterpretation holds the script of InterpretHealth(observedObj).
type HealthInterpretation struct {
	// LuaScript defines the global function InterpretHealth and returns a boolean.
	LuaScript string `json:"luaScript"`
}

// DependencyInterpretation holds the script of GetDependencies(desiredObj).
type DependencyInterpretation struct {
	// LuaScript defines the global function GetDependencies and returns the dependencies.
	LuaScript string `json:"luaScript"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceInterpreterCustomizationList is a list of ResourceInterpreterCustomizations.
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceInterpreterCustomizations.
	Items []ResourceInterpreterCustomization `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:path=resourceinterpreterwebhookconfigurations,scope="Cluster",categories={karmada-io}

// ResourceInterpreterWebhookConfiguration lists webhooks that interpret
// resources, and which operations on which kinds each one handles. Like
// admissionregistration's configurations it has no spec.
type ResourceInterpreterWebhookConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Webhooks are the interpreter webhooks and what each one handles.
	Webhooks []ResourceInterpreterWebhook `json:"webhooks"`
}

// ResourceInterpreterWebhook is one interpreter webhook.
type ResourceInterpreterWebhook struct {
	// Name is the fully qualified name of the webhook, unique in its configuration.
	Name string `json:"name"`
	// ClientConfig says how to reach the webhook: exactly one of a URL or a Service.
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`
	// Rules are the operations and kinds the webhook handles; it handles a request if any rule matches.
	// +optional
	Rules []RuleWithOperations `json:"rules,omitempty"`
	// TimeoutSeconds bounds a call to the webhook, 1 to 30 seconds; nil means 10.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// InterpreterContextVersions are the ResourceInterpreterContext versions the webhook accepts, preferred first.
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations is a set of operations on a set of kinds.
type RuleWithOperations struct {
	// Operations are the operations the webhook handles; "*" alone means all.
	Operations []InterpreterOperation `json:"operations"`
	// Rule is the kinds the operations apply to.
	Rule `json:",inline"`
}

// Rule selects kinds by group, version and kind; "*" alone in a list matches all.
type Rule struct {
	// APIGroups are the API groups; "" is the core group.
	APIGroups []string `json:"apiGroups"`
	// APIVersions are the API versions.
	APIVersions []string `json:"apiVersions"`
	// Kinds are the kinds.
	Kinds []string `json:"kinds"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceInterpreterWebhookConfigurationList is a list of ResourceInterpreterWebhookConfigurations.
type ResourceInterpreterWebhookConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceInterpreterWebhookConfigurations.
	Items []ResourceInterpreterWebhookConfiguration `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceInterpreterContext is the body exchanged with an interpreter
// webhook: the control plane posts it with Request set and the webhook
// answers with Response set. It is a known type of the group but never served.
type ResourceInterpreterContext struct {
	metav1.TypeMeta `json:",inline"`

	// Request is what the control plane asks.
	// +optional
	Request *ResourceInterpreterRequest `json:"request,omitempty"`
	// Response is what the webhook answers.
	// +optional
	Response *ResourceInterpreterResponse `json:"response,omitempty"`
}

// ResourceInterpreterRequest is one interpretation request.
type ResourceInterpreterRequest struct {
	// UID identifies this request/response round trip; the response copies it.
	UID types.UID `json:"uid"`
	// Kind is the group, version and kind of the object.
	Kind metav1.GroupVersionKind `json:"kind"`
	// Name is the name of the object.
	Name string `json:"name"`
	// Namespace is the namespace of the object, empty if cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Operation is what to interpret.
	Operation InterpreterOperation `json:"operation"`
	// Object is the resource template (desired object).
	// +optional
	Object runtime.RawExtension `json:"object,omitempty"`
	// ObservedObject is the object as observed in a member cluster; set for Retain.
	// +optional
	ObservedObject *runtime.RawExtension `json:"observedObject,omitempty"`
	// DesiredReplicas is the replica count to revise the object to; set for ReviseReplica.
	// +optional
	DesiredReplicas *int32 `json:"replicas,omitempty"`
	// AggregatedStatus are the statuses reported by member clusters; set for AggregateStatus.
	// +optional
	AggregatedStatus []workv1alpha2.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceInterpreterResponse is the answer to one interpretation request.
type ResourceInterpreterResponse struct {
	// UID is copied from the request.
	UID types.UID `json:"uid"`
	// Successful says whether the webhook could interpret the object.
	Successful bool `json:"successful"`
	// Status explains a failure; ignored when Successful is true.
	// +optional
	Status *RequestStatus `json:"status,omitempty"`
	// Patch is a JSON patch (RFC 6902) to apply to the object, for Retain, ReviseReplica and AggregateStatus.
	// +optional
	Patch []byte `json:"patch,omitempty"`
	// PatchType is the type of Patch; only JSONPatch.
	// +optional
	PatchType *PatchType `json:"patchType,omitempty"`
	// ReplicaRequirements are the requirements of each replica, for InterpretReplica.
	// +optional
	ReplicaRequirements *workv1alpha2.ReplicaRequirements `json:"replicaRequirements,omitempty"`
	// Replicas is the declared replica count, for InterpretReplica.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Components are the components of a multi-template workload, for InterpretComponent.
	// +optional
	Components []workv1alpha2.Component `json:"components,omitempty"`
	// Dependencies are the objects the object depends on, for InterpretDependency.
	// +optional
	Dependencies []DependentObjectReference `json:"dependencies,omitempty"`
	// RawStatus is the status to report, for InterpretStatus.
	// +optional
	RawStatus *runtime.RawExtension `json:"rawStatus,omitempty"`
	// Healthy says whether the object is healthy, for InterpretHealth.
	// +optional
	Healthy *bool `json:"healthy,omitempty"`
}

// RequestStatus explains why a request failed.
type RequestStatus struct {
	// Message is a human-readable explanation.
	// +optional
	Message string `json:"message,omitempty"`
	// Code is the HTTP status code of the failure.
	// +optional
	Code int32 `json:"code,omitempty"`
}

// PatchType is the type of a response patch.
type PatchType string

// PatchTypeJSONPatch is an RFC 6902 JSON patch, the only supported type.
const PatchTypeJSONPatch PatchType = "JSONPatch"

// DependentObjectReference names an object another object depends on.
type DependentObjectReference struct {
	// APIVersion is the group/version of the dependency.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind of the dependency.
	Kind string `json:"kind"`
	// Namespace is the namespace of the dependency; empty for cluster-scoped kinds.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the dependency; if empty, LabelSelector selects the dependencies.
	// +optional
	Name string `json:"name,omitempty"`
	// LabelSelector selects dependencies by label when Name is empty.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}
