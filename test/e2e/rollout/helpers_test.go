package rollout

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

var members = []string{"member1", "member2", "member3"}

// setup makes a namespace, a strategy named after it with stages, and a
// policy naming the strategy that propagates Deployment app to all three
// members, then the Deployment with image, and waits until every member
// runs it available and the rollout holds the binding. It returns the
// namespace.
func setup(t *testing.T, name, stages, image string) string {
	t.Helper()
	ns := framework.Namespace(t, name)
	framework.Apply(t, fmt.Sprintf(`apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: %s}
spec:
  stages:
%s`, ns, stages))
	t.Cleanup(func() {
		_ = framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	framework.Apply(t, appPolicy(ns, "member1, member2, member3"))
	_, err := framework.HostClient(t).AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "app"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		waitImage(t, ns, m, image, true)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if v := rb.Annotations[flotillav1alpha1.RevisionsAnnotation]; strings.Count(v, "=") != 3 {
			return "binding revisions " + v + ", want the three members held"
		}
		return ""
	})
	return ns
}

// appPolicy is the PropagationPolicy that rolls the Deployment app of ns
// out by the strategy named ns, duplicated on clusters ("member1, ...").
func appPolicy(ns, clusters string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: app
  namespace: %s
  annotations: {%s: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: app}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns, flotillav1alpha1.RolloutStrategyAnnotation, ns, clusters)
}

// binding is the name of the app Deployment's ResourceBinding.
var binding = names.BindingName("Deployment", "app")

// setImage changes the template's image.
func setImage(t *testing.T, ns, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	if _, err := framework.HostClient(t).AppsV1().Deployments(ns).Patch(t.Context(), "app", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// memberDeployment is the app Deployment in a member.
func memberDeployment(ctx context.Context, t *testing.T, ns, member string) (*appsv1.Deployment, error) {
	return framework.MemberClient(t, member).AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
}

// waitImage waits until member runs image (and, with available, has it
// rolled out and available).
func waitImage(t *testing.T, ns, member, image string, available bool) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%s runs %s after %s", member, image, time.Since(start).Round(time.Millisecond)) }()
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		d, err := memberDeployment(ctx, t, ns, member)
		if err != nil {
			return err.Error()
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Sprintf("%s runs %s, want %s", member, got, image)
		}
		if available && (d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != 2 || d.Status.AvailableReplicas != 2) {
			return fmt.Sprintf("%s: %s not available yet: %+v", member, image, d.Status)
		}
		return ""
	})
}

// run waits for the RolloutRun of revision number n and until check
// accepts it.
func run(t *testing.T, ns string, n int64, timeout time.Duration, check func(*flotillav1alpha1.RolloutRun) string) *flotillav1alpha1.RolloutRun {
	t.Helper()
	var out *flotillav1alpha1.RolloutRun
	start := time.Now()
	defer func() {
		t.Logf("RolloutRun %s: phase %s at stage %s after %s", out.Name, out.Status.Phase, out.Status.CurrentStage, time.Since(start).Round(time.Millisecond))
	}()
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		r, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Get(ctx, names.RolloutRunName(binding, n), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("no RolloutRun %s yet", names.RolloutRunName(binding, n))
		} else if err != nil {
			return err.Error()
		}
		out = r
		if msg := check(r); msg != "" {
			return fmt.Sprintf("RolloutRun %s: %s (phase %s, stage %s, conditions %+v)", r.Name, msg, r.Status.Phase, r.Status.CurrentStage, r.Status.Conditions)
		}
		return ""
	})
	return out
}

func phase(want flotillav1alpha1.RolloutPhase) func(*flotillav1alpha1.RolloutRun) string {
	return func(r *flotillav1alpha1.RolloutRun) string {
		if r.Status.Phase != want {
			return "want phase " + string(want)
		}
		return ""
	}
}

// clusterStatus finds a cluster in a run's status.
func clusterStatus(r *flotillav1alpha1.RolloutRun, name string) *flotillav1alpha1.ClusterRolloutStatus {
	for i := range r.Status.Stages {
		for j := range r.Status.Stages[i].Clusters {
			if c := &r.Status.Stages[i].Clusters[j]; c.Name == name {
				return c
			}
		}
	}
	return nil
}

// templateEvents are the reasons of the events on the app template.
func templateEvents(ctx context.Context, t *testing.T, ns string) (map[string]int, error) {
	list, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=app"})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range list.Items {
		out[e.Reason]++
	}
	return out, nil
}

// stages writes a strategy's stages, one member each, with the given
// extra fields.
func stages(extra ...string) string {
	var b strings.Builder
	for i, m := range members {
		fmt.Fprintf(&b, "  - name: s%d\n    clusters: {names: [%s]}\n", i+1, m)
		if i < len(extra) && extra[i] != "" {
			b.WriteString(extra[i])
		}
	}
	return b.String()
}
