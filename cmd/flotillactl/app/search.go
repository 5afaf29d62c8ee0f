package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
)

// fullTextPath is flotilla-apiserver's full-text search endpoint.
const fullTextPath = "/apis/search.karmada.io/v1alpha1/search/fulltext"

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

// newSearchCommand returns search: a full-text query over every cached
// member object the caller may read.
func newSearchCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var from, size int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Find objects across all member clusters (full-text query over the search cache)",
		Long: `Find objects across all member clusters with a bleve query over the objects a
ResourceRegistry caches, answered by ` + fullTextPath + `.

Fields: cluster, kind, apiVersion, group, resource, namespace, name, label
("key=value"), annotation, image, node, phase, condition ("Type=Status");
a bare word searches the whole object. Terms are ANDed; -term excludes;
* and ? are wildcards. Only objects the caller may read are found.`,
		Example: `  ` + self + ` search 'image:nginx* kind:Pod'
  ` + self + ` search 'cluster:member1 phase:Pending' --size 100`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cpc, err := cp.clients()
			if err != nil {
				return err
			}
			get := func(ctx context.Context, q string, from, size int) ([]byte, error) {
				return cpc.kube.CoreV1().RESTClient().Get().AbsPath(fullTextPath).
					Param("q", q).Param("from", strconv.Itoa(from)).Param("size", strconv.Itoa(size)).DoRaw(ctx)
			}
			return runSearch(cmd.Context(), get, args[0], from, size, time.Now(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&from, "from", 0, "Skip this many matches (paging).")
	cmd.Flags().IntVar(&size, "size", 50, "Print at most this many matches.")
	return cmd
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
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", it.Metadata.Annotations["resource.karmada.io/cached-from-cluster"], it.Kind, ns, it.Metadata.Name, age)
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
