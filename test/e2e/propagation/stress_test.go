package propagation

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestKillDuringPropagation: flotilla-apiserver killed with SIGKILL while
// 500 Deployments propagate. After it restarts everything converges: every
// Deployment in both members with its share of replicas, one binding and
// one Work per cluster each, and no member object twice or unaccounted for.
func TestKillDuringPropagation(t *testing.T) {
	const total = 500
	ns := namespace(t, "recovery")
	apply(t, policy("all", ns, "", both+
		"    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}\n", ""))
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	hc := kubernetes.NewForConfigOrDie(cfg)

	// Templates go to the host, which stays up; flotilla-apiserver is
	// killed when a third of them exist and started again at once.
	var created atomic.Int32
	killed := make(chan struct{})
	flotilla := framework.Env.Host.Process(env.FlotillaComponent)
	t.Cleanup(func() {
		if done, _ := flotilla.Exited(); done {
			_ = flotilla.Restart()
		}
	})
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, total)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), pausedDeployment(ns, i), metav1.CreateOptions{}); err != nil {
					errs <- err
					continue
				}
				if created.Add(1) == total/3 {
					close(killed)
				}
			}
		})
	}
	go func() {
		<-killed
		flotilla.Kill()
		if err := flotilla.Restart(); err != nil {
			errs <- fmt.Errorf("restarting flotilla-apiserver: %w", err)
		}
	}()
	for i := range total {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	<-killed

	eventually(t, 5*time.Minute, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			list, err := member(t, m).AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			if len(list.Items) != total {
				return fmt.Sprintf("%s has %d of %d Deployments", m, len(list.Items), total)
			}
			for _, d := range list.Items {
				if ptr.Deref(d.Spec.Replicas, -1) != 1 || d.Labels["karmada.io/managed"] != "true" {
					return fmt.Sprintf("%s/%s in %s: replicas %v, labels %v", ns, d.Name, m, d.Spec.Replicas, d.Labels)
				}
			}
		}
		return ""
	})
	rbs, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rbs.Items) != total {
		t.Errorf("%d bindings, want %d", len(rbs.Items), total)
	}
	for _, m := range []string{"member1", "member2"} {
		works, err := karmada(t).WorkV1alpha1().Works("karmada-es-"+m).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		perBinding := map[string]int{}
		for _, w := range works.Items {
			if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] == ns {
				perBinding[w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey]]++
			}
		}
		if len(perBinding) != total {
			t.Errorf("%s: Works of %d bindings, want %d", m, len(perBinding), total)
		}
		for b, n := range perBinding {
			if n != 1 {
				t.Errorf("%s: %d Works for binding %s", m, n, b)
			}
		}
	}
}

// pausedDeployment is Deployment i of the recovery test, 2 replicas. It is
// paused so members run no Pods for it: the test is about propagation, and
// 1,000 Pods would only slow the two cores down.
func pausedDeployment(ns string, i int) *appsv1.Deployment {
	labels := map[string]string{"app": fmt.Sprintf("r%d", i)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("r%03d", i), Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Paused: true,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}}},
			},
		},
	}
}
