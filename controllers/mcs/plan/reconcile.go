package plan

import (
	"encoding/json"
	"github.com/flotilla-io/flotilla/controllers/internal/objectmeta"
	"maps"
	"slices"
	"sort"
	"strings"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// managerSeparator joins the values of EndpointSliceWorkManagedByLabel.
const managerSeparator = "."

// managers returns the controllers keeping w, from its managed-by label.
func managers(w *workv1alpha1.Work) []string {
	v := w.Labels[networkingv1alpha1.EndpointSliceWorkManagedByLabel]
	if v == "" {
		return nil
	}
	return strings.Split(v, managerSeparator)
}

// ManagedBy tells whether manager keeps w.
func ManagedBy(w *workv1alpha1.Work, manager string) bool {
	return slices.Contains(managers(w), manager)
}

// joinManagers is the label value of a set of managers: sorted, so that
// the value does not change with the order they came in.
func joinManagers(ms []string) string {
	ms = slices.Clone(ms)
	sort.Strings(ms)
	return strings.Join(slices.Compact(ms), managerSeparator)
}

// Update is a stored Work and what it must become.
type Update struct {
	Stored, Desired *workv1alpha1.Work
}

// Release is a stored Work another controller keeps too: the manager
// letting it go leaves it, with the labels that are only its own.
type Release struct {
	Stored *workv1alpha1.Work
	// Managers is the managed-by label's new value.
	Managers string
	// Drop are the labels removed.
	Drop []string
}

// Changes are the writes that turn the stored Works into the desired ones.
type Changes struct {
	Create  []*workv1alpha1.Work
	Update  []Update
	Delete  []*workv1alpha1.Work
	Release []Release
	// Conflicts are desired Works whose name a Work no MCS controller
	// keeps already has (a template's Work of the same name): left alone.
	Conflicts []*workv1alpha1.Work
}

// Empty tells whether there is nothing to write.
func (c Changes) Empty() bool {
	return len(c.Create)+len(c.Update)+len(c.Delete)+len(c.Release) == 0
}

// Reconcile decides the writes making the Works of the managers in owned
// desired: existing are the stored Works of the same service (and those
// named as desired ones), in any order, possibly twice. A desired Work is
// created when absent, and updated when the stored one differs once the
// server's mutation of Works is applied to it; its managed-by label is the
// stored one's managers outside owned plus the desired one's. A stored Work
// an owned manager keeps that is not desired is deleted, or released when a
// manager outside owned keeps it too. Works being deleted are left to
// finish (a desired one is created again once gone: its deletion queues the
// caller again). When owned managers no longer keep a Work, drop are the
// labels they take off.
func Reconcile(owned []string, desired, existing []*workv1alpha1.Work, drop ...string) (Changes, error) {
	stored := make(map[string]*workv1alpha1.Work, len(existing))
	for _, w := range existing {
		stored[w.Namespace+"/"+w.Name] = w
	}
	var c Changes
	want := make(map[string]bool, len(desired))
	for _, d := range desired {
		key := d.Namespace + "/" + d.Name
		want[key] = true
		cur, ok := stored[key]
		switch {
		case !ok:
			c.Create = append(c.Create, d)
			continue
		case cur.DeletionTimestamp != nil:
			continue
		case len(managers(cur)) == 0:
			c.Conflicts = append(c.Conflicts, d)
			continue
		}
		merged, err := asStored(cur, d, owned)
		if err != nil {
			return Changes{}, err
		}
		if differs(cur, merged) {
			c.Update = append(c.Update, Update{Stored: cur, Desired: merged})
		}
	}
	keys := slices.Sorted(maps.Keys(stored))
	for _, key := range keys {
		cur := stored[key]
		if want[key] || cur.DeletionTimestamp != nil || !slices.ContainsFunc(managers(cur), func(m string) bool { return slices.Contains(owned, m) }) {
			continue
		}
		others := outside(managers(cur), owned)
		if len(others) == 0 {
			c.Delete = append(c.Delete, cur)
			continue
		}
		c.Release = append(c.Release, Release{Stored: cur, Managers: joinManagers(others), Drop: drop})
	}
	return c, nil
}

// outside returns the managers of ms not in owned.
func outside(ms, owned []string) []string {
	return slices.DeleteFunc(slices.Clone(ms), func(m string) bool { return slices.Contains(owned, m) })
}

// asStored is desired as the server would store it over cur: cur's labels
// (the permanent id, other managers' labels) kept under desired's, the
// managers outside owned kept beside desired's, the manifests mutated as
// the Works webhook does.
func asStored(cur, desired *workv1alpha1.Work, owned []string) (*workv1alpha1.Work, error) {
	out := desired.DeepCopy()
	labels := map[string]string{}
	maps.Copy(labels, cur.Labels)
	maps.Copy(labels, desired.Labels)
	labels[networkingv1alpha1.EndpointSliceWorkManagedByLabel] = joinManagers(append(outside(managers(cur), owned), managers(desired)...))
	out.Labels = labels
	if err := mutation.MutateWork(out, false); err != nil {
		return nil, err
	}
	return out, nil
}

// differs tells whether stored lacks a label, annotation or finalizer of
// desired, or has another spec.
func differs(stored, desired *workv1alpha1.Work) bool {
	if !objectmeta.Covers(stored, desired) {
		return true
	}
	for _, f := range desired.Finalizers {
		if !slices.Contains(stored.Finalizers, f) {
			return true
		}
	}
	a, _ := json.Marshal(stored.Spec)
	b, _ := json.Marshal(desired.Spec)
	return string(a) != string(b)
}

// Patch is the merge patch turning stored into desired (as asStored makes
// it): labels and annotations merged, finalizers added (guarded by the
// resourceVersion), the spec replaced.
func Patch(stored, desired *workv1alpha1.Work) ([]byte, error) {
	meta := map[string]any{"labels": desired.Labels}
	if len(desired.Annotations) > 0 {
		meta["annotations"] = desired.Annotations
	}
	finalizers := slices.Clone(stored.Finalizers)
	for _, f := range desired.Finalizers {
		if !slices.Contains(finalizers, f) {
			finalizers = append(finalizers, f)
		}
	}
	if len(finalizers) != len(stored.Finalizers) {
		meta["finalizers"] = finalizers
		meta["resourceVersion"] = stored.ResourceVersion
	}
	spec := map[string]any{
		"workload":                    desired.Spec.Workload,
		"suspendDispatching":          desired.Spec.SuspendDispatching,
		"preserveResourcesOnDeletion": desired.Spec.PreserveResourcesOnDeletion,
	}
	return json.Marshal(map[string]any{"metadata": meta, "spec": spec})
}

// ReleasePatch is the merge patch releasing r's Work.
func ReleasePatch(r Release) ([]byte, error) {
	labels := map[string]any{networkingv1alpha1.EndpointSliceWorkManagedByLabel: r.Managers}
	for _, l := range r.Drop {
		labels[l] = nil
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "resourceVersion": r.Stored.ResourceVersion}})
}
