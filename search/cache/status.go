package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// The condition a ResourceRegistry reports about its cache.
const (
	// ConditionReady is True when every selected kind is cached from every
	// selected cluster.
	ConditionReady = "Ready"

	ReasonCached      = "Cached"
	ReasonCaching     = "Caching"
	ReasonCacheFailed = "CacheFailed"
	ReasonNoCluster   = "NoCluster"
)

// maxMessage bounds a condition message.
const maxMessage = 2048

// registryCondition is the Ready condition of one registry.
func (m *Manager) registryCondition(name string, wants map[storeID]*want, problems []string) metav1.Condition {
	cached := map[string][]string{} // resource -> clusters
	var pending []string
	m.mu.RLock()
	for id, w := range wants {
		if !slices.Contains(w.registries, name) {
			continue
		}
		r, _ := m.runningStore(id)
		res := id.gvr.GroupVersion().String() + "/" + id.gvr.Resource
		switch {
		case r == nil:
			pending = append(pending, fmt.Sprintf("%s in %s", res, id.cluster))
		case r.lastErr() != nil:
			problems = append(problems, fmt.Sprintf("%s in %s: %v", res, id.cluster, r.lastErr()))
		case !r.store.Synced():
			pending = append(pending, fmt.Sprintf("%s in %s", res, id.cluster))
		default:
			cached[res] = append(cached[res], id.cluster)
		}
	}
	m.mu.RUnlock()
	slices.Sort(problems)
	slices.Sort(pending)
	cond := metav1.Condition{Type: ConditionReady}
	switch {
	case len(problems) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonCacheFailed
		cond.Message = "failed: " + strings.Join(problems, "; ")
	case len(pending) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonCaching
		cond.Message = "listing: " + strings.Join(pending, "; ")
	case len(cached) == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNoCluster
		cond.Message = "no Ready cluster matches targetCluster"
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonCached
		cond.Message = "cached: " + describeCached(cached)
	}
	if len(cond.Message) > maxMessage {
		cond.Message = cond.Message[:maxMessage-3] + "..."
	}
	return cond
}

func describeCached(cached map[string][]string) string {
	parts := make([]string, 0, len(cached))
	for res, clusters := range cached {
		slices.Sort(clusters)
		parts = append(parts, res+" in "+strings.Join(clusters, ", "))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// writeStatuses writes the registries whose condition changed.
func (m *Manager) writeStatuses(ctx context.Context, registries []*searchv1alpha1.ResourceRegistry, wants map[storeID]*want, problems map[string][]string) error {
	if m.writeStatus == nil {
		return nil
	}
	var errs []error
	for _, reg := range registries {
		if reg.DeletionTimestamp != nil {
			continue
		}
		cond := m.registryCondition(reg.Name, wants, problems[reg.Name])
		cond.ObservedGeneration = reg.Generation
		if old := meta.FindStatusCondition(reg.Status.Conditions, cond.Type); old != nil &&
			old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
			continue
		}
		conds := slices.Clone(reg.Status.Conditions)
		meta.SetStatusCondition(&conds, cond)
		if err := m.writeStatus(ctx, reg, conds); err != nil {
			errs = append(errs, fmt.Errorf("registry %s: %w", reg.Name, err))
		}
	}
	return errors.Join(errs...)
}
