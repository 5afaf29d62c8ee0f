package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/flotilla-io/flotilla/cli/policy"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// This file covers flotillactl apply, karmadactl's:
// kubectl apply against the control plane and, with --all-clusters or
// -C, a policy per object, named as karmadactl names it.

// applyFile writes a manifest for apply -f.
func applyFile(t *testing.T, manifest string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestApplyAllClusters: apply --all-clusters of a ConfigMap, a Deployment
// and a ClusterRole: each is applied with its policy (a
// ClusterPropagationPolicy for the ClusterRole) placing it on every
// member, and reaches the three members.
func TestApplyAllClusters(t *testing.T) {
	ns := framework.Namespace(t, "cli-apply-"+utilrand.String(6))
	role := "cli-apply-" + utilrand.String(6)
	host := framework.HostClient(t)
	karmada := framework.Karmada(t)
	cpp := policy.Name("", role, clusterRoleGVK)
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = karmada.PolicyV1alpha1().ClusterPropagationPolicies().Delete(ctx, cpp, metav1.DeleteOptions{})
		_ = host.RbacV1().ClusterRoles().Delete(ctx, role, metav1.DeleteOptions{})
	})
	f := applyFile(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {mode: fast}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[2]s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
`, ns, role))

	out := mustCtl(t, "apply", "-f", f, "--all-clusters")
	pps := map[string]string{"settings": policy.Name(ns, "settings", configMapGVK), "web": policy.Name(ns, "web", deploymentGVK)}
	for _, line := range []string{
		"configmap/settings created", "propagationpolicy.policy.karmada.io/" + pps["settings"] + " created",
		"deployment.apps/web created", "propagationpolicy.policy.karmada.io/" + pps["web"] + " created",
		"clusterrole.rbac.authorization.k8s.io/" + role + " created", "clusterpropagationpolicy.policy.karmada.io/" + cpp + " created",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("apply --all-clusters lacks %q:\n%s", line, out)
		}
	}
	for obj, name := range pps {
		pp, err := karmada.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the policy of %s, named as karmadactl names it: %v", obj, err)
		}
		if a := pp.Spec.Placement.ClusterAffinity; a == nil || len(a.ClusterNames) != 0 || len(pp.Spec.ResourceSelectors) != 1 || pp.Spec.ResourceSelectors[0].Name != obj {
			t.Errorf("policy %s: %+v, want %s on every cluster", name, pp.Spec, obj)
		}
	}
	if _, err := karmada.PolicyV1alpha1().ClusterPropagationPolicies().Get(t.Context(), cpp, metav1.GetOptions{}); err != nil {
		t.Fatalf("the ClusterRole's ClusterPropagationPolicy: %v", err)
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		cs := framework.MemberClient(t, m)
		framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
			if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); err != nil {
				return m + " ConfigMap: " + err.Error()
			}
			if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
				return m + " Deployment: " + err.Error()
			}
			if _, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
				return m + " ClusterRole: " + err.Error()
			}
			return ""
		})
	}
}

// TestApplyClusters: apply -C member1 places the objects on member1 only;
// plain apply creates no policy.
func TestApplyClusters(t *testing.T) {
	ns := framework.Namespace(t, "cli-apply-"+utilrand.String(6))
	karmada := framework.Karmada(t)
	f := applyFile(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: only-one, namespace: %s}
data: {k: v}
`, ns))
	out := mustCtl(t, "apply", "-f", f, "-C", "member1")
	pp := policy.Name(ns, "only-one", configMapGVK)
	if !strings.Contains(out, "configmap/only-one created") || !strings.Contains(out, "propagationpolicy.policy.karmada.io/"+pp+" created") {
		t.Fatalf("apply -C member1: %q", out)
	}
	p, err := karmada.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), pp, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Spec.Placement.ClusterAffinity; a == nil || len(a.ClusterNames) != 1 || a.ClusterNames[0] != "member1" {
		t.Errorf("policy %s placement %+v, want member1", pp, p.Spec.Placement)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		if s := appliedWork(ctx, t, "member1", configMapGVK, ns, "only-one"); s != "" {
			return s
		}
		rb, err := karmada.WorkV1alpha2().ResourceBindings(ns).Get(ctx, "only-one-configmap", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name != "member1" {
			return fmt.Sprintf("binding scheduled to %+v, want member1 only", rb.Spec.Clusters)
		}
		return ""
	})
	for _, m := range []string{"member2", "member3"} {
		if s := appliedWork(t.Context(), t, m, configMapGVK, ns, "only-one"); !strings.HasPrefix(s, "no Work") {
			t.Errorf("%s: %s, want no Work", m, s)
		}
	}

	// Plain apply: kubectl apply, no policy.
	g := applyFile(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: %s}
data: {k: v}
`, ns))
	if out := mustCtl(t, "apply", "-f", g); !strings.Contains(out, "configmap/plain created") || strings.Contains(out, "propagationpolicy") {
		t.Errorf("plain apply: %q, want kubectl's line and no policy", out)
	}
	if _, err := karmada.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, "plain", configMapGVK), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("plain apply made a policy: %v", err)
	}
}

// TestApplyBadInput: karmadactl's errors, and nothing applied.
func TestApplyBadInput(t *testing.T) {
	ns := framework.Namespace(t, "cli-apply-"+utilrand.String(6))
	f := applyFile(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: refused, namespace: %s}
data: {k: v}
`, ns))
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"--all-clusters with -C", []string{"--all-clusters", "-C", "member1"}, []string{"--all-clusters and --cluster cannot be used together"}},
		{"an unknown cluster", []string{"-C", "member1,nope,gone"}, []string{"cluster nope does not exist", "cluster gone does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ctl(t, append([]string{"apply", "-f", f}, tc.args...)...)
			if !r.failed(append([]string{"error: "}, tc.want...)...) {
				t.Errorf("apply %s: %s\nwant a failure saying %q", strings.Join(tc.args, " "), r, tc.want)
			}
		})
	}
	if _, err := framework.HostClient(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "refused", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused apply applied the ConfigMap: %v", err)
	}
}

// TestCLISample applies samples/cli/web.yaml as its comment says: apply
// --all-clusters places cli-web on every member, and get -s all shows the
// template and each member's copy, adopted.
func TestCLISample(t *testing.T) {
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(root, "samples", "cli", "web.yaml")
	karmada := framework.Karmada(t)
	t.Cleanup(func() {
		ctl(t, "delete", "--ignore-not-found", "-f", sample)
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		for _, gvk := range []schema.GroupVersionKind{deploymentGVK, serviceGVK} {
			_ = karmada.PolicyV1alpha1().PropagationPolicies("default").Delete(ctx, policy.Name("default", "cli-web", gvk), metav1.DeleteOptions{})
		}
	})
	out := mustCtl(t, "apply", "-f", sample, "--all-clusters")
	for _, line := range []string{"deployment.apps/cli-web", "service/cli-web", "propagationpolicy.policy.karmada.io/" + policy.Name("default", "cli-web", deploymentGVK)} {
		if !strings.Contains(out, line) {
			t.Errorf("apply -f %s --all-clusters lacks %q:\n%s", sample, line, out)
		}
	}
	framework.Eventually(t, 2*time.Minute, func(context.Context) string {
		r := ctl(t, "get", "deployment", "cli-web", "-n", "default", "-s", "all")
		for _, row := range []string{`(?m)^cli-web\s+Karmada\s.*\s-$`, `(?m)^cli-web\s+member1\s.*\sY$`, `(?m)^cli-web\s+member2\s.*\sY$`, `(?m)^cli-web\s+member3\s.*\sY$`} {
			if !regexp.MustCompile(row).MatchString(r.stdout) {
				return "get deployment cli-web -s all lacks " + row + ": " + r.String()
			}
		}
		return ""
	})
}
