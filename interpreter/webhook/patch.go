package webhook

import (
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
)

// The bounds of applying a webhook's JSON patch. A response is already at
// most maxResponseBytes, but a patch can make its object much larger than
// itself (a copy duplicates a value, each time), and the library applies
// it in time that grows with the number of operations times the size of
// the lists they insert into or remove from.
const (
	// maxPatchBytes bounds a patch document. A patch of one object need
	// not be larger than the object, and etcd stores at most 1.5 MiB.
	maxPatchBytes = 2 << 20
	// maxPatchOperations bounds the operations of a patch.
	maxPatchOperations = 10_000
	// maxPatchedBytes bounds the patched object, and the bytes the copy
	// operations of a patch may add up to (the library's
	// AccumulatedCopySizeLimit).
	maxPatchedBytes = 3 << 20
	// maxPatchWork bounds the work of a patch: the operations that insert,
	// remove or move a key or an element, weighted, times the bytes of the
	// document they work on. The library copies a whole list for each
	// insertion or removal at an index (about 45 ns per byte of the list)
	// and scans an object's keys for each removal, so 1,000 insertions
	// into a list of 200 KB take 9 s; this bound keeps a patch under a
	// second on one core.
	maxPatchWork = 1 << 30
	// indexOpWeight is the weight of an operation at a list index: about
	// 64 times the cost of one on an object key.
	indexOpWeight = 64
)

// patched returns a new object: the one sent with the response's patch
// applied, or an unchanged copy when there is no patch. The patch is
// refused, before it is applied when it can be, when it goes over one of
// the bounds above.
func (r *result) patched() (*unstructured.Unstructured, error) {
	resp := r.response
	out := r.object
	if len(resp.Patch) > 0 {
		if resp.PatchType == nil {
			return nil, r.errorf("patch without a patchType")
		}
		if *resp.PatchType != configv1alpha1.PatchTypeJSONPatch {
			return nil, r.errorf("unsupported patchType %q; only %q is", *resp.PatchType, configv1alpha1.PatchTypeJSONPatch)
		}
		if len(resp.Patch) > maxPatchBytes {
			return nil, r.errorf("patch of %d bytes is larger than %d bytes (maxPatchBytes)", len(resp.Patch), maxPatchBytes)
		}
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			return nil, r.errorf("decoding patch: %w", err)
		}
		if err := checkPatchWork(p, len(r.object)+len(resp.Patch)); err != nil {
			return nil, r.errorf("%w", err)
		}
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = maxPatchedBytes
		if out, err = p.ApplyWithOptions(r.object, opts); err != nil {
			var copyErr *jsonpatch.AccumulatedCopySizeError
			if errors.As(err, &copyErr) {
				return nil, r.errorf("applying patch: its copies add more than %d bytes (maxPatchedBytes): %w", maxPatchedBytes, err)
			}
			return nil, r.errorf("applying patch: %w", err)
		}
		if len(out) > maxPatchedBytes {
			return nil, r.errorf("patched object of %d bytes is larger than %d bytes (maxPatchedBytes)", len(out), maxPatchedBytes)
		}
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(out); err != nil {
		return nil, r.errorf("decoding patched object: %w", err)
	}
	return u, nil
}

// checkPatchWork refuses a patch with more than maxPatchOperations
// operations, or whose work on a document of size bytes, as
// maxPatchWork counts it, is over that bound. Copies make the document
// larger as the patch goes: they count with the most they may add.
func checkPatchWork(p jsonpatch.Patch, size int) error {
	if len(p) > maxPatchOperations {
		return fmt.Errorf("patch of %d operations has more than %d (maxPatchOperations)", len(p), maxPatchOperations)
	}
	var ops int64
	copies := false
	for _, op := range p {
		switch op.Kind() {
		case "add", "remove", "move", "copy":
		default:
			continue // replace and test work on one value, which the patch holds or replaces
		}
		copies = copies || op.Kind() == "copy"
		path, _ := op.Path()
		from, _ := op.From()
		if atIndex(path) || atIndex(from) {
			ops += indexOpWeight
		} else {
			ops++
		}
	}
	if copies {
		size += maxPatchedBytes
	}
	if work := ops * int64(size); work > maxPatchWork {
		return fmt.Errorf("patch of %d operations is too much work: %d insertions and removals (those at a list index "+
			"counting %d) in up to %d bytes are over %d (maxPatchWork)", len(p), ops, indexOpWeight, size, int64(maxPatchWork))
	}
	return nil
}

// atIndex tells whether a JSON pointer ends in a list index (or an object
// key spelled as one: that cannot be told without the document).
func atIndex(pointer string) bool {
	i := strings.LastIndexByte(pointer, '/')
	if i < 0 || i == len(pointer)-1 {
		return false
	}
	for _, c := range pointer[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
