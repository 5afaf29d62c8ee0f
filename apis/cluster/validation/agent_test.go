package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func TestAgentCluster(t *testing.T) {
	t.Parallel()
	tests := []struct {
		user   string
		groups []string
		want   string
		ok     bool
	}{
		{"system:karmada:agent:member3", []string{"system:karmada:agents", "system:authenticated"}, "member3", true},
		{"system:karmada:agent:member3", []string{"system:authenticated"}, "", false},
		{"system:karmada:agent:", []string{"system:karmada:agents"}, "", false},
		{"alice", []string{"system:karmada:agents"}, "", false},
	}
	for _, tc := range tests {
		got, ok := AgentCluster(tc.user, tc.groups)
		if got != tc.want || ok != tc.ok {
			t.Errorf("AgentCluster(%q, %v) = %q, %v; want %q, %v", tc.user, tc.groups, got, ok, tc.want, tc.ok)
		}
	}
}

func TestValidateClusterUpdateByAgent(t *testing.T) {
	t.Parallel()
	pull := func() *clusterv1alpha1.Cluster {
		c := validCluster()
		c.Name = "member3"
		c.Labels = map[string]string{"env": "edge"}
		c.Spec.SyncMode, c.Spec.APIEndpoint, c.Spec.SecretRef, c.Spec.ImpersonatorSecretRef = clusterv1alpha1.Pull, "", nil, nil
		c.Spec.ID = "uid-3"
		return c
	}
	tests := []struct {
		name    string
		agentOf string
		mutate  func(*clusterv1alpha1.Cluster)
		wantErr string // "" for allowed
	}{
		{"nothing changed", "member3", func(*clusterv1alpha1.Cluster) {}, ""},
		{"reports provider, region and zones", "member3", func(c *clusterv1alpha1.Cluster) {
			c.Spec.Provider, c.Spec.Region, c.Spec.Zones = "gcp", "eu-west1", []string{"eu-west1-b"}
		}, ""},
		{"another cluster", "member4", func(*clusterv1alpha1.Cluster) {}, "metadata.name: Forbidden: the agent of cluster member4 may not write cluster member3"},
		{"syncMode", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = clusterv1alpha1.Push }, "spec.syncMode: Forbidden"},
		{"apiEndpoint", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://attacker.example" }, "spec.apiEndpoint: Forbidden"},
		{"secretRef", "member3", func(c *clusterv1alpha1.Cluster) {
			c.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: names.SecretNamespace, Name: "member1"}
		}, "spec.secretRef: Forbidden"},
		{"impersonatorSecretRef", "member3", func(c *clusterv1alpha1.Cluster) {
			c.Spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: names.SecretNamespace, Name: "member1"}
		}, "spec.impersonatorSecretRef: Forbidden"},
		{"insecureSkipTLSVerification", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true }, "spec.insecureSkipTLSVerification: Forbidden"},
		{"proxyURL", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "http://attacker:3128" }, "spec.proxyURL: Forbidden"},
		{"proxyHeader", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyHeader = map[string]string{"A": "b"} }, "spec.proxyHeader: Forbidden"},
		{"id", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.ID = "uid-1" }, "spec.id: Forbidden"},
		{"taints removed", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.Taints = nil }, "spec.taints: Forbidden"},
		{"resourceModels", "member3", func(c *clusterv1alpha1.Cluster) { c.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{{Grade: 1}} }, "spec.resourceModels: Forbidden"},
		{"label added", "member3", func(c *clusterv1alpha1.Cluster) { c.Labels["tier"] = "gold" }, "metadata.labels: Forbidden"},
		{"label removed", "member3", func(c *clusterv1alpha1.Cluster) { c.Labels = nil }, "metadata.labels: Forbidden"},
		{"annotation", "member3", func(c *clusterv1alpha1.Cluster) { c.Annotations = map[string]string{"a": "b"} }, "metadata.annotations: Forbidden"},
		{"finalizer", "member3", func(c *clusterv1alpha1.Cluster) { c.Finalizers = []string{"x/y"} }, "metadata.finalizers: Forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := pull()
			old.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
			c := old.DeepCopy()
			tc.mutate(c)
			errs := ValidateClusterUpdateByAgent(tc.agentOf, c, old)
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !strings.Contains(errs.ToAggregate().Error(), tc.wantErr) {
				t.Fatalf("errors %v do not mention %q", errs, tc.wantErr)
			}
		})
	}
}
