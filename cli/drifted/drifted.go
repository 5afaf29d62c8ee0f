// Package drifted lists the member objects whose Works record a drift
// (flotillactl drift): what changed in a member in the fields Flotilla
// applied, with both values, and whether it was written back. It reads the
// Works on the control plane as the caller, page by page, keeping only the
// drifted manifests.
package drifted

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/encoded"
	"github.com/flotilla-io/flotilla/names"
)

// The states of an entry.
const (
	// Open: the member object still differs (the apply mode leaves it, or
	// writing it back failed).
	Open = "Open"
	// Corrected: the applied values were written back; the entry is the
	// last drift found.
	Corrected = "Corrected"
)

// Entry is one drifted member object.
type Entry struct {
	Cluster    string `json:"cluster"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Work is namespace/name of the Work that records it.
	Work  string `json:"work"`
	State string `json:"state"`
	// Since is when the drift was found (the Drifted condition's time).
	Since metav1.Time `json:"since"`
	// Fields are the drifted fields, with both values.
	Fields []workv1alpha1.DriftedField `json:"fields"`
}

// Filter selects entries.
type Filter struct {
	// Namespace of the member objects; every namespace, and cluster-scoped
	// objects, when AllNamespaces.
	Namespace     string
	AllNamespaces bool
	// Clusters; all when empty.
	Clusters []string
}

func (f Filter) keeps(e Entry) bool {
	return (f.AllNamespaces || e.Namespace == f.Namespace) && (len(f.Clusters) == 0 || slices.Contains(f.Clusters, e.Cluster))
}

// Entries returns the drifted manifests of a Work that f keeps.
func Entries(w *workv1alpha1.Work, f Filter) []Entry {
	cluster, ok := names.ClusterOf(w.Namespace)
	if !ok {
		return nil
	}
	state := Corrected
	var since metav1.Time
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDrifted); c != nil {
		since = c.LastTransitionTime
		if c.Status == metav1.ConditionTrue {
			state = Open
		}
	}
	var out []Entry
	for _, ms := range w.Status.ManifestStatuses {
		if len(ms.Drift) == 0 {
			continue
		}
		id := ms.Identifier
		e := Entry{Cluster: cluster, APIVersion: metav1.GroupVersion{Group: id.Group, Version: id.Version}.String(), Kind: id.Kind,
			Namespace: id.Namespace, Name: id.Name, Work: w.Namespace + "/" + w.Name, State: state, Since: since, Fields: ms.Drift}
		if f.keeps(e) {
			out = append(out, e)
		}
	}
	return out
}

// ListFunc lists one page of Works in every namespace.
type ListFunc func(ctx context.Context, opts metav1.ListOptions) (*workv1alpha1.WorkList, error)

// pageSize is the Works one list page holds.
const pageSize = 500

// Collect lists the Works page by page (in the execution namespaces of
// f's clusters only, when it names some) and returns the entries f
// keeps, by cluster, namespace, name.
func Collect(ctx context.Context, list func(namespace string) ListFunc, f Filter) ([]Entry, error) {
	namespaces := []string{""}
	if len(f.Clusters) > 0 {
		namespaces = namespaces[:0]
		for _, c := range f.Clusters {
			namespaces = append(namespaces, names.ExecutionNamespace(c))
		}
	}
	var out []Entry
	for _, ns := range namespaces {
		opts, next := metav1.ListOptions{Limit: pageSize}, list(ns)
		for {
			page, err := next(ctx, opts)
			if err != nil {
				return nil, err
			}
			for i := range page.Items {
				out = append(out, Entries(&page.Items[i], f)...)
			}
			if opts.Continue = page.Continue; opts.Continue == "" {
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return strings.Compare(a.Cluster+"/"+a.Namespace+"/"+a.Kind+"/"+a.Name, b.Cluster+"/"+b.Namespace+"/"+b.Kind+"/"+b.Name)
	})
	return out, nil
}

// Print writes entries as output says: "" (a table), "wide" (the table
// with every field's values), "yaml" or "json" (the entries with their
// fields and both values). withNamespace adds the NAMESPACE column.
func Print(w io.Writer, entries []Entry, output string, withNamespace bool, now time.Time) error {
	if done, err := encoded.Print(w, entries, output, "", "wide"); done || err != nil {
		return err
	}
	tw := printers.GetNewTabWriter(w)
	header := []string{"CLUSTER", "KIND", "NAME", "STATE", "FIELDS", "AGE"}
	if withNamespace {
		header = slices.Insert(header, 2, "NAMESPACE")
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, e := range entries {
		row := []string{e.Cluster, e.Kind, e.Name, e.State, fields(e.Fields, output == "wide"), age(e.Since, now)}
		if withNamespace {
			ns := e.Namespace
			if ns == "" {
				ns = "<none>"
			}
			row = slices.Insert(row, 2, ns)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// fields is the FIELDS cell: the paths, or with wide each as
// path=valueInMember (applied valueApplied).
func fields(fs []workv1alpha1.DriftedField, wide bool) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		if wide {
			parts = append(parts, fmt.Sprintf("%s=%s (applied %s)", f.Path, f.ValueInMember, f.ValueApplied))
		} else {
			parts = append(parts, f.Path)
		}
	}
	return strings.Join(parts, ", ")
}

func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
