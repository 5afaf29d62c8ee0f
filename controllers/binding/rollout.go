package binding

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	flotillalisters "github.com/flotilla-io/flotilla/apis/generated/listers/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/rolloutplan"
)

// errRevisionUnknown: the revision a cluster is held at is not in the
// cache (yet).
var errRevisionUnknown = errors.New("the revision is not known")

// heldTemplate returns the template a cluster of b runs: under a rollout
// strategy (b.revisions set) the revision the rollout holds it at, read from
// the ResourceRevisions, or the template itself when the cluster is at its
// revision or not held; with the revision's hash under a strategy.
func heldTemplate(revisions flotillalisters.ResourceRevisionLister) func(*bindingView, *unstructured.Unstructured, string) (*unstructured.Unstructured, string, error) {
	return func(b *bindingView, template *unstructured.Unstructured, cluster string) (*unstructured.Unstructured, string, error) {
		if b.revisions == nil {
			return template, "", nil
		}
		current := b.hash(template)
		h, ok := b.revisions[cluster]
		if !ok {
			// A cluster new to the placement: the revision the strategy
			// holds new clusters at, if it does.
			h, ok = b.revisions[flotillav1alpha1.RevisionsAnyCluster]
		}
		if !ok || h == current {
			return template, current, nil
		}
		// Clusters held at one revision share its decoded content for the
		// sync (the sync loop asks one cluster at a time).
		content, ok := b.heldContent[h]
		if !ok {
			rev, err := revisions.ResourceRevisions(names.RolloutNamespace(template.GetNamespace())).Get(names.RevisionName(b.name, h))
			if apierrors.IsNotFound(err) {
				return nil, "", errRevisionUnknown
			} else if err != nil {
				return nil, "", err
			}
			// Decoded as unstructured content (integers as int64), as the
			// template is.
			var u unstructured.Unstructured
			if err := u.UnmarshalJSON(rev.Template.Raw); err != nil {
				return nil, "", fmt.Errorf("revision %s: %w", rev.Name, err)
			}
			if b.heldContent == nil {
				b.heldContent = map[string]map[string]any{}
			}
			content = u.Object
			b.heldContent[h] = content
		}
		return rolloutplan.Held(template, content), h, nil
	}
}

// hash is the content hash of template, computed once per sync.
func (b *bindingView) hash(template *unstructured.Unstructured) string {
	b.hashOnce.Do(func() { b.templateHash = rolloutplan.Hash(template) })
	return b.templateHash
}
