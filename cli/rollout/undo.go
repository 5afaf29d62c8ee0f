package rollout

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/retry"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// Undo writes a revision of the template back into it, as kubectl rollout
// undo does for a Deployment: toRevision, or by default the revision
// before the newest. The rollout controller then rolls that change out
// like any other.
func (c *Command) Undo(ctx context.Context, toRevision int64) error {
	revs, err := c.revisions(ctx)
	if err != nil {
		return err
	}
	rev, err := undoRevision(revs, toRevision)
	if err != nil {
		return fmt.Errorf("%w of %s", err, c.Target.Ref())
	}
	// util/json reads whole numbers as int64, as the dynamic client does,
	// so that an unchanged template compares equal.
	var content map[string]any
	if err := json.Unmarshal(rev.Template.Raw, &content); err != nil {
		return fmt.Errorf("reading revision %d of %s: %w", rev.Revision, c.Target.Ref(), err)
	}
	skipped := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := c.template(ctx)
		if err != nil {
			return err
		}
		rolledBack, changed := RollBack(live, content)
		if skipped = !changed; skipped {
			return nil
		}
		_, err = c.resource().Update(ctx, rolledBack, metav1.UpdateOptions{FieldManager: controlplane.UserAgent})
		return err
	})
	if err != nil {
		return err
	}
	if skipped {
		fmt.Fprintf(c.Out, "%s skipped rollback (current template already matches revision %d)\n", c.Target, rev.Revision)
		return nil
	}
	fmt.Fprintf(c.Out, "%s rolled back to revision %d\n", c.Target, rev.Revision)
	return nil
}

// undoRevision picks the revision undo writes back: n, or for 0 the
// highest-numbered one below the newest. revs are sorted by revision.
func undoRevision(revs []flotillav1alpha1.ResourceRevision, n int64) (*flotillav1alpha1.ResourceRevision, error) {
	if n < 0 {
		return nil, fmt.Errorf("--to-revision must be positive, not %d", n)
	}
	if n > 0 {
		if rev := findRevision(revs, n); rev != nil {
			return rev, nil
		}
		return nil, fmt.Errorf("unable to find revision %d", n)
	}
	newest := revs[len(revs)-1].Revision
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].Revision < newest {
			return &revs[i], nil
		}
	}
	return nil, fmt.Errorf("no revision before revision %d", newest)
}

// keptMetadata are the labels and annotations of the live template that
// undo keeps, whatever the revision has: what tooling and the policy that
// claimed the template wrote (kubectl rollout undo keeps the first too).
var keptMetadata = map[string]bool{
	corev1.LastAppliedConfigAnnotation:                      true,
	policyv1alpha1.PropagationPolicyPermanentIDLabel:        true,
	policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: true,
	policyv1alpha1.PropagationPolicyNamespaceAnnotation:     true,
	policyv1alpha1.PropagationPolicyNameAnnotation:          true,
	policyv1alpha1.ClusterPropagationPolicyAnnotation:       true,
}

// RollBack returns live with the content of a revision's template: every
// top-level field but apiVersion, kind, metadata and status replaced by
// the revision's, and the labels and annotations replaced by the
// revision's (but keptMetadata's); generation, name and resourceVersion
// stay live's. changed says whether that differs from live.
func RollBack(live *unstructured.Unstructured, revision map[string]any) (rolledBack *unstructured.Unstructured, changed bool) {
	out := live.DeepCopy()
	for k := range out.Object {
		if !keepTopLevel(k) {
			delete(out.Object, k)
		}
	}
	for k, v := range revision {
		if !keepTopLevel(k) {
			out.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	var labels, annotations map[string]string
	if md, ok := revision["metadata"].(map[string]any); ok {
		labels, annotations = stringMap(md["labels"]), stringMap(md["annotations"])
	}
	out.SetLabels(withKept(labels, live.GetLabels()))
	out.SetAnnotations(withKept(annotations, live.GetAnnotations()))
	return out, !equality.Semantic.DeepEqual(out.Object, live.Object)
}

func keepTopLevel(k string) bool {
	return k == "apiVersion" || k == "kind" || k == "metadata" || k == "status"
}

// withKept is m with live's keptMetadata keys instead of its own; nil if
// empty.
func withKept(m, live map[string]string) map[string]string {
	var out map[string]string
	set := func(k, v string) {
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	for k, v := range m {
		if !keptMetadata[k] {
			set(k, v)
		}
	}
	for k, v := range live {
		if keptMetadata[k] {
			set(k, v)
		}
	}
	return out
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
