package search

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// grant creates a ClusterRole with rules and binds it to the service
// account default/<sa> of the host (the clientset's cluster).
func grant(t *testing.T, cs kubernetes.Interface, name, sa string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: sa}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// userConfig is the service account default/<name> on the control plane.
func userConfig(t *testing.T, name string) *rest.Config {
	t.Helper()
	return framework.ServiceAccountConfig(t, name)
}

var (
	proxyingRule = rbacv1.PolicyRule{APIGroups: []string{"search.karmada.io"}, Resources: []string{"proxying/proxy", "search"}, Verbs: []string{"*"}}
	member1Rule  = rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"*"}}
	readerRule   = rbacv1.PolicyRule{APIGroups: []string{"", "apps"}, Resources: []string{"pods", "deployments"}, Verbs: []string{"get", "list", "watch"}}
)

// TestPerUserAccess: per user, the control plane's RBAC decides which
// clusters, the member's which objects; the control-plane plugin acts as
// the caller.
func TestPerUserAccess(t *testing.T) {
	setup(t)
	ctx := t.Context()
	host := kubernetes.NewForConfigOrDie(adminConfig(t))
	grant(t, host, "search-proxying", "tom", proxyingRule)
	grant(t, host, "cluster-proxy-member1", "tom", member1Rule)
	grant(t, host, "cluster-proxy-member1", "bob", member1Rule)
	for _, m := range []string{"member1", "member2"} {
		grant(t, member(t, m), "e2e-reader", "tom", readerRule)
	}
	// In member1 tom may also read the Secrets of ns, and nowhere else.
	m1 := member(t, "member1")
	if _, err := m1.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := m1.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tom-secrets"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secrets"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "tom"}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tom, bob := userConfig(t, "tom"), userConfig(t, "bob")
	tomCS := kubernetes.NewForConfigOrDie(through(tom))

	t.Run("a user granted only member1 sees only member1's objects", func(t *testing.T) {
		var got []string
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			l, err := tomCS.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			got = got[:0]
			for _, d := range l.Items {
				got = append(got, d.Annotations[searchv1alpha1.CachedFromClusterAnnotation]+"/"+d.Name)
			}
			return slices.Equal(got, []string{"member1/shared", "member1/web"}), nil
		})
		if err != nil {
			t.Errorf("tom listed %v, want member1's shared and web only", got)
		}
		// Not even a get of member2's api.
		if _, err := tomCS.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("tom getting member2's api: %v, want 404", err)
		}
	})
	t.Run("member RBAC decides which objects", func(t *testing.T) {
		l, err := tomCS.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("tom listing secrets in all namespaces: %v", err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != "token-member1" {
			var names []string
			for _, s := range l.Items {
				names = append(names, s.Namespace+"/"+s.Name)
			}
			t.Errorf("tom listed secrets %v, want only %s/token-member1 (the namespace member1 lets him read)", names, ns)
		}
		// A user with no right on Secrets anywhere gets 403, not an empty list.
		grant(t, host, "search-proxying", "eve", proxyingRule)
		grant(t, host, "cluster-proxy-member1", "eve", member1Rule)
		_, err = kubernetes.NewForConfigOrDie(through(userConfig(t, "eve"))).CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("eve listing secrets: %v, want 403", err)
		}
	})
	t.Run("without proxying/proxy: 403", func(t *testing.T) {
		_, err := kubernetes.NewForConfigOrDie(through(bob)).AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "proxying") {
			t.Errorf("bob listing through proxying: %v, want 403 on proxying/proxy", err)
		}
	})
	t.Run("the control-plane plugin acts as the caller", func(t *testing.T) {
		_, err := tomCS.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:default:tom") {
			t.Errorf("tom listing the control plane's configmaps: %v, want the host's 403 naming tom", err)
		}
		if _, err := kubernetes.NewForConfigOrDie(through(adminConfig(t))).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("admin listing the control plane's configmaps through proxying: %v", err)
		}
	})
	t.Run("full-text search filters the same way", func(t *testing.T) {
		res := fullText(t, tom, "kind:Deployment")
		if got := res.clusters(); !slices.Equal(got, []string{"member1"}) {
			t.Errorf("tom's search found objects of %v, want member1's only", got)
		}
	})
}

type fullTextResult struct {
	Total  int
	Items  []item
	Facets map[string][]struct {
		Term  string
		Count int
	}
}

func (r fullTextResult) clusters() []string {
	var out []string
	for _, it := range r.Items {
		c := it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation]
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func fullText(t *testing.T, cfg *rest.Config, q string) fullTextResult {
	t.Helper()
	var res fullTextResult
	body, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Get().AbsPath(searchPrefix+"fulltext").Param("q", q).DoRaw(t.Context())
	if err != nil {
		t.Fatalf("search %q: %v: %s", q, err, body)
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("search %q: %v: %s", q, err, body)
	}
	return res
}

// TestFullText: a bleve query finds a Deployment by image across
// clusters, with facet counts per cluster; a bad query is a 400 naming the
// position.
func TestFullText(t *testing.T) {
	setup(t)
	admin := adminConfig(t)
	var res fullTextResult
	err := wait.PollUntilContextTimeout(t.Context(), 300*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		res = fullText(t, admin, "image:nginx* kind:Deployment namespace:"+ns)
		return res.Total == 2, nil
	})
	if err != nil {
		t.Fatalf("image:nginx* found %d objects, want web and api: %+v", res.Total, res.Items)
	}
	if got := names(res.Items); !slices.Contains(got, "member1/web") || !slices.Contains(got, "member2/api") {
		t.Errorf("found %v, want member1/web and member2/api", got)
	}
	counts := map[string]int{}
	for _, f := range res.Facets["cluster"] {
		counts[f.Term] = f.Count
	}
	if counts["member1"] != 1 || counts["member2"] != 1 {
		t.Errorf("cluster facets %v, want member1: 1, member2: 1", res.Facets["cluster"])
	}
	body, err := kubernetes.NewForConfigOrDie(admin).CoreV1().RESTClient().Get().AbsPath(searchPrefix+"fulltext").Param("q", "kind:Pod AND (").DoRaw(t.Context())
	if !apierrors.IsBadRequest(err) || !strings.Contains(string(body), "position") {
		t.Errorf("a malformed query: %v %s, want 400 naming the position", err, body)
	}
}

// TestBadInput: bad input is refused with a clear message and changes
// nothing.
func TestBadInput(t *testing.T) {
	setup(t)
	ctx := t.Context()
	sel := func(apiVersion, kind, namespace string) []searchv1alpha1.ResourceSelector {
		return []searchv1alpha1.ResourceSelector{{APIVersion: apiVersion, Kind: kind, Namespace: namespace}}
	}
	for name, tc := range map[string]struct {
		spec  searchv1alpha1.ResourceRegistrySpec
		field string
	}{
		"bad apiVersion": {searchv1alpha1.ResourceRegistrySpec{ResourceSelectors: sel("apps/v1/x", "Deployment", "")}, "spec.resourceSelectors[0].apiVersion"},
		"bad namespace":  {searchv1alpha1.ResourceRegistrySpec{ResourceSelectors: sel("v1", "Pod", "Not_A_Namespace")}, "spec.resourceSelectors[0].namespace"},
		"bad opensearch": {searchv1alpha1.ResourceRegistrySpec{ResourceSelectors: sel("v1", "Pod", ""), BackendStore: &searchv1alpha1.BackendStoreConfig{
			OpenSearch: &searchv1alpha1.OpenSearchConfig{Addresses: []string{"ftp://search"}, SecretRef: clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: "s"}}}}, "spec.backendStore.openSearch.addresses[0]"},
		"bad field key": {searchv1alpha1.ResourceRegistrySpec{ResourceSelectors: sel("v1", "Pod", ""), TargetCluster: policyv1alpha1.ClusterAffinity{
			FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "color", Operator: corev1.NodeSelectorOpIn, Values: []string{"red"}}}}}}, "spec.targetCluster.fieldSelector.matchExpressions[0].key"},
	} {
		reg := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: tc.spec}
		_, err := karmada(t).SearchV1alpha1().ResourceRegistries().Create(ctx, reg, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want 422 naming %s", name, err, tc.field)
		}
	}
	if _, err := karmada(t).SearchV1alpha1().ResourceRegistries().Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused registry exists: %v", err)
	}
	cs := kubernetes.NewForConfigOrDie(through(adminConfig(t)))
	if _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Continue: "garbage", Limit: 1}); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "continue") {
		t.Errorf("a malformed continue token: %v, want 400", err)
	}
	if _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "garbage"}); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "resourceVersion") {
		t.Errorf("a malformed resourceVersion: %v, want 400", err)
	}
	path := searchPrefix + "cache/api/v1/foos"
	if _, err := raw(ctx, adminConfig(t), path); !apierrors.IsNotFound(err) {
		t.Errorf("GET %s: %v, want 404", path, err)
	}
}

// TestRegistryStatusNamesFailures: a registry's Ready condition names
// what could not be cached.
func TestRegistryStatusNamesFailures(t *testing.T) {
	setup(t)
	reg := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "unknown-kind"}, Spec: searchv1alpha1.ResourceRegistrySpec{
		TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
		ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "example.com/v1", Kind: "Gizmo"}},
	}}
	k := karmada(t)
	if _, err := k.SearchV1alpha1().ResourceRegistries().Create(t.Context(), reg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = k.SearchV1alpha1().ResourceRegistries().Delete(context.Background(), reg.Name, metav1.DeleteOptions{})
	}()
	var cond *metav1.Condition
	err := wait.PollUntilContextTimeout(t.Context(), 300*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := k.SearchV1alpha1().ResourceRegistries().Get(ctx, reg.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for i := range r.Status.Conditions {
			if r.Status.Conditions[i].Type == "Ready" {
				cond = &r.Status.Conditions[i]
			}
		}
		return cond != nil && cond.Reason == "CacheFailed", nil
	})
	if err != nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "example.com/v1 Gizmo in member1: the cluster does not serve this kind") {
		t.Errorf("Ready condition %+v, want False/CacheFailed naming Gizmo in member1", cond)
	}
}
