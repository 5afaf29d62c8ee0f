package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// s7Registry caches Deployments and Pods of member1 and member2, with the
// optional fields set.
const s7Registry = `
apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: foo}
spec:
  targetCluster:
    clusterNames: [member1, member2]
    labelSelector: {matchLabels: {location: us}}
    fieldSelector:
      matchExpressions:
        - {key: region, operator: In, values: [us-east-1]}
        - {key: zone, operator: NotIn, values: [us-east-1c]}
    exclude: [member3]
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment}
    - {apiVersion: v1, kind: Pod, namespace: default}
  backendStore:
    openSearch:
      addresses: ["https://opensearch.karmada-system:9200", "http://10.0.0.1:9200"]
      secretRef: {namespace: karmada-system, name: opensearch-credentials}
`

func validRegistry(t *testing.T) *searchv1alpha1.ResourceRegistry {
	t.Helper()
	r := &searchv1alpha1.ResourceRegistry{}
	if err := yaml.UnmarshalStrict([]byte(s7Registry), r); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return r
}

func TestValidateResourceRegistry(t *testing.T) {
	t.Parallel()
	type rr = searchv1alpha1.ResourceRegistry
	expr := func(r *rr, i int) *corev1.NodeSelectorRequirement {
		return &r.Spec.TargetCluster.FieldSelector.MatchExpressions[i]
	}
	tests := []struct {
		name    string
		mutate  func(*rr)
		wantErr string
	}{
		{"full manifest", func(*rr) {}, ""},
		{"all clusters, in memory", func(r *rr) {
			r.Spec.TargetCluster, r.Spec.BackendStore = policyv1alpha1.ClusterAffinity{}, nil
		}, ""},
		{"namespaced", func(r *rr) { r.Namespace = "default" }, "metadata.namespace: Forbidden"},
		{"name not a DNS subdomain", func(r *rr) { r.Name = "Foo_1" }, "metadata.name: Invalid"},
		{"bad label selector", func(r *rr) {
			r.Spec.TargetCluster.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}
		}, "spec.targetCluster.labelSelector.matchLabels"},
		{"field key not supported", func(r *rr) { expr(r, 0).Key = "provider.name" }, "spec.targetCluster.fieldSelector.matchExpressions[0].key: Unsupported value: \"provider.name\""},
		{"field key missing", func(r *rr) { expr(r, 0).Key = "" }, "spec.targetCluster.fieldSelector.matchExpressions[0].key: Required"},
		{"field operator not supported", func(r *rr) { expr(r, 1).Operator = corev1.NodeSelectorOpExists }, "spec.targetCluster.fieldSelector.matchExpressions[1].operator: Unsupported value: \"Exists\""},
		{"field operator missing", func(r *rr) { expr(r, 1).Operator = "" }, "spec.targetCluster.fieldSelector.matchExpressions[1].operator: Required"},
		{"field values missing", func(r *rr) { expr(r, 0).Values = nil }, "spec.targetCluster.fieldSelector.matchExpressions[0].values: Required"},
		{"empty cluster name", func(r *rr) { r.Spec.TargetCluster.ClusterNames[1] = "" }, "spec.targetCluster.clusterNames[1]: Required"},
		{"empty excluded name", func(r *rr) { r.Spec.TargetCluster.ExcludeClusters[0] = "" }, "spec.targetCluster.exclude[0]: Required"},
		{"no resource selectors", func(r *rr) { r.Spec.ResourceSelectors = nil }, "spec.resourceSelectors: Required"},
		{"selector without apiVersion", func(r *rr) { r.Spec.ResourceSelectors[0].APIVersion = "" }, "spec.resourceSelectors[0].apiVersion: Required"},
		{"selector bad apiVersion", func(r *rr) { r.Spec.ResourceSelectors[0].APIVersion = "apps/v1/x" }, "spec.resourceSelectors[0].apiVersion: Invalid"},
		{"selector apiVersion without version", func(r *rr) { r.Spec.ResourceSelectors[0].APIVersion = "apps/" }, "spec.resourceSelectors[0].apiVersion: Invalid"},
		{"selector without kind", func(r *rr) { r.Spec.ResourceSelectors[1].Kind = "" }, "spec.resourceSelectors[1].kind: Required"},
		{"selector bad namespace", func(r *rr) { r.Spec.ResourceSelectors[1].Namespace = "Default" }, "spec.resourceSelectors[1].namespace: Invalid"},
		{"opensearch without addresses", func(r *rr) { r.Spec.BackendStore.OpenSearch.Addresses = nil }, "spec.backendStore.openSearch.addresses: Required"},
		{"opensearch ftp address", func(r *rr) { r.Spec.BackendStore.OpenSearch.Addresses[1] = "ftp://10.0.0.1:21" }, "spec.backendStore.openSearch.addresses[1]: Invalid"},
		{"opensearch address without scheme", func(r *rr) { r.Spec.BackendStore.OpenSearch.Addresses[0] = "opensearch:9200" }, "spec.backendStore.openSearch.addresses[0]: Invalid"},
		{"opensearch address without host", func(r *rr) { r.Spec.BackendStore.OpenSearch.Addresses[0] = "https:///x" }, "spec.backendStore.openSearch.addresses[0]: Invalid value: \"https:///x\": must have a host"},
		{"opensearch unparseable address", func(r *rr) { r.Spec.BackendStore.OpenSearch.Addresses[0] = "https://a b" }, "spec.backendStore.openSearch.addresses[0]: Invalid"},
		{"opensearch secret without namespace", func(r *rr) { r.Spec.BackendStore.OpenSearch.SecretRef.Namespace = "" }, "spec.backendStore.openSearch.secretRef.namespace: Required"},
		{"opensearch secret bad name", func(r *rr) { r.Spec.BackendStore.OpenSearch.SecretRef.Name = "Creds!" }, "spec.backendStore.openSearch.secretRef.name: Invalid"},
		{"opensearch secret without name", func(r *rr) { r.Spec.BackendStore.OpenSearch.SecretRef.Name = "" }, "spec.backendStore.openSearch.secretRef.name: Required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := validRegistry(t)
			tc.mutate(r)
			validationtest.Expect(t, ValidateResourceRegistry(r).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateResourceRegistryUpdate(t *testing.T) {
	t.Parallel()
	old := validRegistry(t)
	old.ResourceVersion = "1"
	r := old.DeepCopy()
	r.Spec.ResourceSelectors = r.Spec.ResourceSelectors[:1]
	validationtest.Expect(t, ValidateResourceRegistryUpdate(r, old).ToAggregate(), "")
	r.Spec.ResourceSelectors[0].Kind = ""
	validationtest.Expect(t, ValidateResourceRegistryUpdate(r, old).ToAggregate(), "spec.resourceSelectors[0].kind")
	r = old.DeepCopy()
	r.Name = "bar"
	validationtest.Expect(t, ValidateResourceRegistryUpdate(r, old).ToAggregate(), "metadata.name")

	r = old.DeepCopy()
	r.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Cached", LastTransitionTime: metav1.Now()}}
	validationtest.Expect(t, ValidateResourceRegistryStatusUpdate(r, old).ToAggregate(), "")
	r.Status.Conditions[0].Status = "Maybe"
	validationtest.Expect(t, ValidateResourceRegistryStatusUpdate(r, old).ToAggregate(), "status.conditions[0].status")
}
