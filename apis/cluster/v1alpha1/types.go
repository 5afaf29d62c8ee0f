package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Cluster is a member cluster of the control plane: where it is, how to reach
// it, and its observed state.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is how to reach and place workloads on the cluster.
	Spec ClusterSpec `json:"spec"`
	// Status is the cluster's observed state.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSyncMode says how the control plane reaches a cluster.
type ClusterSyncMode string

const (
	// Push: the control plane talks to the cluster's API server directly.
	Push ClusterSyncMode = "Push"
	// Pull: an agent in the cluster pulls its work from the control plane.
	Pull ClusterSyncMode = "Pull"
)

// ClusterSpec is the desired state of a Cluster.
type ClusterSpec struct {
	// ID uniquely identifies the cluster, e.g. the uid of its kube-system namespace.
	// +kubebuilder:validation:MaxLength=128000
	// +optional
	ID string `json:"id,omitempty"`
	// SyncMode is Push or Pull.
	SyncMode ClusterSyncMode `json:"syncMode"`
	// APIEndpoint is the URL of the cluster's API server.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`
	// SecretRef names the Secret holding the control plane's credentials for
	// the cluster (keys token and caBundle).
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
	// ImpersonatorSecretRef names the Secret holding the token of the member
	// service account allowed to impersonate users (key token).
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`
	// InsecureSkipTLSVerification skips verifying the cluster's serving certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`
	// ProxyURL is the proxy (http, https or socks5) to reach the cluster through.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`
	// ProxyHeader are headers sent to the proxy; a value may list several
	// values separated by commas.
	// +optional
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`
	// Provider is the cloud provider of the cluster.
	// +optional
	Provider string `json:"provider,omitempty"`
	// Region is the region of the cluster.
	// +optional
	Region string `json:"region,omitempty"`
	// Zone is the zone of the cluster.
	// Deprecated: use Zones. A written Zone is moved into Zones.
	// +optional
	Zone string `json:"zone,omitempty"`
	// Zones are the zones of the cluster.
	// +optional
	Zones []string `json:"zones,omitempty"`
	// Taints repel workloads that do not tolerate them.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// ResourceModels grade the cluster's nodes by their allocatable resources,
	// for estimating how many replicas fit.
	// +optional
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// LocalSecretReference names a Secret in the control plane.
type LocalSecretReference struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace"`
	// Name of the Secret.
	Name string `json:"name"`
}

// ResourceModel is one grade of node: the ranges of resources a node of this
// grade has.
type ResourceModel struct {
	// Grade orders the models; higher grades have more resources.
	Grade uint `json:"grade"`
	// Ranges are the resource ranges of this grade, [Min, Max) each.
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange is the range of one resource in a ResourceModel.
type ResourceModelRange struct {
	// Name is the resource, e.g. cpu or memory.
	Name corev1.ResourceName `json:"name"`
	// Min is the inclusive lower bound.
	Min resource.Quantity `json:"min"`
	// Max is the exclusive upper bound.
	Max resource.Quantity `json:"max"`
}

// Well-known taint keys of clusters.
const (
	// TaintClusterNotReady is added while the cluster's Ready condition is False.
	TaintClusterNotReady = "cluster.karmada.io/not-ready"
	// TaintClusterUnreachable is added while the cluster's Ready condition is Unknown.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"
	// TaintClusterUnschedulable is added by cordon.
	TaintClusterUnschedulable = "cluster.karmada.io/unschedulable"
)

// Condition types of a cluster.
const (
	// ClusterConditionReady says whether the cluster is healthy and ready for workloads.
	ClusterConditionReady = "Ready"
	// ClusterConditionCompleteAPIEnablements says whether APIEnablements lists
	// every API of the cluster (discovery may fail for some groups).
	ClusterConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// KubernetesVersion is the version of the cluster's API server.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// APIEnablements are the APIs the cluster serves.
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`
	// Conditions are the latest observations of the cluster's state.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// NodeSummary counts the cluster's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`
	// ResourceSummary sums the cluster's resources.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`
	// RemedyActions are the actions Remedies ask for on this cluster, e.g. TrafficControl.
	// +optional
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement is one group/version served by the cluster and its resources.
type APIEnablement struct {
	// GroupVersion is the group and version, e.g. apps/v1.
	GroupVersion string `json:"groupVersion"`
	// Resources are the resources of that group/version.
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is a resource and its kind.
type APIResource struct {
	// Name is the plural name of the resource.
	Name string `json:"name"`
	// Kind is the kind of the resource.
	Kind string `json:"kind"`
}

// NodeSummary counts the nodes of a cluster.
type NodeSummary struct {
	// TotalNum is the number of nodes.
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`
	// ReadyNum is the number of Ready nodes.
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums the resources of a cluster.
type ResourceSummary struct {
	// Allocatable is the sum of the nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Allocating is what pods not yet scheduled request.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`
	// Allocated is what scheduled pods request.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// AllocatableModelings count the nodes per resource model grade.
	// +optional
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling counts the nodes of one resource model grade.
type AllocatableModeling struct {
	// Grade is the grade of the resource model.
	Grade uint `json:"grade"`
	// Count is the number of nodes of that grade.
	Count int `json:"count"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Clusters.
	Items []Cluster `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterProxyOptions are the options of a clusters/{name}/proxy request.
type ClusterProxyOptions struct {
	metav1.TypeMeta `json:",inline"`
	// Path is the path to request on the member cluster.
	// +optional
	Path string `json:"path,omitempty"`
}
