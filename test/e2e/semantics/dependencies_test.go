package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

func depsPolicy(ns, name, workload, conflict string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  propagateDeps: true
  conflictResolution: %[4]s
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[3]s}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns, name, workload, conflict)
}

const sharedVolume = `      volumes:
      - name: shared
        configMap: {name: shared}
`

// attachedPolicy tells "" when the attached binding of ConfigMap ns/name
// has conflictResolution want.
func attachedConflict(ctx context.Context, t *testing.T, ns, name, want string) string {
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-configmap", metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	if string(b.Spec.ConflictResolution) != want {
		return fmt.Sprintf("attached binding %s conflictResolution %q, want %q (required by %d)", b.Name, b.Spec.ConflictResolution, want, len(b.Spec.RequiredBy))
	}
	return ""
}

// TestDependencyPolicyConflict: two workloads require one ConfigMap with
// different conflictResolution; the attached binding takes Overwrite, the safe
// merge of the users' intent, and says what conflicted; when the Overwrite
// requirer goes, the remaining one decides again.
func TestDependencyPolicyConflict(t *testing.T) {
	ns := framework.Namespace(t, "sem-deps")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: shared, namespace: %[1]s}
data: {k: v}
---
%[2]s---
%[3]s`, ns, nginx(ns, "a", 1, sharedVolume), depsPolicy(ns, "a", "a", "Abort")))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := attachedConflict(ctx, t, ns, "shared", "Abort"); s != "" {
			return s
		}
		_, err := framework.MemberClient(t, "member1").CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
		if err != nil {
			return "configmap in member1: " + err.Error()
		}
		return ""
	})
	waitEvent(t, ns, "ResourceBinding", "a-deployment", "SyncScheduleResultToDependenciesSucceed", "Sync schedule results to dependencies succeed.")

	framework.Apply(t, nginx(ns, "b", 1, sharedVolume)+"---\n"+depsPolicy(ns, "b", "b", "Overwrite"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return attachedConflict(ctx, t, ns, "shared", "Overwrite")
	})
	waitEvent(t, ns, "ResourceBinding", "shared-configmap", "DependencyPolicyConflict",
		"Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort).")

	// b, the requirer asking for Overwrite, goes: a alone decides again.
	kubectl(t, "delete", "deployment", "-n", ns, "b")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return attachedConflict(ctx, t, ns, "shared", "Abort")
	})
}

// TestDependencyTakeover: a member Secret that exists
// before Flotilla propagates a workload depending on it is taken over in
// place (same object, Flotilla's data) when the workload's policy says
// conflictResolution Overwrite.
func TestDependencyTakeover(t *testing.T) {
	ns := framework.Namespace(t, "sem-takeover")
	// The namespace reaches member1 on its own; the Secret is put there
	// directly, as a cluster being migrated would have it.
	var uid string
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		s, err := framework.MemberClient(t, "member1").CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
			StringData: map[string]string{"password": "old"},
		}, metav1.CreateOptions{})
		if err != nil {
			return err.Error()
		}
		uid = string(s.UID)
		return ""
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: %[1]s}
stringData: {password: new}
---
%[2]s---
%[3]s`, ns, nginx(ns, "app", 1, `      volumes:
      - name: creds
        secret: {secretName: creds}
`), depsPolicy(ns, "app", "app", "Overwrite")))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		s, err := framework.MemberClient(t, "member1").CoreV1().Secrets(ns).Get(ctx, "creds", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if string(s.Data["password"]) != "new" {
			return fmt.Sprintf("member1 secret password %q, want the template's", s.Data["password"])
		}
		if string(s.UID) != uid {
			return "the member Secret was recreated, not taken over"
		}
		return ""
	})
}
