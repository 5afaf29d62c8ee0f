package eviction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
)

// taskOptions is what the GracefulEvictionTasks of one decision carry
// beside their cluster and replicas.
type taskOptions struct {
	mode     policyv1alpha1.PurgeMode
	reason   string
	producer string
	// grace is the task's gracePeriodSeconds (nil: timeout, the graceful
	// eviction controller's --graceful-eviction-timeout).
	grace   *int32
	timeout time.Duration
	// preserve: the rules whose JSONPaths, evaluated over the workload's
	// status in the cluster it leaves, become labels of the workload in
	// the clusters it moves to.
	preserve *policyv1alpha1.StatePreservation
	// always makes a task even for a purge mode that removes at once
	// (application failover does: the open task keeps the scheduler away
	// from the cluster); otherwise such a mode makes one only to carry
	// preserved state.
	always bool
	// annotations are written with the eviction, in the same patch (nil
	// values remove).
	annotations map[string]any
}

// writeEviction writes one decision's evictions of b (evictionPatch) and
// records its events on the binding and on its resource template, as
// Karmada does: EvictWorkloadFromClusterSucceed per cluster, or
// EvictWorkloadFromClusterFailed when the patch cannot be made or is
// refused (not on a conflict: that retries from the newer binding). The
// messages are Karmada's to the letter, which runbooks match; the cause
// of a failure goes to the log.
func writeEviction(ctx context.Context, write func(ctx context.Context, key string, body []byte) error, recorder record.EventRecorder,
	b *binding, evict []failover.Eviction, opts taskOptions, now time.Time) error {
	failed := func(err error) {
		for _, e := range evict {
			klog.FromContext(ctx).Error(err, "Eviction of a binding from a cluster failed", "binding", b.key(), "cluster", e.Cluster, "reason", opts.reason)
			recordEviction(recorder, b, e.Cluster, false)
		}
	}
	body, err := evictionPatch(b, evict, opts, metav1.NewTime(now))
	if err != nil {
		failed(err)
		return err
	}
	if err := write(ctx, b.key(), body); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			failed(err)
		}
		return err
	}
	for _, e := range evict {
		klog.FromContext(ctx).Info("Evicted a binding from a cluster", "binding", b.key(), "cluster", e.Cluster, "reason", opts.reason, "why", e.Message)
		recordEviction(recorder, b, e.Cluster, true)
	}
	return nil
}

// recordEviction records the outcome of b's eviction from cluster on the
// binding and on its resource template.
func recordEviction(recorder record.EventRecorder, b *binding, cluster string, succeeded bool) {
	eventType, reason, msg := corev1.EventTypeNormal, ReasonEvictWorkloadFromClusterSucceed, fmt.Sprintf("Evict from cluster %s succeed.", cluster)
	if !succeeded {
		eventType, reason, msg = corev1.EventTypeWarning, ReasonEvictWorkloadFromClusterFailed, fmt.Sprintf("Evict from cluster %s failed.", cluster)
	}
	recorder.Event(b.obj, eventType, reason, msg)
	recorder.Event(b.spec.Resource.EventTarget(), eventType, reason, msg)
}

// evictionPatch removes the evicted clusters from spec.clusters and adds a
// GracefulEvictionTask for each, as opts say: one merge patch, guarded by
// the binding's resourceVersion.
func evictionPatch(b *binding, evict []failover.Eviction, opts taskOptions, now metav1.Time) ([]byte, error) {
	gone := map[string]bool{}
	for _, e := range evict {
		gone[e.Cluster] = true
	}
	before := make([]string, 0, len(b.spec.Clusters))
	var clusters []workv1alpha2.TargetCluster
	for _, tc := range b.spec.Clusters {
		before = append(before, tc.Name)
		if !gone[tc.Name] {
			clusters = append(clusters, tc)
		}
	}
	preserving := opts.preserve != nil && len(opts.preserve.Rules) > 0
	tasks := append([]workv1alpha2.GracefulEvictionTask(nil), b.spec.GracefulEvictionTasks...)
	if opts.always || preserving || !failover.PurgesAtOnce(opts.mode) {
		for _, e := range evict {
			task := workv1alpha2.GracefulEvictionTask{
				FromCluster: e.Cluster, PurgeMode: opts.mode, Replicas: replicas(b.spec, e.Replicas),
				Reason: opts.reason, Message: taskMessage(e, opts, now.Time), Producer: opts.producer, GracePeriodSeconds: opts.grace,
				ClustersBeforeFailover: before, CreationTimestamp: &now,
			}
			if preserving {
				state, err := preservedState(opts.preserve, statusOf(b.status, e.Cluster))
				if err != nil {
					return nil, fmt.Errorf("preserving the state of the workload in cluster %s: %w", e.Cluster, err)
				}
				task.PreservedLabelState = state
			}
			tasks = append(tasks, task)
		}
	}
	spec := map[string]any{"clusters": nil, "gracefulEvictionTasks": nil}
	if len(clusters) > 0 {
		spec["clusters"] = clusters
	}
	if len(tasks) > 0 {
		spec["gracefulEvictionTasks"] = tasks
	}
	meta := map[string]any{"resourceVersion": b.meta.ResourceVersion}
	if len(opts.annotations) > 0 {
		meta["annotations"] = opts.annotations
	}
	return json.Marshal(map[string]any{"metadata": meta, "spec": spec})
}

// taskMessage is why the workload left e's cluster and when its replicas
// there go, for `kubectl describe`.
func taskMessage(e failover.Eviction, opts taskOptions, now time.Time) string {
	grace := opts.timeout
	if opts.grace != nil {
		grace = time.Duration(*opts.grace) * time.Second
	}
	switch {
	case opts.mode == policyv1alpha1.PurgeModeNever:
		return fmt.Sprintf("%s; its replicas in %s stay until this task is removed (purge mode Never)", e.Message, e.Cluster)
	case failover.PurgesAtOnce(opts.mode):
		return fmt.Sprintf("%s; its replicas in %s were removed at once (purge mode %s)", e.Message, e.Cluster, opts.mode)
	case grace > 0:
		return fmt.Sprintf("%s; its replicas in %s stay until it is healthy in the clusters it moves to, at most until %s",
			e.Message, e.Cluster, now.Add(grace).UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s; its replicas in %s stay until it is healthy in the clusters it moves to", e.Message, e.Cluster)
}

// replicas is the task's replicas: none for a workload without replicas.
func replicas(spec *workv1alpha2.ResourceBindingSpec, n int32) *int32 {
	if spec.Replicas == 0 {
		return nil
	}
	return &n
}

// statusOf is the workload's status in cluster, from the aggregated status.
func statusOf(status *workv1alpha2.ResourceBindingStatus, cluster string) []byte {
	for _, s := range status.AggregatedStatus {
		if s.ClusterName == cluster && s.Status != nil {
			return s.Status.Raw
		}
	}
	return nil
}

// preservedState evaluates the rules' JSONPaths over the workload's status
// in the cluster it leaves: one label per rule. A status not collected
// yet, or a path it lacks, is an error: the eviction waits rather than
// lose the state.
func preservedState(sp *policyv1alpha1.StatePreservation, status []byte) (map[string]string, error) {
	if len(status) == 0 {
		return nil, fmt.Errorf("the workload's status has not been collected yet")
	}
	var obj any
	if err := json.Unmarshal(status, &obj); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range sp.Rules {
		jp := jsonpath.New(r.AliasLabelName).AllowMissingKeys(false)
		if err := jp.Parse(r.JSONPath); err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.AliasLabelName, err)
		}
		var buf bytes.Buffer
		if err := jp.Execute(&buf, obj); err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.AliasLabelName, err)
		}
		v := strings.TrimSpace(buf.String())
		// The value becomes a label of the workload in its new clusters:
		// one no member would accept must not reach a Work.
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return nil, fmt.Errorf("rule %s: %q is not a label value: %s", r.AliasLabelName, v, strings.Join(msgs, "; "))
		}
		out[r.AliasLabelName] = v
	}
	return out, nil
}

// writeUnlessGone writes body to the binding of key; gone says it was
// deleted meanwhile (nothing more to do for it).
func writeUnlessGone(ctx context.Context, write func(ctx context.Context, key string, body []byte) error, key string, body []byte) (gone bool, err error) {
	err = write(ctx, key, body)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
