package ha

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestQuotaHoldsAcrossReplicas: writers creating ResourceBindings through
// both replicas at once, each binding using 100m of a FederatedResourceQuota
// whose overall is 1 CPU: in every round at most ten are admitted, the
// others refused with 403 QuotaExceeded, and the namespace never uses more
// than the quota. The replicas share the namespace's quota lock in etcd;
// with a lock per process, both replicas pass writes on the same headroom.
func TestQuotaHoldsAcrossReplicas(t *testing.T) {
	requireHA(t)
	const (
		writersPerReplica = 12
		rounds            = 5
		perBinding        = "100m"
		limit             = 10 // bindings the quota holds
	)
	ns := framework.Namespace(t, "ha-quota")
	kc := karmada(t)
	quota := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: ns},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}
	if _, err := kc.PolicyV1alpha1().FederatedResourceQuotas(ns).Create(t.Context(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The bindings' templates exist (a binding of a missing template is
	// deleted by the detector); no policy claims them.
	host := framework.HostClient(t)
	for i := range 2 * writersPerReplica {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q-%02d", i), Namespace: ns}}
		if _, err := host.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var replicas []versioned.Interface
	for i := range framework.Env.Replicas() {
		cfg, err := framework.Env.ReplicaConfig(i)
		if err != nil {
			t.Fatal(err)
		}
		cfg.QPS, cfg.Burst = 200, 400
		replicas = append(replicas, versioned.NewForConfigOrDie(cfg))
	}
	if len(replicas) < 2 {
		t.Fatalf("%d replicas, want 2", len(replicas))
	}
	// Both replicas have the quota in their watch cache.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		for i, r := range replicas {
			list, err := r.PolicyV1alpha1().FederatedResourceQuotas(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil || len(list.Items) != 1 {
				return fmt.Sprintf("replica %d's quotas: %v", i, err)
			}
		}
		return ""
	})

	for round := range rounds {
		var admitted, refused atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 * writersPerReplica {
			r := replicas[i%2]
			wg.Go(func() {
				rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q-%02d-configmap", i), Namespace: ns},
					Spec: workv1alpha2.ResourceBindingSpec{
						Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: fmt.Sprintf("q-%02d", i)},
						Replicas: 1,
						ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse(perBinding)}},
						Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}},
					}}
				<-start
				_, err := r.WorkV1alpha2().ResourceBindings(ns).Create(t.Context(), rb, metav1.CreateOptions{})
				switch {
				case err == nil:
					admitted.Add(1)
				case apierrors.IsForbidden(err) && apierrors.ReasonForError(err) == workv1alpha2.BindingReasonQuotaExceeded:
					refused.Add(1)
				default:
					t.Errorf("round %d, writer %d: %v", round, i, err)
				}
			})
		}
		close(start)
		wg.Wait()
		t.Logf("round %d: %d writers through 2 replicas, %d admitted, %d refused (quota holds %d)", round, 2*writersPerReplica, admitted.Load(), refused.Load(), limit)
		if admitted.Load() > limit {
			t.Errorf("round %d: %d bindings of %s admitted against an overall of 1 CPU: over the quota", round, admitted.Load(), perBinding)
		}
		if admitted.Load() < limit {
			t.Errorf("round %d: only %d admitted where %d fit", round, admitted.Load(), limit)
		}
		list, err := kc.WorkV1alpha2().ResourceBindings(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > limit {
			t.Errorf("round %d: %d bindings stored", round, len(list.Items))
		}
		if err := kc.WorkV1alpha2().ResourceBindings(ns).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, time.Minute, func(ctx context.Context) string {
			list, err := kc.WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) > 0 {
				return fmt.Sprintf("bindings left after the round: %v", err)
			}
			return ""
		})
	}
}
