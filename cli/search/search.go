package search

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// FullTextPath is flotilla-apiserver's full-text search endpoint.
const FullTextPath = "/apis/search.karmada.io/v1alpha1/search/fulltext"

// fullTextResult is the part of the endpoint's answer the command prints.
type fullTextResult struct {
	Total uint64 `json:"total"`
	Items []struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name              string            `json:"name"`
			Namespace         string            `json:"namespace"`
			CreationTimestamp time.Time         `json:"creationTimestamp"`
			Annotations       map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"items"`
	Facets map[string][]struct {
		Term  string `json:"term"`
		Count int    `json:"count"`
	} `json:"facets"`
}

// Run runs the query q on the control plane flags locates and prints at
// most size matches from the from-th on out.
func Run(ctx context.Context, flags genericclioptions.RESTClientGetter, q string, from, size int, out io.Writer) error {
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	get := func(ctx context.Context, q string, from, size int) ([]byte, error) {
		return cp.Kube.CoreV1().RESTClient().Get().AbsPath(FullTextPath).
			Param("q", q).Param("from", strconv.Itoa(from)).Param("size", strconv.Itoa(size)).DoRaw(ctx)
	}
	return runSearch(ctx, get, q, from, size, time.Now(), out)
}

// runSearch runs a query and prints the matches as a table, then the
// counts by cluster, kind and namespace.
func runSearch(ctx context.Context, get func(ctx context.Context, q string, from, size int) ([]byte, error), q string, from, size int, now time.Time, out io.Writer) error {
	body, err := get(ctx, q, from, size)
	if err != nil {
		if status, ok := err.(apierrors.APIStatus); ok && status.Status().Message != "" {
			return fmt.Errorf("search %q: %s", q, status.Status().Message)
		}
		return fmt.Errorf("search %q: %w", q, err)
	}
	var res fullTextResult
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("search %q: reading the answer: %w", q, err)
	}
	if len(res.Items) == 0 {
		_, err := fmt.Fprintf(out, "No objects match %q.\n", q)
		return err
	}
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, "CLUSTER\tKIND\tNAMESPACE\tNAME\tAGE")
	for _, it := range res.Items {
		ns := it.Metadata.Namespace
		if ns == "" {
			ns = "<none>"
		}
		age := "<unknown>"
		if !it.Metadata.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(now.Sub(it.Metadata.CreationTimestamp))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation], it.Kind, ns, it.Metadata.Name, age)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%d of %d matches (from %d).\n", len(res.Items), res.Total, from)
	for _, facet := range []string{"cluster", "kind", "namespace"} {
		var parts []string
		for _, f := range res.Facets[facet] {
			parts = append(parts, fmt.Sprintf("%s (%d)", f.Term, f.Count))
		}
		if len(parts) > 0 {
			fmt.Fprintf(out, "By %s: %s\n", facet, strings.Join(parts, ", "))
		}
	}
	return nil
}
