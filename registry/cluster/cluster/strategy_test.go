package cluster

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func TestAgentWrites(t *testing.T) {
	t.Parallel()
	s := NewStrategy(runtime.NewScheme())
	status := NewStatusStrategy(s)
	agent := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{
		Name: names.AgentUserPrefix + "member3", Groups: []string{names.AgentsGroup, user.AllAuthenticated}})
	admin := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}})
	stored := func() *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{}
		c.Name, c.ResourceVersion = "member3", "5"
		c.Spec.SyncMode, c.Spec.ID = clusterv1alpha1.Pull, "uid-3"
		return c
	}
	attack := func(c *clusterv1alpha1.Cluster) {
		c.Spec.APIEndpoint = "https://127.0.0.1:1"
		c.Spec.InsecureSkipTLSVerification = true
		c.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: names.SecretNamespace, Name: "member1"}
	}
	tests := []struct {
		name    string
		write   func(c, old *clusterv1alpha1.Cluster) string
		mutate  func(*clusterv1alpha1.Cluster)
		wantErr []string
	}{
		{"agent reports its region", update(agent, s), func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "edge" }, nil},
		{"agent points its cluster at another member's secret", update(agent, s), attack,
			[]string{"spec.apiEndpoint: Forbidden", "spec.secretRef: Forbidden", "spec.insecureSkipTLSVerification: Forbidden"}},
		{"admin may set the same", update(admin, s), func(c *clusterv1alpha1.Cluster) {
			attack(c)
			c.Spec.SecretRef.Name = "member3"
		}, nil},
		{"agent labels through status", update(agent, status), func(c *clusterv1alpha1.Cluster) { c.Labels = map[string]string{"a": "b"} }, []string{"metadata.labels: Forbidden"}},
		{"agent writes status", update(agent, status), func(c *clusterv1alpha1.Cluster) { c.Status.KubernetesVersion = "v1.36.3" }, nil},
		{"agent creates its own pull cluster", create(agent, s), func(*clusterv1alpha1.Cluster) {}, nil},
		{"agent creates a push cluster", create(agent, s), func(c *clusterv1alpha1.Cluster) {
			c.Spec.SyncMode, c.Spec.APIEndpoint = clusterv1alpha1.Push, "https://10.0.0.1:6443"
		}, []string{"spec.syncMode: Forbidden", "spec.apiEndpoint: Forbidden"}},
		{"agent creates another cluster", create(agent, s), func(c *clusterv1alpha1.Cluster) { c.Name = "member9" }, []string{"metadata.name: Forbidden"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := stored()
			c := old.DeepCopy()
			tc.mutate(c)
			got := tc.write(c, old)
			if len(tc.wantErr) == 0 && got != "" {
				t.Fatalf("refused: %s", got)
			}
			if len(tc.wantErr) > 0 && got == "" {
				t.Fatalf("accepted, want %v", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(got, want) {
					t.Errorf("errors %q do not mention %q", got, want)
				}
			}
		})
	}
}

func update(ctx context.Context, s interface {
	ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList
}) func(c, old *clusterv1alpha1.Cluster) string {
	return func(c, old *clusterv1alpha1.Cluster) string {
		return errString(s.ValidateUpdate(ctx, c, old))
	}
}

func create(ctx context.Context, s Strategy) func(c, _ *clusterv1alpha1.Cluster) string {
	return func(c, _ *clusterv1alpha1.Cluster) string {
		return errString(s.Validate(ctx, c))
	}
}

func errString(errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}
