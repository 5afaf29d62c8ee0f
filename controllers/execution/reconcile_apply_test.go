package execution

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestApplyReconciler(t *testing.T) {
	t.Parallel()
	want := configMap("cm", map[string]string{"k": "v"}, nil)
	// applied is the member object holding the manifest.
	applied := func() *unstructured.Unstructured {
		u := memberObject(want)
		u.SetResourceVersion("12")
		u.SetFinalizers([]string{"member.io/guard"})
		return u
	}
	drifted := func() *unstructured.Unstructured {
		u := applied()
		_ = unstructured.SetNestedField(u.Object, "edited", "data", "k")
		return u
	}
	theirs := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "default", "resourceVersion": "3"}, "data": map[string]any{"k": "theirs"}}}
	}
	overwrite := map[string]string{workv1alpha2.ResourceConflictResolutionAnnotation: workv1alpha2.ResourceConflictResolutionOverwrite}
	// promoted is an object someone else made that holds the manifest
	// but for Flotilla's metadata (a promoted object), with its own
	// label and annotation.
	promoted := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "default", "resourceVersion": "3",
				"labels": map[string]any{"app": "cm", "tier": "web"}, "annotations": map[string]any{"team": "blue"}},
			"data": map[string]any{"k": "v"}}}
	}
	// labelled is promoted once Flotilla wrote it.
	labelled := func() *unstructured.Unstructured {
		u := promoted()
		u.SetLabels(map[string]string{"app": "cm", "tier": "web", "karmada.io/managed": "true", "work.karmada.io/permanent-id": testWorkID})
		_ = unstructured.SetNestedField(u.Object, "old", "data", "k")
		return u
	}
	conflictErr := apierrors.NewConflict(configMapsGVR.GroupResource(), "cm", errors.New("stale"))
	tests := []struct {
		name     string
		manifest map[string]any
		member   []*unstructured.Unstructured
		// cached: the member informer holds this, not the member's object.
		cached *unstructured.Unstructured
		// unseen: the object is made after the reads of observe.
		unseen bool
		// upToDate: the records say the manifest was written at the
		// member object's resourceVersion.
		upToDate   bool
		errs       map[string][]error
		retainErr  error
		wantWrites []string
		wantWrote  bool
		wantErr    bool
		// wantData is the member's data.k afterwards; "" when absent.
		wantData    string
		wantAdopted bool
		// watched: the object is watched on its own afterwards (taken
		// over untouched); watchedBefore: it was before.
		watched, watchedBefore bool
		// applied: the Work's status records its generation as applied;
		// recorded: the records say this manifest was written last, at
		// an older resourceVersion.
		applied, recorded bool
		// wantDrift are the drifted paths reported.
		wantDrift string
		// replaced: the records say this manifest's last write replaced
		// the member object's resourceVersion (the cache is behind it).
		replaced bool
	}{
		{name: "absent: created", manifest: want, wantWrites: []string{"create configmaps/default/cm"}, wantWrote: true, wantData: "v"},
		{name: "holds the manifest: no write", manifest: want, member: []*unstructured.Unstructured{applied()}, wantData: "v"},
		{name: "recorded as written at its resourceVersion: no write, not even compared", manifest: want,
			member: []*unstructured.Unstructured{drifted()}, upToDate: true, wantData: "edited"},
		{name: "drifted: updated", manifest: want, member: []*unstructured.Unstructured{drifted()},
			wantWrites: []string{"update configmaps/default/cm"}, wantWrote: true, wantData: "v"},
		{name: "drifted after the Work was applied: written back, the drift reported", manifest: want, member: []*unstructured.Unstructured{drifted()},
			applied: true, wantWrites: []string{"update configmaps/default/cm"}, wantWrote: true, wantData: "v", wantDrift: "data.k"},
		{name: "drifted after this manifest was written (the records): written back, the drift reported", manifest: want,
			member: []*unstructured.Unstructured{drifted()}, recorded: true,
			wantWrites: []string{"update configmaps/default/cm"}, wantWrote: true, wantData: "v", wantDrift: "data.k"},
		{name: "a new manifest over the old one's object: written, not a drift", manifest: configMap("cm", map[string]string{"k": "new"}, nil),
			member: []*unstructured.Unstructured{applied()}, wantWrites: []string{"update configmaps/default/cm"}, wantWrote: true, wantData: "new"},
		{name: "drifted and the write back fails: the drift reported with the error", manifest: want, member: []*unstructured.Unstructured{drifted()},
			applied: true, errs: map[string][]error{"update": {errors.New("forbidden")}},
			wantWrites: []string{"update configmaps/default/cm"}, wantErr: true, wantData: "edited", wantDrift: "data.k"},
		{name: "someone else's with overwrite, the Work applied: a take-over, not a drift",
			manifest: configMap("cm", map[string]string{"k": "v"}, overwrite), applied: true,
			member: []*unstructured.Unstructured{theirs()}, wantWrites: []string{"create configmaps/default/cm", "update configmaps/default/cm"}, wantWrote: true, wantData: "v", wantAdopted: true},
		{name: "someone else's: not written, Karmada's error", wantWrites: []string{"create configmaps/default/cm"}, manifest: want, member: []*unstructured.Unstructured{theirs()},
			wantErr: true, wantData: "theirs"},
		{name: "someone else's with overwrite: taken over, marked adopted",
			manifest: configMap("cm", map[string]string{"k": "v"}, map[string]string{workv1alpha2.ResourceConflictResolutionAnnotation: workv1alpha2.ResourceConflictResolutionOverwrite}),
			member:   []*unstructured.Unstructured{theirs()}, wantWrites: []string{"create configmaps/default/cm", "update configmaps/default/cm"}, wantWrote: true, wantData: "v", wantAdopted: true},
		{name: "someone else's holding the manifest but for Flotilla's metadata, with overwrite: taken over untouched, watched", wantWrites: []string{"create configmaps/default/cm"},
			manifest: configMap("cm", map[string]string{"k": "v"}, overwrite),
			member:   []*unstructured.Unstructured{promoted()}, wantData: "v", watched: true},
		{name: "taken over untouched and recorded: watched again (the member's informers may be new)", wantWrites: []string{"create configmaps/default/cm"},
			manifest: configMap("cm", map[string]string{"k": "v"}, overwrite), upToDate: true,
			member: []*unstructured.Unstructured{func() *unstructured.Unstructured {
				u := promoted()
				u.SetResourceVersion("12")
				return u
			}()}, wantData: "v", watched: true},
		{name: "taken over untouched, then the manifest changed: written with the metadata, marked adopted, no longer watched",
			manifest: configMap("cm", map[string]string{"k": "new"}, overwrite), watchedBefore: true,
			member: []*unstructured.Unstructured{promoted()}, wantWrites: []string{"update configmaps/default/cm"}, wantWrote: true, wantData: "new", wantAdopted: true},
		{name: "holding the manifest but for Flotilla's metadata, without overwrite: Karmada's error, not watched", wantWrites: []string{"create configmaps/default/cm"},
			manifest: want, member: []*unstructured.Unstructured{promoted()}, wantErr: true, wantData: "v"},
		{name: "Flotilla's own object, labelled: updated as ever, not watched",
			manifest: configMap("cm", map[string]string{"k": "v"}, overwrite), member: []*unstructured.Unstructured{labelled()},
			wantWrites: []string{"update configmaps/default/cm"}, wantWrote: true, wantData: "v"},
		{name: "the cache is behind: the update conflicts, read live, written again", manifest: want,
			member: []*unstructured.Unstructured{func() *unstructured.Unstructured {
				u := drifted()
				u.SetResourceVersion("13")
				return u
			}()}, cached: drifted(), errs: map[string][]error{"update": {conflictErr}},
			wantWrites: []string{"update configmaps/default/cm", "update configmaps/default/cm"}, wantWrote: true, wantData: "v"},
		{name: "the cache holds an object deleted from the member: the update is not found, read live, created", manifest: want,
			cached: drifted(), errs: map[string][]error{"update": {apierrors.NewNotFound(configMapsGVR.GroupResource(), "cm")}},
			wantWrites: []string{"update configmaps/default/cm", "create configmaps/default/cm"}, wantWrote: true, wantData: "v"},
		{name: "the cache still holds what this manifest's write replaced: no write, no drift", manifest: want,
			member: []*unstructured.Unstructured{drifted()}, replaced: true, applied: true, wantData: "edited"},
		{name: "a conflict twice: the error", manifest: want, member: []*unstructured.Unstructured{drifted()},
			errs:       map[string][]error{"update": {conflictErr, conflictErr}},
			wantWrites: []string{"update configmaps/default/cm", "update configmaps/default/cm"}, wantErr: true, wantData: "edited"},
		{name: "made between the read and the create: read again, holds the manifest", manifest: want,
			member: []*unstructured.Unstructured{applied()}, unseen: true,
			wantWrites: []string{"create configmaps/default/cm"}, wantData: "v"},
		{name: "made between the read and the create, drifted: read again, updated", manifest: want,
			member: []*unstructured.Unstructured{drifted()}, unseen: true,
			wantWrites: []string{"create configmaps/default/cm", "update configmaps/default/cm"}, wantWrote: true, wantData: "v"},
		{name: "the create fails: its error", manifest: want, errs: map[string][]error{"create": {errors.New("quota")}},
			wantWrites: []string{"create configmaps/default/cm"}, wantErr: true},
		{name: "the create finds the object, which cannot be read: the read's error, nothing written", manifest: want, member: []*unstructured.Unstructured{theirs()},
			errs: map[string][]error{"get": {errors.New("refused")}}, wantWrites: []string{"create configmaps/default/cm"}, wantErr: true, wantData: "theirs"},
		{name: "the create fails on something else than the name over someone else's object: read, Karmada's error", manifest: want, member: []*unstructured.Unstructured{theirs()},
			errs: map[string][]error{"create": {apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm", nil)}}, wantWrites: []string{"create configmaps/default/cm"}, wantErr: true, wantData: "theirs"},
		{name: "retain fails: no write", manifest: want, member: []*unstructured.Unstructured{drifted()}, retainErr: errors.New("lua"),
			wantErr: true, wantData: "edited"},
		{name: "an unknown kind: no write", manifest: map[string]any{"apiVersion": "x/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}},
			wantErr: true},
		{name: "no name: no write", manifest: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeMember(tc.member...)
			for verb, errs := range tc.errs {
				f.errs[verb] = errs
			}
			if tc.cached != nil {
				f.cached = map[string]*unstructured.Unstructured{"configmaps/default/cm": tc.cached}
			}
			f.unseen = tc.unseen
			work := newWork(t, "cm", tc.manifest)
			if tc.watchedBefore {
				f.watched["configmaps/default/cm"] = work.Namespace + "/" + work.Name
			}
			recs := newRecords()
			if tc.upToDate {
				recs.set(work.UID, 0, manifestHash(work.Spec.Workload.Manifests[0].Raw), "12")
			}
			if tc.recorded {
				recs.set(work.UID, 0, manifestHash(work.Spec.Workload.Manifests[0].Raw), "5")
			}
			if tc.replaced {
				recs.wrote(work.UID, 0, manifestHash(work.Spec.Workload.Manifests[0].Raw), "13", "12")
			}
			retained := 0
			r := applyReconciler{objects: f.api(), records: recs, applied: tc.applied, retain: func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				retained++
				return desired, tc.retainErr
			}}
			outcomes := r.reconcile(context.Background(), testCluster, work)
			if len(outcomes) != 1 {
				t.Fatalf("%d outcomes for one manifest", len(outcomes))
			}
			o := outcomes[0]
			if (o.err != nil) != tc.wantErr || o.wrote != tc.wantWrote {
				t.Errorf("outcome error %v wrote %v, want error %v wrote %v", o.err, o.wrote, tc.wantErr, tc.wantWrote)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes); diff != "" {
				t.Errorf("member writes (-want +got):\n%s", diff)
			}
			if got := o.drift.Paths(); got != tc.wantDrift {
				t.Errorf("drifted paths %q, want %q", got, tc.wantDrift)
			}
			stored := f.objects["configmaps/default/cm"]
			data := ""
			if stored != nil {
				data, _, _ = unstructured.NestedString(stored.Object, "data", "k")
			}
			if data != tc.wantData {
				t.Errorf("member data.k %q, want %q", data, tc.wantData)
			}
			if stored != nil && tc.wantWrote {
				if got := stored.GetFinalizers(); len(tc.member) > 0 && len(tc.member[0].GetFinalizers()) > 0 && len(got) == 0 {
					t.Errorf("the member's finalizers were dropped")
				}
				if (stored.GetAnnotations()[workv1alpha2.AdoptedAnnotation] == "true") != tc.wantAdopted {
					t.Errorf("annotations %v, want adopted %v", stored.GetAnnotations(), tc.wantAdopted)
				}
				if o.observed == nil || o.observed.GetResourceVersion() != stored.GetResourceVersion() {
					t.Errorf("observed %v, want the stored object", o.observed)
				}
				// Written, it is recorded: the same manifest over the
				// same object is skipped next time.
				if !recs.upToDate(work.UID, 0, manifestHash(work.Spec.Workload.Manifests[0].Raw), stored.GetResourceVersion()) {
					t.Error("the write was not recorded")
				}
			}
			if o.err == nil && o.observed != nil && o.resource != "configmaps" {
				t.Errorf("resource %q", o.resource)
			}
			if tc.upToDate && retained != 0 {
				t.Error("an up-to-date manifest was compared")
			}
			wantWatched := map[string]string{}
			if tc.watched {
				wantWatched["configmaps/default/cm"] = work.Namespace + "/" + work.Name
			}
			if diff := cmp.Diff(wantWatched, f.watched); diff != "" {
				t.Errorf("objects watched one by one (-want +got):\n%s", diff)
			}
			if tc.watched {
				// Untouched: the member object is as it was, and recorded
				// at its resourceVersion, so that it is not compared again.
				if !cmp.Equal(stored.Object, tc.member[0].Object) {
					t.Errorf("the member object changed: %v", stored.Object)
				}
				if o.observed == nil || !recs.upToDate(work.UID, 0, manifestHash(work.Spec.Workload.Manifests[0].Raw), stored.GetResourceVersion()) {
					t.Error("taken over untouched, not observed or not recorded")
				}
			}
		})
	}
}

// A Work that lost manifests loses their records.
func TestApplyReconcilerTrimsRecords(t *testing.T) {
	t.Parallel()
	work := newWork(t, "cm", configMap("cm", nil, nil))
	recs := newRecords()
	recs.set(work.UID, 3, "h", "1")
	r := applyReconciler{objects: newFakeMember().api(), records: recs,
		retain: func(d, _ *unstructured.Unstructured) (*unstructured.Unstructured, error) { return d, nil }}
	r.reconcile(context.Background(), testCluster, work)
	if recs.upToDate(work.UID, 3, "h", "1") {
		t.Error("the record of a manifest the Work no longer has was kept")
	}
	if _, ok := recs.m[work.UID][0]; !ok {
		t.Error("the created manifest was not recorded")
	}
}
