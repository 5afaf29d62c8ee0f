// Package framework runs an e2e suite against one test-bed environment per
// test binary: Main starts it before the suite's tests and stops it after,
// also when a test fails, panics, times out or the run is interrupted.
package framework

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/controllers/unifiedauth"
	"github.com/flotilla-io/flotilla/test/env"
)

// Env is the running environment of this test binary, set by Main.
var Env *env.Environment

// Main starts an environment with the members opts names, joins the members
// listed in join (push mode, with flotillactl) and waits until they are
// Ready, runs the suite and stops it. Its state is kept under _output/e2e/<suite>/ and its logs under
// _output/logs/e2e/<suite>/<cluster>/<component>.log. The processes are also
// killed by the kernel if the test binary dies without running Main's
// cleanup (Pdeathsig), so a timed-out run leaves nothing behind.
func Main(m *testing.M, suite string, opts env.Options, join ...string) {
	os.Exit(run(m, suite, opts, join))
}

func run(m *testing.M, suite string, opts env.Options, join []string) int {
	root, err := env.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(root, "_output", "e2e", suite)
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(root, "_output", "logs", "e2e", suite)
	}
	// A previous run of this suite that was killed may have left state behind;
	// its processes died with it.
	if err := os.RemoveAll(opts.StateDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = os.RemoveAll(opts.LogDir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	e, err := env.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the %s environment: %v\n", suite, err)
		return 1
	}
	Env = e
	if err := e.JoinAll(ctx, join); err != nil {
		fmt.Fprintln(os.Stderr, err)
		e.Stop(0)
		return 1
	}
	if len(join) > 0 {
		if err := e.WaitClustersReady(ctx, join, 2*time.Minute); err != nil {
			fmt.Fprintln(os.Stderr, err)
			e.Stop(0)
			return 1
		}
	}
	fmt.Printf("e2e %s: environment ready in %.1f s (logs in %s)\n", suite, time.Since(start).Seconds(), opts.LogDir)
	go func() {
		<-signals
		e.Stop(0)
		os.Exit(1)
	}()
	code := m.Run()
	e.Stop(0)
	return code
}

// Member returns the named member of the running environment or fails t.
func Member(t *testing.T, name string) *env.Cluster {
	t.Helper()
	c := Env.Member(name)
	if c == nil {
		t.Fatalf("the environment has no member %q", name)
	}
	return c
}

// ServiceAccountConfig creates the service account default/<name> on the
// control plane (kept if it exists) and returns a client configuration
// that authenticates as it with a fresh token.
func ServiceAccountConfig(t *testing.T, name string) *rest.Config {
	t.Helper()
	host, err := Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := host.CoreV1().ServiceAccounts("default").Create(t.Context(), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tok, err := host.CoreV1().ServiceAccounts("default").CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := Env.Host.CACert()
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: Env.Host.Server, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// ProxyServiceAccountConfig is ServiceAccountConfig for an account the
// control plane allows to reach one cluster's clusters/{name}/proxy only
// (ClusterRole cluster-proxy-<cluster>, bound as <name>-proxy-<cluster>).
// For a named member it returns once the member lets its impersonator act
// as the account (the unified-auth controller ships that grant as a Work,
// so it lands a moment after the host's binding).
func ProxyServiceAccountConfig(t *testing.T, name, cluster string) *rest.Config {
	t.Helper()
	host, err := Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy-" + cluster}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{cluster}, Verbs: []string{"*"},
	}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-proxy-" + cluster},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}}}
	if _, err := host.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := host.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cfg := ServiceAccountConfig(t, name)
	if Env.Member(cluster) != nil {
		waitImpersonable(t, cluster, name)
	}
	return cfg
}

// waitImpersonable waits until every subject of member's impersonator
// ClusterRoleBinding may impersonate the control plane's service account
// default/<name>, as the member's own authorizer judges it.
// A cluster without an impersonator (a Pull cluster: its agent reaches the
// member with its own identity) is not waited for.
func waitImpersonable(t *testing.T, member, name string) {
	t.Helper()
	c, err := Karmada(t).ClusterV1alpha1().Clusters().Get(t.Context(), member, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.ImpersonatorSecretRef == nil {
		return
	}
	cs := MemberClient(t, member)
	Eventually(t, time.Minute, func(ctx context.Context) string {
		b, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, unifiedauth.ImpersonatorName, metav1.GetOptions{})
		if err != nil {
			return "the impersonator's binding in " + member + ": " + err.Error()
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				continue
			}
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   serviceaccount.MakeUsername(s.Namespace, s.Name),
				Groups: serviceaccount.MakeGroupNames(s.Namespace),
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: "impersonate", Resource: "serviceaccounts", Namespace: "default", Name: name,
				},
			}}
			got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return err.Error()
			}
			if !got.Status.Allowed {
				return fmt.Sprintf("%s/%s may not impersonate default/%s in %s yet", s.Namespace, s.Name, name, member)
			}
		}
		return ""
	})
}
