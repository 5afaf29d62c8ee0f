package clusters

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// registerCLI runs flotillactl with args as given (no control-plane
// kubeconfig added) and returns its output and error.
func registerCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := framework.CommandContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), args...).CombinedOutput()
	return string(out), err
}

// TestRegister, Pull mode registration: a bootstrap token, register in Pull
// mode (member3 is started but not joined by this suite), the bad inputs,
// the agent identity's least privilege, and unregister. No agent runs: the
// test uses the agent's credentials itself.
func TestRegister(t *testing.T) {
	e := framework.Env
	host := framework.HostClient(t)
	kc := framework.Karmada(t)
	m3 := framework.Member(t, "member3")
	m1 := framework.Member(t, "member1")
	ctx := t.Context()

	// The token and the command that uses it.
	out, err := registerCLI(t, "token", "create", "--print-register-command", "--kubeconfig="+e.Host.Kubeconfig)
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	cmd := strings.Fields(out)
	if len(cmd) != 7 || cmd[1] != "register" || cmd[3] != "--token" || cmd[5] != "--discovery-token-ca-cert-hash" {
		t.Fatalf("token create printed %q", out)
	}
	endpoint, token, hash := cmd[2], cmd[4], cmd[6]
	if endpoint != e.Host.Server {
		t.Errorf("endpoint %s, want the host's %s", endpoint, e.Host.Server)
	}
	tokenID, _, _ := strings.Cut(token, ".")
	// The host's bootstrap signer signs cluster-info with the new token;
	// register then checks that signature too.
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		cm, err := host.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if cm.Data["jws-kubeconfig-"+tokenID] == "" {
			return "cluster-info not signed with token " + tokenID
		}
		return ""
	})
	t.Cleanup(func() {
		_, _ = registerCLI(t, "unregister", "member3", "--kubeconfig="+m3.Kubeconfig, "--control-plane-kubeconfig="+e.Host.Kubeconfig)
	})

	register := func(t *testing.T, member, name, token, hash string, extra ...string) (string, error) {
		t.Helper()
		args := append([]string{"register", endpoint, "--token", token, "--discovery-token-ca-cert-hash", hash,
			"--cluster-name", name, "--kubeconfig", framework.Member(t, member).Kubeconfig, "--discovery-timeout=90s",
			// The test runs the agent as a process, not as a Deployment.
			"--karmada-agent-replicas=0"}, extra...)
		start := time.Now()
		out, err := registerCLI(t, args...)
		t.Logf("flotillactl register %s as %s (%.1f s):\n%s", member, name, time.Since(start).Seconds(), out)
		return out, err
	}
	// nothingCreated checks that a refused register left no Cluster and
	// nothing in the member.
	nothingCreated := func(t *testing.T, member, name string) {
		t.Helper()
		if _, err := kc.ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("cluster %s exists after a refused register: %v", name, err)
		}
		if _, err := framework.MemberClient(t, member).CoreV1().Secrets("karmada-system").Get(ctx, "karmada-agent-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the agent secret exists in %s after a refused register: %v", member, err)
		}
	}
	wantErr := func(t *testing.T, out string, err error, msg string) {
		t.Helper()
		if err == nil || !strings.Contains(out, msg) {
			t.Errorf("register: err %v, want an error saying %q:\n%s", err, msg, out)
		}
	}

	t.Run("wrong CA hash", func(t *testing.T) {
		out, err := register(t, "member3", "member3", token, "sha256:"+strings.Repeat("0", 64))
		wantErr(t, out, err, "does not match --discovery-token-ca-cert-hash: its hash is "+hash)
		nothingCreated(t, "member3", "member3")
	})
	t.Run("wrong token", func(t *testing.T) {
		out, err := register(t, "member3", "member3", "wrongx.0123456789abcdef", hash)
		wantErr(t, out, err, "refused bootstrap token wrongx: it is wrong, expired or deleted")
		nothingCreated(t, "member3", "member3")
	})
	t.Run("expired token", func(t *testing.T) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-expird"},
			Type:       corev1.SecretTypeBootstrapToken,
			StringData: map[string]string{"token-id": "expird", "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true",
				"auth-extra-groups": "system:bootstrappers:karmada:default-cluster-token", "expiration": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		}
		if _, err := host.CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		out, err := register(t, "member3", "member3", "expird.0123456789abcdef", hash)
		wantErr(t, out, err, "refused bootstrap token expird")
		nothingCreated(t, "member3", "member3")
	})

	agentConfig := filepath.Join(t.TempDir(), "member3-agent.config")
	var cluster *clusterv1alpha1.Cluster
	t.Run("register member3", func(t *testing.T) {
		out, err := register(t, "member3", "member3", token, hash, "--agent-kubeconfig-out="+agentConfig)
		if err != nil {
			t.Fatalf("register: %v", err)
		}
		if !strings.Contains(out, "flotilla-agent --cluster-name=member3 --control-plane-kubeconfig="+agentConfig+" --member-kubeconfig="+m3.Kubeconfig) {
			t.Errorf("register did not say how to start the agent")
		}
		cluster, err = kc.ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns, err := framework.MemberClient(t, "member3").CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cluster.Spec.SyncMode != clusterv1alpha1.Pull || cluster.Spec.ID != string(ns.UID) || cluster.Spec.APIEndpoint != "" || cluster.Spec.SecretRef != nil {
			t.Errorf("cluster spec %+v, want Pull with id %s and no endpoint or secret", cluster.Spec, ns.UID)
		}
		table, err := kubectl(t, "get", "clusters", "member3")
		if err != nil || !strings.Contains(table, "Pull") {
			t.Errorf("kubectl get clusters member3: %v\n%s", err, table)
		}
		s, err := framework.MemberClient(t, "member3").CoreV1().Secrets("karmada-system").Get(ctx, "karmada-agent-config", metav1.GetOptions{})
		if err != nil || len(s.Data["karmada.config"]) == 0 {
			t.Errorf("agent secret in member3: %v", err)
		}
	})
	if cluster == nil {
		t.FailNow()
	}

	t.Run("second register of member3", func(t *testing.T) {
		out, err := register(t, "member3", "member3", token, hash)
		wantErr(t, out, err, "this member is already registered (as cluster member3")
		c, err := kc.ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{})
		if err != nil || c.UID != cluster.UID {
			t.Errorf("cluster member3 changed: %v", err)
		}
	})
	t.Run("name taken by another cluster", func(t *testing.T) {
		// member1's agent (had it one) claims member3's name.
		out, err := register(t, "member1", "member3", token, hash)
		wantErr(t, out, err, fmt.Sprintf("cluster name member3 is already taken by another cluster (id %s)", cluster.Spec.ID))
		if _, err := framework.MemberClient(t, "member1").CoreV1().Secrets("karmada-system").Get(ctx, "karmada-agent-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the agent secret exists in member1 after a denied register: %v", err)
		}
	})
	t.Run("member registered under another name", func(t *testing.T) {
		out, err := register(t, "member1", "edge-1", token, hash)
		wantErr(t, out, err, "is already registered as cluster member1")
		nothingCreated(t, "member1", "edge-1")
	})

	t.Run("least privilege of the agent identity", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", agentConfig)
		if err != nil {
			t.Fatal(err)
		}
		agentKarmada := versioned.NewForConfigOrDie(cfg)
		agentKube := kubernetes.NewForConfigOrDie(cfg)
		clusters := agentKarmada.ClusterV1alpha1().Clusters()
		allowed := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("%s: %v, want allowed", what, err)
			}
		}
		refused := func(what string, err error) {
			t.Helper()
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s: %v, want 403 Forbidden", what, err)
			} else {
				t.Logf("%s: refused: %v", what, err)
			}
		}

		_, err = clusters.Get(ctx, "member3", metav1.GetOptions{})
		allowed("get its own cluster", err)
		_, err = clusters.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "member3").String()})
		allowed("list its own cluster by name", err)
		_, err = clusters.Patch(ctx, "member3", types.MergePatchType, []byte(`{"status":{"kubernetesVersion":"v1.36.3"}}`), metav1.PatchOptions{}, "status")
		allowed("patch its own cluster's status", err)
		_, err = agentKube.CoordinationV1().Leases("karmada-cluster").Get(ctx, "member3", metav1.GetOptions{})
		allowed("get its own lease", err)
		_, err = agentKarmada.WorkV1alpha1().Works("karmada-es-member3").List(ctx, metav1.ListOptions{})
		allowed("list the works of its execution namespace", err)
		_, err = agentKarmada.ConfigV1alpha1().ResourceInterpreterCustomizations().List(ctx, metav1.ListOptions{})
		allowed("list interpreter customizations", err)

		_, err = clusters.Get(ctx, "member1", metav1.GetOptions{})
		refused("get cluster member1", err)
		_, err = clusters.List(ctx, metav1.ListOptions{})
		refused("list all clusters", err)
		_, err = clusters.Patch(ctx, "member1", types.MergePatchType, []byte(`{"status":{"kubernetesVersion":"v0"}}`), metav1.PatchOptions{}, "status")
		refused("patch member1's status", err)
		err = clusters.Delete(ctx, "member3", metav1.DeleteOptions{})
		refused("delete its own cluster", err)
		_, err = agentKarmada.WorkV1alpha1().Works("karmada-es-member1").List(ctx, metav1.ListOptions{})
		refused("list member1's works", err)
		_, err = agentKarmada.WorkV1alpha1().Works("karmada-es-member1").Get(ctx, "any", metav1.GetOptions{})
		refused("get a work of member1", err)
		_, err = agentKube.CoreV1().Secrets("karmada-cluster").List(ctx, metav1.ListOptions{})
		refused("list secrets in karmada-cluster", err)
		_, err = agentKube.CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{})
		refused("get member1's credentials", err)
		_, err = agentKube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
		refused("list all secrets", err)
		_, err = agentKube.CoordinationV1().Leases("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{})
		refused("get member1's lease", err)
		_, err = agentKarmada.WorkV1alpha2().ResourceBindings("default").List(ctx, metav1.ListOptions{})
		refused("list resource bindings", err)
	})

	t.Run("unregister", func(t *testing.T) {
		start := time.Now()
		out, err := registerCLI(t, "unregister", "member3", "--kubeconfig="+m3.Kubeconfig, "--control-plane-kubeconfig="+e.Host.Kubeconfig)
		t.Logf("flotillactl unregister member3 (%.1f s):\n%s", time.Since(start).Seconds(), out)
		if err != nil {
			t.Fatalf("unregister: %v", err)
		}
		if _, err := kc.ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("cluster member3 still exists: %v", err)
		}
		if _, err := host.RbacV1().ClusterRoleBindings().Get(ctx, "system:karmada:member3:agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the agent's clusterrolebinding still exists: %v", err)
		}
		nothingCreated(t, "member3", "member3")
		framework.Eventually(t, time.Minute, func(ctx context.Context) string {
			if _, err := host.CoreV1().Namespaces().Get(ctx, "karmada-es-member3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("execution namespace karmada-es-member3: %v", err)
			}
			if _, err := host.CoordinationV1().Leases("karmada-cluster").Get(ctx, "member3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("lease karmada-cluster/member3 (owned by the cluster): %v", err)
			}
			return ""
		})
		t.Logf("execution namespace and lease gone %.1f s after unregister started", time.Since(start).Seconds())
		// The member is untouched otherwise: member1, joined, still is.
		if _, err := kc.ClusterV1alpha1().Clusters().Get(ctx, m1.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("cluster member1: %v", err)
		}
	})
}
