// Package security holds the e2e tests that attack Flotilla's access
// paths: an agent identity trying to redirect the control plane,
// replayed and stretched registrations, the proxy's host paths, metrics of
// unreachable members, hostile interpreter scripts and oversized search
// queries. Each attack must be refused, and refused without side effects.
package security

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "security", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s", "-v=2",
			// TestTokenLimits registers one cluster with an unbound token
			// and is refused the second.
			"--max-clusters-per-token=1",
		}},
	}, "member1", "member2")
}

var (
	agentOnce sync.Once
	// agentKubeconfig is the control-plane identity member3's registration
	// issued; no agent runs, the tests use it as an attacker holding it.
	agentKubeconfig string
	agentErr        error
)

// registeredMember3 registers member3 in Pull mode once and returns the
// issued agent kubeconfig.
func registeredMember3(t *testing.T) string {
	t.Helper()
	agentOnce.Do(func() {
		agentKubeconfig, agentErr = framework.Env.Register(context.Background(), "member3")
	})
	if agentErr != nil {
		t.Fatalf("registering member3: %v", agentErr)
	}
	return agentKubeconfig
}

// flotillactl runs flotillactl with args and returns its output.
func flotillactl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := framework.CommandContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), args...).CombinedOutput()
	return string(out), err
}

// newToken creates a bootstrap token with flotillactl token create and
// extra flags, and returns it.
func newToken(t *testing.T, args ...string) string {
	t.Helper()
	out, err := flotillactl(t, append([]string{"token", "create", "--kubeconfig=" + framework.Env.Host.Kubeconfig}, args...)...)
	if err != nil {
		t.Fatalf("flotillactl token create: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

// serviceAccount is the subject of the control plane's service account
// default/<name>; user is how members see it (impersonated).
func serviceAccount(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}
}

// grant creates (or keeps) the ClusterRole name with rules in cs, and binds
// it to subject as <name>-<subject name>.
func grant(t *testing.T, cs kubernetes.Interface, name string, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := cs.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + strings.ReplaceAll(subject.Name, ":", "-")},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{subject}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
