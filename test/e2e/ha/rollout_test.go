package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestLeaderKilledMidRollout: the replica running the controllers is killed
// with SIGKILL while a rollout's first stage soaks. The other replica takes
// the lease and the run goes on where it was: member2 is updated once the
// soak is over (not before, not a whole run later), and each member's
// Deployment is written once for the change.
func TestLeaderKilledMidRollout(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	const soak = 20 * time.Second
	kc := karmada(t)
	ns := framework.Namespace(t, "ha-rollout")
	framework.Apply(t, fmt.Sprintf(`apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: %s}
spec:
  stages:
  - {name: first, clusters: {names: [member1]}, soakTime: %s}
  - {name: second, clusters: {names: [member2]}}
`, ns, soak))
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = kc.FlotillaV1alpha1().RolloutStrategies().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns, Annotations: map[string]string{flotillav1alpha1.RolloutStrategyAnnotation: ns}},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "app"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		},
	}
	if _, err := kc.PolicyV1alpha1().PropagationPolicies(ns).Create(t.Context(), pp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc := framework.HostClient(t)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "app"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.0"}}},
			},
		},
	}
	if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindingName := names.BindingName("Deployment", "app")
	image := func(ctx context.Context, m string) (string, int64, error) {
		d, err := framework.MemberClient(t, m).AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return "", 0, err
		}
		return d.Spec.Template.Spec.Containers[0].Image, d.Generation, nil
	}
	gen := map[string]int64{}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		for _, m := range members {
			img, g, err := image(ctx, m)
			if err != nil || img != "nginx:1.0" {
				return fmt.Sprintf("%s: %s %v", m, img, err)
			}
			gen[m] = g
		}
		rb, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, bindingName, metav1.GetOptions{})
		if err != nil || rb.Annotations[flotillav1alpha1.RevisionsAnnotation] == "" {
			return fmt.Sprintf("binding not held by the rollout yet (%v)", err)
		}
		return ""
	})
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2.0"}]}}}}`
	if _, err := hc.AppsV1().Deployments(ns).Patch(t.Context(), "app", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	runName := names.RolloutRunName(bindingName, 2)
	getRun := func(ctx context.Context) (*flotillav1alpha1.RolloutRun, string) {
		r, err := kc.FlotillaV1alpha1().RolloutRuns(ns).Get(ctx, runName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, "no run yet"
		} else if err != nil {
			return nil, err.Error()
		}
		return r, ""
	}
	var soakEnd time.Time
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		r, msg := getRun(ctx)
		if r == nil {
			return msg
		}
		if len(r.Status.Stages) == 0 || r.Status.Stages[0].Phase != flotillav1alpha1.StageSoaking {
			return fmt.Sprintf("run %s phase %s, want the first stage soaking", r.Name, r.Status.Phase)
		}
		soakEnd = r.Status.Stages[0].SoakEnd.Time
		return ""
	})
	first := leader(t, time.Minute)
	if err := framework.Env.KillReplica(first); err != nil {
		t.Fatal(err)
	}
	if err := framework.Env.SyncFlotillaEndpoints(t.Context()); err != nil {
		t.Fatal(err)
	}
	if next := leader(t, 2*time.Minute); next == first {
		t.Fatalf("replica %d still leads after being killed", first)
	}
	var done *flotillav1alpha1.RolloutRun
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		r, msg := getRun(ctx)
		if r == nil {
			return msg
		}
		if r.Status.Phase != flotillav1alpha1.RolloutCompleted {
			return fmt.Sprintf("run %s phase %s at %s, want Completed", r.Name, r.Status.Phase, r.Status.CurrentStage)
		}
		done = r
		return ""
	})
	second := done.Status.Stages[1]
	if len(second.Clusters) != 1 || second.Clusters[0].UpdateTime == nil || second.Clusters[0].UpdateTime.Time.Before(soakEnd) {
		t.Errorf("second stage %+v: want member2 updated after the first stage's soak ended at %s", second, soakEnd)
	} else if late := second.Clusters[0].UpdateTime.Sub(soakEnd); late > leaseDuration+30*time.Second {
		t.Errorf("member2 updated %s after the soak ended: want within the takeover (%s lease) and a margin", late, leaseDuration)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		for _, m := range members {
			img, g, err := image(ctx, m)
			if err != nil || img != "nginx:2.0" {
				return fmt.Sprintf("%s runs %s (%v), want nginx:2.0", m, img, err)
			}
			if g != gen[m]+1 {
				return fmt.Sprintf("%s Deployment generation %d, want %d: written once for the change", m, g, gen[m]+1)
			}
		}
		return ""
	})
}
