package lua

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// customizationsFor compiles one operation's script for the test kind.
func customizationsFor(t *testing.T, field, script string) *Customizations {
	t.Helper()
	c := NewCustomizations()
	r := ric(t, fmt.Sprintf(`
metadata: {name: empty-tables}
spec:
  target: {apiVersion: example.io/v1, kind: Thing}
  customizations:
    %s:
      luaScript: %q
`, field, script))
	if err := c.Set(r); err != nil {
		t.Fatal(err)
	}
	return c
}

const thing = `
apiVersion: example.io/v1
kind: Thing
metadata: {name: t, namespace: ns}
spec: {}
`

var cpu100m = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}

// An empty table where the result's Go type expects an object (a struct, a
// map or a pointer) is absent, not an unmarshal error; where it expects a
// list it is an empty list.
func TestEmptyTablesInReplicaRequirements(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ret string
		want      *workv1alpha2.ReplicaRequirements
	}{
		{name: "requirements {}", ret: `{}`, want: nil},
		{name: "nodeClaim {}", ret: `{nodeClaim = {}, resourceRequest = {cpu = "100m"}}`,
			want: &workv1alpha2.ReplicaRequirements{ResourceRequest: cpu100m}},
		{name: "Karmada's FlinkDeployment shape", ret: `{resourceRequest = {cpu = "100m"}, nodeClaim = {}, namespace = "ns"}`,
			want: &workv1alpha2.ReplicaRequirements{ResourceRequest: cpu100m, Namespace: "ns"}},
		{name: "resourceRequest {}", ret: `{resourceRequest = {}, priorityClassName = "high"}`,
			want: &workv1alpha2.ReplicaRequirements{PriorityClassName: "high"}},
		{name: "empty maps and lists inside nodeClaim", ret: `{nodeClaim = {nodeSelector = {}, tolerations = {}, hardNodeAffinity = {}}, resourceRequest = {cpu = "100m"}}`,
			want: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{Tolerations: []corev1.Toleration{}}, ResourceRequest: cpu100m}},
		{name: "empty node selector term in a list", ret: `{nodeClaim = {hardNodeAffinity = {nodeSelectorTerms = {{}, {matchExpressions = {{key = "zone", operator = "Exists", values = {}}}}}}}}`,
			want: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{}, {MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists, Values: []string{}}}},
			}}}}},
		{name: "keys matched as encoding/json does", ret: `{NodeClaim = {}, resourcerequest = {cpu = "100m"}}`,
			want: &workv1alpha2.ReplicaRequirements{ResourceRequest: cpu100m}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := customizationsFor(t, "replicaResource", "function GetReplicas(obj) return 2, "+tc.ret+" end")
			n, req, err := c.GetReplicas(object(t, thing))
			if err != nil || n != 2 {
				t.Fatalf("GetReplicas = %d, %v", n, err)
			}
			if diff := cmp.Diff(tc.want, req); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmptyTablesInComponents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ret string
		want      []workv1alpha2.Component
	}{
		{name: "no components", ret: `{}`, want: []workv1alpha2.Component{}},
		{name: "replicaRequirements {}", ret: `{{name = "a", replicas = 1, replicaRequirements = {}}}`,
			want: []workv1alpha2.Component{{Name: "a", Replicas: 1}}},
		{name: "nodeClaim {}", ret: `{{name = "a", replicas = 2, replicaRequirements = {nodeClaim = {}, resourceRequest = {cpu = "100m"}}}}`,
			want: []workv1alpha2.Component{{Name: "a", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpu100m}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := customizationsFor(t, "componentResource", "function GetComponents(obj) return "+tc.ret+" end")
			got, err := c.GetComponents(object(t, thing))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmptyTablesInDependencies(t *testing.T) {
	t.Parallel()
	c := customizationsFor(t, "dependencyInterpretation",
		`function GetDependencies(obj) return {{apiVersion = "v1", kind = "ConfigMap", namespace = "ns", name = "a", labelSelector = {}}, {apiVersion = "v1", kind = "Secret", namespace = "ns", labelSelector = {matchLabels = {app = "x"}, matchExpressions = {}}}} end`)
	got, err := c.GetDependencies(object(t, thing))
	if err != nil {
		t.Fatal(err)
	}
	want := []interpreter.DependentObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "ns", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: []metav1.LabelSelectorRequirement{}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}

// A value that decodes itself (a quantity) keeps its own shape: an empty
// table there is still an error.
func TestEmptyTableAsQuantityFails(t *testing.T) {
	t.Parallel()
	c := customizationsFor(t, "replicaResource", `function GetReplicas(obj) return 1, {nodeClaim = {}, resourceRequest = {cpu = {}}} end`)
	if _, _, err := c.GetReplicas(object(t, thing)); err == nil {
		t.Error("GetReplicas returned no error for an empty table as a quantity")
	}
}
