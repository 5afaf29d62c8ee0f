package rollout

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/polymorphichelpers"
	"sigs.k8s.io/yaml"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// History prints the template's revisions as kubectl rollout history
// does, oldest first; with revision > 0, that revision's template as YAML.
func (c *Command) History(ctx context.Context, revision int64) error {
	revs, err := c.revisions(ctx)
	if err != nil {
		return err
	}
	if revision > 0 {
		rev := findRevision(revs, revision)
		if rev == nil {
			return fmt.Errorf("unable to find revision %d of %s", revision, c.Target.Ref())
		}
		y, err := yaml.JSONToYAML(rev.Template.Raw)
		if err != nil {
			return fmt.Errorf("revision %d of %s: %w", revision, c.Target.Ref(), err)
		}
		fmt.Fprintf(c.Out, "%s with revision #%d\n%s", c.Target, revision, y)
		return nil
	}
	fmt.Fprintln(c.Out, c.Target.String())
	return WriteHistory(c.Out, revs)
}

// WriteHistory writes revs (sorted by revision) as the table REVISION,
// HASH, CHANGE-CAUSE.
func WriteHistory(out io.Writer, revs []flotillav1alpha1.ResourceRevision) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "REVISION\tHASH\tCHANGE-CAUSE")
	for i := range revs {
		fmt.Fprintf(w, "%d\t%s\t%s\n", revs[i].Revision, revs[i].Hash, changeCause(&revs[i]))
	}
	return w.Flush()
}

// changeCause is the kubernetes.io/change-cause annotation of the
// revision's template, <none> without one.
func changeCause(rev *flotillav1alpha1.ResourceRevision) string {
	var t struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(rev.Template.Raw, &t) == nil {
		if cause := t.Metadata.Annotations[polymorphichelpers.ChangeCauseAnnotation]; cause != "" {
			return cause
		}
	}
	return "<none>"
}

// revisions returns the template's revisions sorted by revision; an error
// if it has none.
func (c *Command) revisions(ctx context.Context) ([]flotillav1alpha1.ResourceRevision, error) {
	if _, err := c.template(ctx); err != nil {
		return nil, err
	}
	list, err := c.Flotilla.FlotillaV1alpha1().ResourceRevisions(c.Target.RolloutNamespace()).List(ctx, metav1.ListOptions{LabelSelector: c.bindingSelector()})
	if err != nil {
		return nil, fmt.Errorf("listing the revisions of %s: %w", c.Target.Ref(), err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no rollout history found for %s", c.Target.Ref())
	}
	revs := list.Items
	slices.SortFunc(revs, func(a, b flotillav1alpha1.ResourceRevision) int {
		if a.Revision != b.Revision {
			return cmp.Compare(a.Revision, b.Revision)
		}
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return revs, nil
}

func findRevision(revs []flotillav1alpha1.ResourceRevision, n int64) *flotillav1alpha1.ResourceRevision {
	for i := range revs {
		if revs[i].Revision == n {
			return &revs[i]
		}
	}
	return nil
}
