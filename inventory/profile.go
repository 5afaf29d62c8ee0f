// Package inventory computes, from a Cluster, the ClusterProfile of the
// SIG-Multicluster Cluster Inventory API (KEP-4322) Flotilla publishes for
// it as the clusters' manager: its identity, version, health, properties
// and the access provider through the control plane's cluster proxy. It is
// pure: the controller that writes profiles reads caches, calls Profile and
// writes once.
package inventory

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
)

// Manager is the cluster manager's name in every profile Flotilla writes
// (spec.clusterManager.name and the x-k8s.io/cluster-manager label), and
// the name of its access provider.
const Manager = "flotilla"

// Properties Flotilla publishes besides the About API's cluster ID and the
// cluster's labels (each label a property of its own key).
const (
	PropertyRegion              = "topology.kubernetes.io/region"
	PropertyZones               = "topology.kubernetes.io/zone"
	PropertyProvider            = "flotilla.io/provider"
	PropertyNodes               = "flotilla.io/node-count"
	PropertyReadyNodes          = "flotilla.io/ready-node-count"
	PropertyAllocatableCPU      = "flotilla.io/allocatable-cpu"
	PropertyAllocatableMemory   = "flotilla.io/allocatable-memory"
	maxPropertyName             = 253
	maxPropertyValue            = 1024
	reasonJoined                = "ClusterJoined"
	reasonHealthUnknown         = "ClusterStatusUnknown"
	messageJoined               = "The cluster is managed by Flotilla."
	messageHealthNotYetReported = "Flotilla has not reported the cluster's health yet."
)

// Access is how consumers reach members: through the control plane's
// cluster proxy, with their own credentials for the control plane.
type Access struct {
	// Server is the control plane's URL (scheme, host and port).
	Server string
	// CAData is the control plane's serving CA bundle (PEM).
	CAData []byte
}

// Profile is the ClusterProfile of c in namespace: named after it,
// labelled with its manager, its status from c's status.
func Profile(c *clusterv1alpha1.Cluster, namespace string, a Access) *unstructured.Unstructured {
	p := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"displayName":    c.Name,
			"clusterManager": map[string]any{"name": Manager},
		},
		"status": Status(c, a),
	}}
	p.SetAPIVersion(multiclusterv1alpha1.SchemeGroupVersion.String())
	p.SetKind(multiclusterv1alpha1.ClusterProfileKind)
	p.SetNamespace(namespace)
	p.SetName(c.Name)
	p.SetLabels(map[string]string{multiclusterv1alpha1.LabelClusterManager: Manager})
	return p
}

// Status is the status of c's ClusterProfile, as JSON content: the
// Kubernetes version, the conditions ControlPlaneHealthy (c's Ready) and
// Joined, the properties (sorted by name) and the access provider.
// Nothing in it changes unless c's status does, so writing it again is a
// no-op.
func Status(c *clusterv1alpha1.Cluster, a Access) map[string]any {
	status := map[string]any{
		"conditions":      conditions(c),
		"properties":      properties(c),
		"accessProviders": []any{accessProvider(c.Name, a)},
	}
	if v := c.Status.KubernetesVersion; v != "" {
		status["version"] = map[string]any{"kubernetes": v}
	}
	return status
}

// conditions are ControlPlaneHealthy, from c's Ready condition, and Joined,
// true since c was created.
func conditions(c *clusterv1alpha1.Cluster) []any {
	healthy := map[string]any{"type": multiclusterv1alpha1.ConditionControlPlaneHealthy, "status": string(metav1.ConditionUnknown),
		"reason": reasonHealthUnknown, "message": messageHealthNotYetReported, "lastTransitionTime": timestamp(c.CreationTimestamp)}
	if ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); ready != nil {
		healthy["status"], healthy["lastTransitionTime"] = string(ready.Status), timestamp(ready.LastTransitionTime)
		if ready.Reason != "" {
			healthy["reason"] = ready.Reason
		}
		healthy["message"] = ready.Message
	}
	joined := map[string]any{"type": multiclusterv1alpha1.ConditionJoined, "status": string(metav1.ConditionTrue),
		"reason": reasonJoined, "message": messageJoined, "lastTransitionTime": timestamp(c.CreationTimestamp)}
	return []any{healthy, joined}
}

// timestamp is t as the API writes it.
func timestamp(t metav1.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// properties are c's: the About API's cluster ID, region, zones, provider,
// node counts, allocatable CPU and memory, and its labels; empty values
// are left out, values cut to the schema's bound, sorted by name.
func properties(c *clusterv1alpha1.Cluster) []any {
	props := map[string]string{
		multiclusterv1alpha1.PropertyClusterID: c.Spec.ID,
		PropertyRegion:                         c.Spec.Region,
		PropertyZones:                          strings.Join(zones(c), ","),
		PropertyProvider:                       c.Spec.Provider,
	}
	if n := c.Status.NodeSummary; n != nil {
		props[PropertyNodes] = strconv.Itoa(int(n.TotalNum))
		props[PropertyReadyNodes] = strconv.Itoa(int(n.ReadyNum))
	}
	if r := c.Status.ResourceSummary; r != nil {
		if q, ok := r.Allocatable[corev1.ResourceCPU]; ok {
			props[PropertyAllocatableCPU] = q.String()
		}
		if q, ok := r.Allocatable[corev1.ResourceMemory]; ok {
			props[PropertyAllocatableMemory] = q.String()
		}
	}
	for k, v := range c.Labels {
		if _, taken := props[k]; !taken {
			props[k] = v
		}
	}
	names := make([]string, 0, len(props))
	for n, v := range props {
		if v != "" && len(n) <= maxPropertyName {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := make([]any, 0, len(names))
	for _, n := range names {
		v := props[n]
		if len(v) > maxPropertyValue {
			v = v[:maxPropertyValue]
		}
		out = append(out, map[string]any{"name": n, "value": v})
	}
	return out
}

// zones are c's zones, its deprecated zone included.
func zones(c *clusterv1alpha1.Cluster) []string {
	z := slices.Clone(c.Spec.Zones)
	if c.Spec.Zone != "" && !slices.Contains(z, c.Spec.Zone) {
		z = append(z, c.Spec.Zone)
	}
	return z
}

// accessProvider points consumers at the control plane's proxy of the
// cluster: a kubeconfig Cluster whose server is the proxy's URL.
func accessProvider(cluster string, a Access) map[string]any {
	kc := map[string]any{"server": strings.TrimSuffix(a.Server, "/") + clusterv1alpha1.ProxyPath(cluster)}
	if len(a.CAData) > 0 {
		kc["certificate-authority-data"] = base64.StdEncoding.EncodeToString(a.CAData)
	}
	return map[string]any{"name": Manager, "cluster": kc}
}
