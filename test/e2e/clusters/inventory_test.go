package clusters

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// profileOf reads cluster's ClusterProfile in the inventory namespace with
// cfg's credentials.
func profileOf(ctx context.Context, cfg *rest.Config, cluster string) (*unstructured.Unstructured, error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return dc.Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(names.InventoryNamespace).Get(ctx, cluster, metav1.GetOptions{})
}

// condition is the status of condition typ of profile p ("" when absent).
func condition(p *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// waitProfile waits until cluster's profile passes check ("" when it does).
func waitProfile(t *testing.T, cluster string, timeout time.Duration, check func(p *unstructured.Unstructured, err error) string) {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		p, err := profileOf(ctx, cfg, cluster)
		return check(p, err)
	})
}

// consumerConfig is how a consumer of the Cluster Inventory API reaches a
// cluster: the profile's access provider (the control plane's proxy of
// the cluster, its CA) with the consumer's own control-plane credentials.
func consumerConfig(t *testing.T, p *unstructured.Unstructured, own *rest.Config) *rest.Config {
	t.Helper()
	providers, _, _ := unstructured.NestedSlice(p.Object, "status", "accessProviders")
	for _, ap := range providers {
		m, _ := ap.(map[string]any)
		if m["name"] != "flotilla" {
			continue
		}
		server, _, _ := unstructured.NestedString(m, "cluster", "server")
		caB64, _, _ := unstructured.NestedString(m, "cluster", "certificate-authority-data")
		ca, err := base64.StdEncoding.DecodeString(caB64)
		if err != nil {
			t.Fatalf("certificate-authority-data: %v", err)
		}
		cfg := rest.CopyConfig(own)
		cfg.Host, cfg.TLSClientConfig = server, rest.TLSClientConfig{CAData: ca}
		return cfg
	}
	t.Fatalf("profile %s has no flotilla access provider: %v", p.GetName(), providers)
	return nil
}

// TestClusterProfiles: every joined cluster has its ClusterProfile in the
// inventory namespace (manager label, Kubernetes version, ControlPlaneHealthy
// and Joined True, the access provider at the control plane's proxy of
// it), a namespace that stays on the control plane; a consumer reading profiles with its own credentials reaches
// member1 through the access provider as itself (its member1 Role lets it
// list pods) and is refused in member2, where it has no rights.
func TestClusterProfiles(t *testing.T) {
	k := karmada(t)
	for _, cluster := range []string{"member1", "member2"} {
		c, err := k.ClusterV1alpha1().Clusters().Get(t.Context(), cluster, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitProfile(t, cluster, time.Minute, func(p *unstructured.Unstructured, err error) string {
			if err != nil {
				return err.Error()
			}
			version, _, _ := unstructured.NestedString(p.Object, "status", "version", "kubernetes")
			manager, _, _ := unstructured.NestedString(p.Object, "spec", "clusterManager", "name")
			server, _, _ := unstructured.NestedSlice(p.Object, "status", "accessProviders")
			switch {
			case p.GetLabels()[multiclusterv1alpha1.LabelClusterManager] != "flotilla" || manager != "flotilla":
				return fmt.Sprintf("manager label %v, spec %q", p.GetLabels(), manager)
			case version == "" || version != c.Status.KubernetesVersion:
				return fmt.Sprintf("version %q, the cluster's %q", version, c.Status.KubernetesVersion)
			case condition(p, multiclusterv1alpha1.ConditionControlPlaneHealthy) != "True" || condition(p, multiclusterv1alpha1.ConditionJoined) != "True":
				return fmt.Sprintf("conditions %v", p.Object["status"])
			case len(server) != 1:
				return fmt.Sprintf("access providers %v", server)
			}
			return ""
		})
	}

	// The inventory namespace is the control plane's: not propagated.
	if _, err := framework.MemberClient(t, "member1").CoreV1().Namespaces().Get(t.Context(), names.InventoryNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1 has the inventory namespace %s: %v, want NotFound", names.InventoryNamespace, err)
	}

	// The consumer: may read profiles and use the proxy of both clusters on
	// the control plane; may list pods in member1's default namespace only.
	host, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "inventory-reader"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{multiclusterv1alpha1.GroupName}, Resources: []string{"clusterprofiles"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := host.RbacV1().ClusterRoles().Create(t.Context(), reader, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "inventory-consumer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "inventory-consumer"}}}
	if _, err := host.RbacV1().ClusterRoleBindings().Create(t.Context(), rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	framework.ProxyServiceAccountConfig(t, "inventory-consumer", "member2")
	own := framework.ProxyServiceAccountConfig(t, "inventory-consumer", "member1")
	m1 := framework.MemberClient(t, "member1")
	if _, err := m1.RbacV1().Roles("default").Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "inventory-consumer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := m1.RbacV1().RoleBindings("default").Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "inventory-consumer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "inventory-consumer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "inventory-consumer"}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for cluster, allowed := range map[string]bool{"member1": true, "member2": false} {
		p, err := profileOf(t.Context(), own, cluster)
		if err != nil {
			t.Fatalf("the consumer reading %s's profile: %v", cluster, err)
		}
		cfg := consumerConfig(t, p, own)
		if want := framework.Env.Host.Server + clusterv1alpha1.ProxyPath(cluster); cfg.Host != want {
			t.Errorf("%s's access provider server %s, want %s", cluster, cfg.Host, want)
		}
		cs := kubernetes.NewForConfigOrDie(cfg)
		framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
			_, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			switch {
			case allowed && err != nil:
				return fmt.Sprintf("listing %s's pods as the consumer: %v", cluster, err)
			case !allowed && !apierrors.IsForbidden(err):
				return fmt.Sprintf("listing %s's pods as the consumer: %v, want Forbidden by the member", cluster, err)
			}
			return ""
		})
	}
}
