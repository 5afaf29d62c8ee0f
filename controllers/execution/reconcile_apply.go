package execution

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/drift"
)

// outcome is what applying one manifest came to.
type outcome struct {
	ordinal int
	// desired is the manifest; nil when it cannot be read.
	desired *unstructured.Unstructured
	// resource is the manifest's resource (plural) in the member.
	resource string
	// observed is the member object after the apply, when it exists and
	// Flotilla may manage it.
	observed *unstructured.Unstructured
	// wrote says the member object was created or updated.
	wrote bool
	// drift is what the member object held, in the fields Flotilla owns,
	// that differed from this manifest already applied to it (someone
	// changed it in the member); wrote then says the applied values were
	// written back.
	drift drift.Report
	// driftChecked says drift is what differs now, checked in this apply
	// (in the apply modes that leave a drift open): an empty drift then
	// clears the one recorded.
	driftChecked bool
	// held says why the member object was left as it is though it differs
	// from the manifest (heldReportOnly, heldDrifted); empty when it was
	// not.
	held string
	err  error
}

// Why a member object that differs from its manifest was not written.
const (
	// heldReportOnly: the apply mode is ReportOnly.
	heldReportOnly = "ReportOnly"
	// heldDrifted: the apply mode is IfNotDrifted and the object drifted.
	heldDrifted = "IfNotDrifted"
)

// applyReconciler applies the manifests of a Work to its member: one write
// per manifest that changed, none when the member object is still the one
// the last write of the same manifest produced (records) or already holds
// the manifest (isApplied).
type applyReconciler struct {
	// objects reaches the member's objects.
	objects memberObjects
	// records are the member's records of the last writes.
	records *records
	// retain returns desired with what the interpreter keeps of observed
	// (Karmada's Retain); desired itself when the kind has no such hook.
	retain func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// applied says the Work's status records its current generation as
	// applied: a member object that no longer holds its manifest drifted.
	applied bool
	// mode is how the Work's manifests are written.
	mode writeMode
	// recorded are the manifest statuses the Work's status holds, with
	// the drift each records.
	recorded []workv1alpha1.ManifestStatus
}

// reconcile applies every manifest of work to cluster's member.
func (r *applyReconciler) reconcile(ctx context.Context, cluster string, work *workv1alpha1.Work) []outcome {
	manifests := work.Spec.Workload.Manifests
	out := make([]outcome, len(manifests))
	for i := range manifests {
		out[i] = r.applyManifest(ctx, cluster, work, i)
	}
	r.records.trim(work.UID, len(manifests))
	return out
}

// applyManifest creates the manifest's object in the member if it is
// absent, and otherwise updates it unless it already holds the manifest
// or the Work's apply mode keeps it as it is (writeMode). It never writes
// over an object Flotilla does not manage unless the take-over allows it
// (writeMode.checkTakeOver).
func (r *applyReconciler) applyManifest(ctx context.Context, cluster string, work *workv1alpha1.Work, ordinal int) outcome {
	o := outcome{ordinal: ordinal}
	raw := work.Spec.Workload.Manifests[ordinal].Raw
	desired, err := decodeManifest(raw)
	if err != nil {
		o.err = fmt.Errorf("manifest %d: %w", ordinal, err)
		return o
	}
	o.desired = desired
	gvr, err := r.objects.resource(desired)
	if err != nil {
		o.err = err
		return o
	}
	o.resource = gvr.Resource
	serverSide := r.mode.apply == flotillav1alpha1.ApplyServerSide
	// A create is its own probe for an object someone else made: it fails,
	// and the object is then read (below). An apply is not (it would take
	// the object over), so for it the member is asked first.
	observed, err := r.objects.observe(ctx, gvr, desired, serverSide)
	if err != nil {
		o.err = err
		return o
	}
	log := klog.FromContext(ctx).WithValues("resource", gvr.GroupResource(), "object", klog.KObj(desired))
	hash := manifestHash(raw)
	// Two rounds at most: the second after a create found the object
	// already there, or an update found the cache behind the member.
	for round := 0; ; round++ {
		retry := round == 0
		if observed == nil {
			write, verb := r.objects.create, "Created"
			if serverSide {
				write, verb = r.objects.apply, "Applied"
			}
			created, err := write(ctx, gvr, desired)
			if err != nil && retry && !serverSide {
				// Already there: made by someone else, or by Flotilla and not
				// yet in the informer. Not only AlreadyExists says so: a
				// create may fail on something else first (a NodePort
				// Service already there answers 422 "provided port is already
				// allocated"). What is there is handled as if observed; when
				// nothing is, the create's error stands.
				existing, gerr := r.objects.get(ctx, gvr, desired)
				if gerr != nil && apierrors.IsAlreadyExists(err) {
					o.err = gerr
					return o
				}
				if existing != nil {
					observed = existing
					continue
				}
			}
			if err != nil {
				o.err = err
				return o
			}
			log.V(2).Info(verb + " member object")
			if r.objects.unwatch != nil {
				// An untouched object deleted since: the new one is labelled.
				r.objects.unwatch(gvr, created)
			}
			r.records.set(work.UID, ordinal, hash, created.GetResourceVersion())
			o.observed, o.wrote = created, true
			o.driftChecked = r.mode.tracksDrift()
			return o
		}
		if err := r.mode.checkTakeOver(desired, observed, cluster); err != nil {
			o.err = err
			return o
		}
		o.observed = observed
		adopt := adopting(observed)
		if r.mode.apply == flotillav1alpha1.ApplyCreateOnly {
			// It exists: the member owns it.
			r.records.set(work.UID, ordinal, hash, observed.GetResourceVersion())
			if adopt {
				o.err = r.watch(gvr, observed, work)
			}
			return o
		}
		if r.records.behind(work.UID, ordinal, hash, observed.GetResourceVersion()) {
			// The cache has not seen this manifest's write yet; its event
			// brings the object back here. Its status is the one read.
			o.observed = observed
			return o
		}
		if r.records.upToDate(work.UID, ordinal, hash, observed.GetResourceVersion()) {
			// Still as this manifest left it.
			o.driftChecked = r.mode.tracksDrift()
			if adopt {
				// Taken over untouched: its watch may have gone with the
				// member's informers (a new client).
				o.err = r.watch(gvr, observed, work)
			}
			return o
		}
		want, err := r.wanted(desired, observed)
		if err != nil {
			o.err = err
			return o
		}
		if adopt {
			if r.mode.takeOverOf(desired) == flotillav1alpha1.TakeOverIfNoDiff {
				// Only an object that already holds the manifest in the
				// fields Flotilla owns (as drift compares them: not its
				// own metadata, not kubectl's copy of the template).
				if d := drift.Compare(withoutOwnMetadata(want).Object, observed.Object, drift.Options{}); d.Drifted() {
					o.err = notTakenOver(want, cluster, d)
					return o
				}
			}
			if holdsButOwnMetadata(want, observed) {
				log.V(2).Info("Took over member object untouched")
				r.records.set(work.UID, ordinal, hash, observed.GetResourceVersion())
				o.err = r.watch(gvr, observed, work)
				return o
			}
			markAdopted(want)
		}
		if isApplied(want, observed) {
			r.records.set(work.UID, ordinal, hash, observed.GetResourceVersion())
			o.driftChecked = r.mode.tracksDrift()
			return o
		}
		wasApplied := !adopt && (r.applied || r.records.applied(work.UID, ordinal, hash))
		switch r.mode.apply {
		case flotillav1alpha1.ApplyReportOnly:
			// Never written: whatever differs from the manifest is
			// reported (of an object taken over, not the metadata
			// Flotilla would add).
			compared := want
			if adopt {
				compared = withoutOwnMetadata(want)
			}
			o.drift, o.driftChecked, o.held = drift.Compare(compared.Object, observed.Object, drift.Options{}), true, heldReportOnly
			return o
		case flotillav1alpha1.ApplyIfNotDrifted:
			fresh := drift.Compare(want.Object, observed.Object, drift.Options{})
			o.driftChecked = true
			if wasApplied {
				// Changed in the member since it was applied: left so.
				o.drift, o.held = fresh, heldDrifted
				return o
			}
			// A new manifest reaches the member once every recorded
			// drift is resolved.
			if open := unresolved(r.recordedDrift(ordinal), observed.Object, fresh); open.Drifted() {
				o.drift, o.held = open, heldDrifted
				return o
			}
		default:
			if wasApplied && round == 0 {
				// This manifest was applied and the object changed since in
				// what it owns: a drift, written back below. (want holds what
				// Retain keeps of the member, so those fields never differ.)
				o.drift = drift.Compare(want.Object, observed.Object, drift.Options{})
				if o.drift.Drifted() {
					log.Info("Member object drifted from what was applied; writing it back", "paths", o.drift.Paths())
				}
			}
		}
		write := r.objects.update
		if serverSide {
			write = r.objects.apply
		}
		updated, err := write(ctx, gvr, want)
		if (apierrors.IsConflict(err) || apierrors.IsNotFound(err) && !serverSide) && retry {
			// The cache is behind the member: changed, or deleted (a
			// member back from an outage is read again only when its
			// informers list it again).
			if observed, err = r.objects.get(ctx, gvr, desired); err != nil {
				o.err = err
				return o
			}
			continue
		}
		if err != nil {
			o.err = err
			return o
		}
		log.V(2).Info("Updated member object")
		if r.objects.unwatch != nil {
			// Labelled now: the member informers see it.
			r.objects.unwatch(gvr, updated)
		}
		r.records.wrote(work.UID, ordinal, hash, updated.GetResourceVersion(), want.GetResourceVersion())
		o.observed, o.wrote = updated, true
		return o
	}
}

// recordedDrift is the drift the Work's status records for a manifest.
func (r *applyReconciler) recordedDrift(ordinal int) []workv1alpha1.DriftedField {
	for _, ms := range r.recorded {
		if ms.Identifier.Ordinal == ordinal {
			return ms.Drift
		}
	}
	return nil
}

// watch watches obj, taken over untouched for work (memberObjects.watch).
func (r *applyReconciler) watch(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, work *workv1alpha1.Work) error {
	if r.objects.watch == nil {
		return nil
	}
	if err := r.objects.watch(gvr, obj, work.Namespace+"/"+work.Name); err != nil {
		return fmt.Errorf("watching %s %s, taken over untouched: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	return nil
}

// wanted is what is written over observed: desired with the fields the
// member keeps. A server-side apply sends only what the manifest owns, the
// interpreter's Retain applied, against observed's resourceVersion.
func (r *applyReconciler) wanted(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if r.mode.apply != flotillav1alpha1.ApplyServerSide {
		return r.retainFields(desired, observed)
	}
	want, err := r.retain(desired.DeepCopy(), observed)
	if err != nil {
		return nil, fmt.Errorf("retaining the fields of %s %s: %w", observed.GetKind(), klog.KObj(observed), err)
	}
	want.SetResourceVersion(observed.GetResourceVersion())
	return want, nil
}

// retainFields returns desired with the member-owned fields of observed:
// the metadata (retainMemberFields), then what the interpreter retains.
func (r *applyReconciler) retainFields(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	want := desired.DeepCopy()
	retainMemberFields(want, observed)
	want, err := r.retain(want, observed)
	if err != nil {
		return nil, fmt.Errorf("retaining the fields of %s %s: %w", observed.GetKind(), klog.KObj(observed), err)
	}
	return want, nil
}
