package membership

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/controllers/agentregistration"
	"github.com/flotilla-io/flotilla/names"
)

func TestUnregister(t *testing.T) {
	t.Parallel()
	pull := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3", UID: "c-uid"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: "uid-of-member3"}}
	push := pull.DeepCopy()
	push.Spec.SyncMode = clusterv1alpha1.Push
	other := pull.DeepCopy()
	other.Spec.ID = "another-member"
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		noCP    bool
		wantErr string
	}{
		{name: "pull cluster", cluster: pull},
		{name: "already gone", cluster: nil},
		{name: "member only", cluster: pull, noCP: true},
		{name: "push cluster", cluster: push, wantErr: "use unjoin"},
		{name: "another member", cluster: other, wantErr: "has id another-member"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ours := metav1.ObjectMeta{Labels: createdLabels()}
			withName := func(m metav1.ObjectMeta, ns, name string) metav1.ObjectMeta {
				m.Namespace, m.Name = ns, name
				return m
			}
			member := kubefake.NewClientset(
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "uid-of-member3"}},
				&corev1.Namespace{ObjectMeta: withName(ours, "", "karmada-system")},
				&corev1.Secret{ObjectMeta: withName(ours, "karmada-system", "karmada-agent-config")},
				&corev1.ServiceAccount{ObjectMeta: withName(ours, "karmada-system", "karmada-agent-sa")},
				&rbacv1.ClusterRole{ObjectMeta: withName(ours, "", "karmada-agent")},
				&rbacv1.ClusterRoleBinding{ObjectMeta: withName(ours, "", "karmada-agent")},
			)
			var cpObjs []runtime.Object
			rbac := agentregistration.AgentRBAC(pull)
			cpObjs = append(cpObjs, rbac.ClusterRole, rbac.ClusterRoleBinding)
			for i := range rbac.Roles {
				cpObjs = append(cpObjs, rbac.Roles[i], rbac.RoleBindings[i])
			}
			var karmadaObjs []runtime.Object
			if tc.cluster != nil {
				karmadaObjs = append(karmadaObjs, tc.cluster)
			}
			cp := &controlplane.Clients{Kube: kubefake.NewClientset(cpObjs...), Karmada: karmadafake.NewSimpleClientset(karmadaObjs...)}
			o := NewUnregisterOptions()
			o.ClusterName, o.pollInterval, o.Timeout = "member3", time.Millisecond, time.Second
			if tc.noCP {
				cp = nil
			}
			var out bytes.Buffer
			err := o.run(t.Context(), cp, member, &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if _, err := member.CoreV1().Secrets("karmada-system").Get(t.Context(), "karmada-agent-config", metav1.GetOptions{}); err != nil {
					t.Errorf("refused unregister deleted the agent secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if _, err := member.CoreV1().Secrets("karmada-system").Get(t.Context(), "karmada-agent-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("agent secret kept: %v", err)
			}
			if _, err := member.RbacV1().ClusterRoles().Get(t.Context(), "karmada-agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("member clusterrole kept: %v", err)
			}
			if _, err := member.CoreV1().Namespaces().Get(t.Context(), "karmada-system", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("agent namespace kept: %v", err)
			}
			if cp == nil {
				return
			}
			if _, err := cp.Karmada.ClusterV1alpha1().Clusters().Get(t.Context(), "member3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("cluster kept: %v", err)
			}
			if _, err := cp.Kube.RbacV1().ClusterRoleBindings().Get(t.Context(), names.AgentClusterRoleName("member3"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("agent clusterrolebinding kept: %v", err)
			}
			if _, err := cp.Kube.RbacV1().RoleBindings("karmada-es-member3").Get(t.Context(), names.AgentWorkRoleName("member3"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("agent work rolebinding kept: %v", err)
			}
		})
	}
}
