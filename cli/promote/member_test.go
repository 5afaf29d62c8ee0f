package promote

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// testMapper maps Deployments (apps/v1), ConfigMaps (v1) and ClusterRoles
// (rbac v1), with kubectl's short name deploy.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	return m
}

func TestMappingFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg     string
		want    string // kind.group; "" for an error
		wantErr string
	}{
		{arg: "deployment", want: "Deployment.apps"},
		{arg: "deployments", want: "Deployment.apps"},
		{arg: "Deployment", want: "Deployment.apps"},
		{arg: "deployment.v1.apps", want: "Deployment.apps"},
		{arg: "deployments.apps", want: "Deployment.apps"},
		{arg: "configmap", want: "ConfigMap"},
		{arg: "clusterrole", want: "ClusterRole.rbac.authorization.k8s.io"},
		{arg: "clusterroles.rbac.authorization.k8s.io", want: "ClusterRole.rbac.authorization.k8s.io"},
		{arg: "widgets", wantErr: `cluster(member1) doesn't have a resource type "widgets"`},
		{arg: "widget.example.com", wantErr: `cluster(member1) doesn't have a resource type "widget"`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			t.Parallel()
			m, err := MappingFor(testMapper(), tc.arg, "cluster(member1)")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.GroupVersionKind.GroupKind().String(); got != tc.want {
				t.Errorf("kind %s, want %s", got, tc.want)
			}
		})
	}
}
