package framework

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// restoreTimeout bounds how long a cleanup waits for a member to be back
// as the suite started it.
const restoreTimeout = 3 * time.Minute

// StopMember stops member's kube-apiserver, as an outage does, and returns
// a function that starts it again (calling it twice is harmless). A
// cleanup starts it if the test did not, and waits until the member's
// Cluster is healthy again (WaitClusterHealthy), so the next test finds
// the member as the suite started it.
func StopMember(t *testing.T, member string) (restart func() error) {
	t.Helper()
	api := Member(t, member).Process("kube-apiserver")
	api.Stop(0)
	restart = func() error {
		if exited, _ := api.Exited(); !exited {
			return nil
		}
		return api.Restart()
	}
	t.Cleanup(func() {
		if err := restart(); err != nil {
			t.Errorf("starting %s's kube-apiserver again: %v", member, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		defer cancel()
		if err := WaitClusterHealthy(ctx, member); err != nil {
			t.Errorf("after the test: %v", err)
		}
	})
	return restart
}

// Rejoin makes sure member is joined again after a test that unjoined it
// (push mode, with flotillactl join, as the suite joined it): call it with
// t.Cleanup. It waits until the Cluster is healthy.
func Rejoin(t *testing.T, member string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	_, err := Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, member, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// join refuses a member whose karmada-cluster namespace, which
		// unjoin deletes, is still terminating: try again until it is gone.
		_ = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
			err = Env.Join(ctx, member)
			return err == nil, nil
		})
	}
	if err == nil {
		err = WaitClusterHealthy(ctx, member)
	}
	if err != nil {
		t.Errorf("joining %s again: %v", member, err)
	}
}

// WaitClusterHealthy waits until the named Clusters are Ready, with their
// summaries, and carry neither the not-ready nor the unreachable taint.
func WaitClusterHealthy(ctx context.Context, names ...string) error {
	cfg, err := Env.Host.RESTConfig()
	if err != nil {
		return err
	}
	if err := Env.WaitClustersReady(ctx, names, restoreTimeout); err != nil {
		return err
	}
	kc, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			c, err := kc.ClusterV1alpha1().Clusters().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				last = fmt.Sprintf("cluster %s: conditions %v", n, c.Status.Conditions)
				return false, nil
			}
			if slices.ContainsFunc(c.Spec.Taints, func(tn corev1.Taint) bool {
				return tn.Key == clusterv1alpha1.TaintClusterNotReady || tn.Key == clusterv1alpha1.TaintClusterUnreachable
			}) {
				last = fmt.Sprintf("cluster %s: taints %v", n, c.Spec.Taints)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("clusters %v not healthy: %s: %w", names, last, err)
	}
	return nil
}

// WaitAPIEnabled waits until each member's Cluster lists gvr among its
// status.apiEnablements, as Karmada's e2e framework waits for a CRD to be
// present on clusters: the scheduler places a workload only on clusters
// whose Cluster says they serve its kind, and, like Karmada's, does not
// move a divided workload's replicas when another cluster starts serving
// it later.
func WaitAPIEnabled(t *testing.T, gvr schema.GroupVersionResource, members ...string) {
	t.Helper()
	Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		for _, m := range members {
			c, err := Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, m, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			i := slices.IndexFunc(c.Status.APIEnablements, func(e clusterv1alpha1.APIEnablement) bool { return e.GroupVersion == gvr.GroupVersion().String() })
			if i < 0 || !slices.ContainsFunc(c.Status.APIEnablements[i].Resources, func(r clusterv1alpha1.APIResource) bool { return r.Name == gvr.Resource }) {
				return fmt.Sprintf("cluster %s does not list %s among its apiEnablements yet", m, gvr)
			}
		}
		return ""
	})
}
