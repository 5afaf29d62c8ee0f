package execution

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/ownwrites"
	"github.com/flotilla-io/flotilla/drift"
)

// serverOwnedMetadata are the metadata fields a member's API server sets;
// they never decide whether an object needs writing.
var serverOwnedMetadata = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "selfLink",
}

// isApplied tells whether observed already holds everything desired says:
// every field of desired is present in observed with an equal value, except
// the server-owned metadata fields. Fields only observed has (defaults,
// status, other writers' fields) do not matter. A field desired leaves
// null or empty (an empty string, zero, false, {} or []) matches an absent
// one, as the API server drops those when it stores a typed object. Lists
// must have the same length, element by element.
func isApplied(desired, observed *unstructured.Unstructured) bool {
	want := make(map[string]any, len(desired.Object))
	for k, v := range desired.Object {
		want[k] = v
	}
	if md, ok := desired.Object["metadata"].(map[string]any); ok {
		trimmed := make(map[string]any, len(md))
		for k, v := range md {
			if !slices.Contains(serverOwnedMetadata, k) {
				trimmed[k] = v
			}
		}
		want["metadata"] = trimmed
	}
	return subset(want, observed.Object, false)
}

// subset reports whether want is contained in have. quantity says the
// values are resource quantities.
func subset(want, have any, quantity bool) bool {
	switch w := want.(type) {
	case nil:
		return true
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return have == nil && len(w) == 0
		}
		for k, wv := range w {
			hv, found := h[k]
			if !found || hv == nil {
				if drift.IsZero(wv) {
					continue
				}
				return false
			}
			if !subset(wv, hv, quantity || slices.Contains(drift.QuantityKeys, k)) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return have == nil && len(w) == 0
		}
		if len(w) != len(h) {
			return false
		}
		for i := range w {
			if !subset(w[i], h[i], quantity) {
				return false
			}
		}
		return true
	default:
		return drift.ScalarEqual(w, have, quantity)
	}
}

// manifestHash identifies the content of a manifest as the Work holds it.
func manifestHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// appliedRecord is what the controller last wrote for a manifest: the hash
// of the manifest and the member object's resourceVersion after the write.
type appliedRecord struct {
	hash            string
	resourceVersion string
	// replaced is the resourceVersion the write replaced ("" for a
	// create or no write): a cache still holding it is behind the write.
	replaced string
}

// records remember the last write of each manifest (Work UID, ordinal) of a
// member, so that an unchanged manifest over an unchanged member object is
// skipped without even comparing them. They are lost on restart, which only
// costs a comparison (isApplied), never a write.
type records struct {
	mu sync.Mutex
	m  map[types.UID]map[int]appliedRecord
	// statuses are the controller's last status write of each Work.
	statuses ownwrites.Writes[types.UID, *workv1alpha1.WorkStatus]
}

func newRecords() *records {
	return &records{m: map[types.UID]map[int]appliedRecord{}}
}

// wroteStatus records a status write of a Work that replaced the cached
// resourceVersion replaced and produced resourceVersion produced.
func (r *records) wroteStatus(work types.UID, replaced, produced string, status *workv1alpha1.WorkStatus) {
	r.statuses.RecordWrite(work, replaced, produced, status)
}

// freshStatus returns the status the controller last wrote for work while
// the cached Work is older than that write (the version it replaced, or
// one the write landed over unseen, such as the binding controller's spec
// patch: the status patch sends no resourceVersion), and the cached status
// otherwise. Deciding on the stale copy would write the same status again,
// with new transition times, or write over what the last write recorded
// (a drift written back, whose record the next status would drop).
func (r *records) freshStatus(work *workv1alpha1.Work) *workv1alpha1.WorkStatus {
	if status, ok := r.statuses.Pending(work.UID, work.ResourceVersion); ok {
		return status
	}
	return &work.Status
}

// upToDate tells whether the manifest with hash was written last and the
// member object is still at the resourceVersion that write produced.
func (r *records) upToDate(work types.UID, ordinal int, hash, resourceVersion string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.m[work][ordinal]
	return ok && rec.hash == hash && rec.resourceVersion == resourceVersion && resourceVersion != ""
}

// applied tells whether the manifest with hash is the one written last,
// whatever the member object's resourceVersion now.
func (r *records) applied(work types.UID, ordinal int, hash string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.m[work][ordinal]
	return ok && rec.hash == hash
}

// set records that the manifest with hash is applied at resourceVersion.
func (r *records) set(work types.UID, ordinal int, hash, resourceVersion string) {
	r.wrote(work, ordinal, hash, resourceVersion, "")
}

// wrote records that an update wrote the manifest with hash over the
// object at replaced, which is now at resourceVersion.
func (r *records) wrote(work types.UID, ordinal int, hash, resourceVersion, replaced string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[work] == nil {
		r.m[work] = map[int]appliedRecord{}
	}
	r.m[work][ordinal] = appliedRecord{hash: hash, resourceVersion: resourceVersion, replaced: replaced}
}

// behind tells whether a member object read at resourceVersion is the one
// the last write of the manifest with hash replaced: the cache has not
// seen that write yet (a member's informers list it again a while after
// it comes back from an outage). It is neither a drift nor worth a write.
func (r *records) behind(work types.UID, ordinal int, hash, resourceVersion string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.m[work][ordinal]
	return ok && rec.hash == hash && rec.replaced == resourceVersion && resourceVersion != ""
}

// trim drops the records of a Work's ordinals from n on: the Work has
// only n manifests now.
func (r *records) trim(work types.UID, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ordinal := range r.m[work] {
		if ordinal >= n {
			delete(r.m[work], ordinal)
		}
	}
	if len(r.m[work]) == 0 {
		delete(r.m, work)
	}
}

// forgetWork drops the records of a Work.
func (r *records) forgetWork(work types.UID) {
	r.mu.Lock()
	delete(r.m, work)
	r.statuses.Forget(work)
	r.mu.Unlock()
}
