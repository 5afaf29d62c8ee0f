package inventory

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	cliinventory "github.com/flotilla-io/flotilla/cli/inventory"
	"github.com/flotilla-io/flotilla/inventory"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// consumerConfig builds the configuration for one profile as the Cluster
// Inventory API's access library does (BuildConfigFromCP): the first
// provider of the provider file, in its order, that the profile has an
// access provider of; the access provider's server and CA; the provider's
// exec plugin, never interactive.
func consumerConfig(p *unstructured.Unstructured, file cliinventory.ProviderFile) (*rest.Config, error) {
	have := map[string]map[string]any{}
	aps, _, _ := unstructured.NestedSlice(p.Object, "status", "accessProviders")
	for _, x := range aps {
		m, _ := x.(map[string]any)
		name, _ := m["name"].(string)
		cluster, _ := m["cluster"].(map[string]any)
		have[name] = cluster
	}
	for _, provider := range file.Providers {
		cluster, ok := have[provider.Name]
		if !ok {
			continue
		}
		server, _ := cluster["server"].(string)
		caB64, _ := cluster["certificate-authority-data"].(string)
		ca, err := base64.StdEncoding.DecodeString(caB64)
		if err != nil {
			return nil, fmt.Errorf("certificate-authority-data: %w", err)
		}
		x := provider.ExecConfig
		return &rest.Config{Host: server, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, ExecProvider: &clientcmdapi.ExecConfig{
			APIVersion: x.APIVersion, Command: x.Command, Args: x.Args, ProvideClusterInfo: x.ProvideClusterInfo,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}, nil
	}
	return nil, fmt.Errorf("no matching cluster accessor found for cluster profile %q", p.GetName())
}

// writeKubeconfig writes a kubeconfig file of cfg (a token user).
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["control-plane"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["consumer"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["consumer"] = &clientcmdapi.Context{Cluster: "control-plane", AuthInfo: "consumer"}
	kc.CurrentContext = "consumer"
	path := filepath.Join(t.TempDir(), "consumer.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConsumerThroughExecPlugin: a consumer set up as samples/
// cluster-inventory.yaml sets it up reads the profiles with its own
// identity, builds each member's configuration from the profile's access
// provider and the provider file flotillactl prints (flotillactl as the
// exec plugin handing client-go the consumer's control-plane token), and
// lists member1's pods as itself (its member1 Role allows it) while
// member2, where it has no rights, refuses it. The plugin hands the token
// to nothing but the control plane.
func TestConsumerThroughExecPlugin(t *testing.T) {
	framework.ApplySample(t, "cluster-inventory.yaml")
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
	kubeconfig := writeKubeconfig(t, own)
	out, err := framework.Flotillactl(t, "inventory", "provider-file", "--kubeconfig="+kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var file cliinventory.ProviderFile
	if err := json.Unmarshal([]byte(out), &file); err != nil {
		t.Fatalf("the provider file: %v\n%s", err, out)
	}

	// The consumer lists Flotilla's profiles with its own identity.
	list, err := hostDynamic(t, own).Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(names.InventoryNamespace).
		List(t.Context(), metav1.ListOptions{LabelSelector: multiclusterv1alpha1.LabelClusterManager + "=" + inventory.Manager})
	if err != nil {
		t.Fatalf("the consumer listing profiles: %v", err)
	}
	byName := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		byName[list.Items[i].GetName()] = &list.Items[i]
	}
	for cluster, allowed := range map[string]bool{"member1": true, "member2": false} {
		p := byName[cluster]
		if p == nil {
			t.Fatalf("the consumer's list has no profile of %s: %d profiles", cluster, len(list.Items))
		}
		if condition(p, multiclusterv1alpha1.ConditionControlPlaneHealthy) != "True" {
			t.Fatalf("%s's profile is not healthy: %v", cluster, p.Object["status"])
		}
		cfg, err := consumerConfig(p, file)
		if err != nil {
			t.Fatal(err)
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

	// A profile pointing anywhere but the control plane gets nothing.
	x := file.Providers[0].ExecConfig
	cmd := exec.CommandContext(t.Context(), x.Command, x.Args...)
	cmd.Env = append(os.Environ(), cliinventory.ExecInfoEnv+`={"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":"`+
		framework.Member(t, "member1").Server+`"}}}`)
	got, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(got), "refusing to hand the control plane's credentials") || strings.Contains(string(got), own.BearerToken) {
		t.Errorf("the plugin asked for member1's own API server: %v\n%s", err, got)
	}
}
