package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

var benchMembers = []string{"member1", "member2", "member3"}

// benchSize reads a size from the environment (to try the benchmarks small).
func benchSize(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func memberClient(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	cfg, err := framework.Member(t, name).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	return kubernetes.NewForConfigOrDie(cfg)
}

// pauseMembers stops the controllers, schedulers and kwok of every member
// so only the write path is measured (no ReplicaSets or Pods follow the
// Deployments); they start again when the test ends.
func pauseMembers(t *testing.T) {
	for _, m := range benchMembers {
		for _, c := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
			p := framework.Member(t, m).Process(c)
			if p == nil {
				continue
			}
			p.Stop(5 * time.Second)
			t.Cleanup(func() { _ = p.Restart() })
		}
	}
}

func benchDeployment(ns string, i int, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "bench"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%05d", i), Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}}},
			},
		},
	}
}

// counter counts the Deployments of a namespace that appear in a member,
// from a watch started before anything is created.
type counter struct {
	mu    sync.Mutex
	seen  map[string]time.Time
	watch watch.Interface
}

func countDeployments(t *testing.T, c kubernetes.Interface, ns string) *counter {
	t.Helper()
	w, err := c.AppsV1().Deployments(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := &counter{seen: map[string]time.Time{}, watch: w}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				k.mu.Lock()
				if _, dup := k.seen[d.Name]; !dup {
					k.seen[d.Name] = time.Now()
				}
				k.mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return k
}

func (k *counter) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.seen)
}

func (k *counter) at(name string) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.seen[name]
	return at, ok
}

// waitNamespace creates ns on the host and waits until namespace
// auto-propagation has created it in every member.
func waitNamespace(t *testing.T, hc kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, m := range benchMembers {
		mc := memberClient(t, m)
		if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := mc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("namespace %s did not reach %s: %v", ns, m, err)
		}
	}
}

// dividingPolicy selects every Deployment of ns and divides its replicas
// equally over the three members.
func dividingPolicy(ns string) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "divide", Namespace: ns},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: benchMembers},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
				},
			},
		},
	}
}
