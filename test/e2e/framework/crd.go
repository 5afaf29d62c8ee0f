package framework

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OpenCRD is the manifest of a namespaced CRD of gvr whose schema keeps
// any spec and status (with a status subresource), kind its kind; with
// clusters, followed by the ClusterPropagationPolicy policy that takes the
// CRD to them.
func OpenCRD(gvr schema.GroupVersionResource, kind, policy string, clusters ...string) string {
	name := gvr.Resource + "." + gvr.Group
	out := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]s}
spec:
  group: %[2]s
  names: {kind: %[3]s, listKind: %[3]sList, plural: %[4]s, singular: %[5]s}
  scope: Namespaced
  versions:
  - name: %[6]s
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, name, gvr.Group, kind, gvr.Resource, strings.ToLower(kind), gvr.Version)
	if len(clusters) == 0 {
		return out
	}
	return out + fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %s}
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: %s}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, policy, name, strings.Join(clusters, ", "))
}
