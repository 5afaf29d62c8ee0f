package membership

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/cluster/v1alpha1"
)

// ReadyWait is how join waits for the Cluster it wrote to become Ready.
type ReadyWait struct {
	// Enabled is false for --wait=0 or false: return once joined, as
	// karmadactl join does.
	Enabled           bool
	Timeout, Interval time.Duration
	// Required is --wait given by the user: a Cluster not Ready in time
	// is then an error. By default it is a warning: the join is done.
	Required bool
}

// DefaultJoinWait is how long join waits for Ready unless told otherwise;
// a member the control plane reaches is Ready within a status period.
const DefaultJoinWait = time.Minute

// readyCondition prints the Ready condition of a Cluster as its progress
// line shows it.
func readyCondition(c *clusterv1alpha1.Cluster) string {
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond == nil {
		return "no Ready condition yet"
	}
	s := fmt.Sprintf("Ready=%s", cond.Status)
	if cond.Reason != "" {
		s += " (" + cond.Reason + ")"
	}
	if cond.Message != "" {
		s += ": " + cond.Message
	}
	return s
}

// waitReady waits until the Cluster name is Ready, printing on progress
// (stderr) what it waits for and each new state of its Ready condition.
func waitReady(ctx context.Context, clusters v1alpha1.ClusterInterface, name string, w ReadyWait, progress io.Writer) error {
	if !w.Enabled {
		return nil
	}
	fmt.Fprintf(progress, "waiting up to %s for cluster(%s) to be Ready (--wait=0 returns at once)\n", w.Timeout, name)
	start := time.Now()
	var last string
	err := wait.PollUntilContextTimeout(ctx, w.Interval, w.Timeout, true, func(ctx context.Context) (bool, error) {
		c, err := clusters.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			// A transient error is retried; the last one is reported.
			last = err.Error()
			return false, nil
		}
		if meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return true, nil
		}
		if now := readyCondition(c); now != last {
			last = now
			fmt.Fprintf(progress, "cluster(%s): %s\n", name, now)
		}
		return false, nil
	})
	if err == nil {
		fmt.Fprintf(progress, "cluster(%s) is Ready after %s\n", name, time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := fmt.Sprintf("cluster(%s) is not Ready after %s (%s)", name, w.Timeout, last)
	if w.Required {
		return fmt.Errorf("%s; it is joined: see kubectl get cluster %s", msg, name)
	}
	fmt.Fprintf(progress, "Warning: %s; it is joined: see kubectl get cluster %s\n", msg, name)
	return nil
}
