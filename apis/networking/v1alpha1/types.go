package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=multiclusteringresses,scope=Namespaced,shortName=mci,categories={karmada-io}

// MultiClusterIngress is an Ingress whose backends may run in several member
// clusters; a multi-cluster cloud provider implements it.
type MultiClusterIngress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Ingress, as for networking.k8s.io/v1.
	// +optional
	Spec networkingv1.IngressSpec `json:"spec,omitempty"`
	// Status is the load balancer state and where the backends run.
	// +optional
	Status MultiClusterIngressStatus `json:"status,omitempty"`
}

// MultiClusterIngressStatus is the observed state of a MultiClusterIngress.
type MultiClusterIngressStatus struct {
	// IngressStatus is the load balancer state, as for networking.k8s.io/v1.
	networkingv1.IngressStatus `json:",inline"`
	// TrafficBlockClusters are the clusters whose backends must get no traffic (Remedy action TrafficControl).
	// +optional
	TrafficBlockClusters []string `json:"trafficBlockClusters,omitempty"`
	// ServiceLocations are the clusters each backend Service runs in.
	// +optional
	ServiceLocations []ServiceLocation `json:"serviceLocations,omitempty"`
}

// ServiceLocation is the clusters a backend Service of an ingress runs in.
type ServiceLocation struct {
	// Name is the Service, in the namespace of the MultiClusterIngress.
	Name string `json:"name"`
	// Clusters are the clusters the Service runs in.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MultiClusterIngressList is a list of MultiClusterIngresses.
type MultiClusterIngressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the MultiClusterIngresses.
	Items []MultiClusterIngress `json:"items"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=multiclusterservices,scope=Namespaced,shortName=mcs,categories={karmada-io}

// MultiClusterService exposes the Service of the same name and namespace
// across member clusters: to other clusters (CrossCluster) or through an
// external load balancer (LoadBalancer).
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is how and where the Service is exposed.
	Spec MultiClusterServiceSpec `json:"spec"`
	// Status is the exposure state: conditions ServiceApplied and EndpointSliceDispatched, and the load balancer.
	// +optional
	Status corev1.ServiceStatus `json:"status,omitempty"`
}

// MultiClusterServiceSpec is how and where a Service is exposed.
type MultiClusterServiceSpec struct {
	// Types is how the Service is exposed: exactly one type, immutable.
	Types []ExposureType `json:"types"`
	// Ports are the Service ports to expose; empty means all of them.
	// +optional
	Ports []ExposurePort `json:"ports,omitempty"`
	// Range is the clusters to expose to, for CrossCluster.
	// Deprecated: use ProviderClusters and ConsumerClusters.
	// +optional
	Range ExposureRange `json:"range,omitempty"`
	// ServiceProvisionClusters are the clusters whose endpoints back the Service; empty means all.
	// Deprecated: use ProviderClusters.
	// +optional
	ServiceProvisionClusters []string `json:"serviceProvisionClusters,omitempty"`
	// ServiceConsumptionClusters are the clusters the Service is exposed to; empty means all.
	// Deprecated: use ConsumerClusters.
	// +optional
	ServiceConsumptionClusters []string `json:"serviceConsumptionClusters,omitempty"`
	// ProviderClusters are the clusters whose endpoints back the Service; empty means all.
	// +optional
	ProviderClusters []ClusterSelector `json:"providerClusters,omitempty"`
	// ConsumerClusters are the clusters the Service is exposed to; empty means all.
	// +optional
	ConsumerClusters []ClusterSelector `json:"consumerClusters,omitempty"`
}

// ClusterSelector selects one cluster by name.
type ClusterSelector struct {
	// Name is the name of the cluster.
	Name string `json:"name,omitempty"`
}

// ExposureType is how a Service is exposed.
type ExposureType string

const (
	// ExposureTypeCrossCluster makes the Service reachable from other member clusters.
	ExposureTypeCrossCluster ExposureType = "CrossCluster"
	// ExposureTypeLoadBalancer exposes the Service through an external load balancer.
	ExposureTypeLoadBalancer ExposureType = "LoadBalancer"
)

// ExposurePort is one Service port to expose.
type ExposurePort struct {
	// Name is the name of the port in the Service.
	// +optional
	Name string `json:"name,omitempty"`
	// Port is the port number.
	Port int32 `json:"port"`
}

// ExposureRange is the clusters a Service is exposed to.
type ExposureRange struct {
	// ClusterNames are the clusters; empty means all.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MultiClusterServiceList is a list of MultiClusterServices.
type MultiClusterServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the MultiClusterServices.
	Items []MultiClusterService `json:"items"`
}
