package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

const (
	defaultSize = 50
	maxSize     = 1000
	// defaultFacetSize is the number of terms of each facet by default.
	defaultFacetSize = 100
	// facetTermsLimit is what bleve is asked for: every term, so that the
	// cut to FacetSize is made here, with a deterministic order.
	facetTermsLimit = 1 << 20
)

// Facet names of Result.Facets.
const (
	FacetCluster   = "cluster"
	FacetKind      = "kind"
	FacetNamespace = "namespace"
)

// facetFields maps facet names to the fields with doc values they count.
var facetFields = map[string]string{
	FacetCluster:   fieldCluster,
	FacetKind:      fieldKindFacet,
	FacetNamespace: fieldNamespace,
}

// Scope is a part of the index a search may see: one resource of one
// cluster, in some or all namespaces.
type Scope struct {
	Cluster, Group, Resource string
	// Namespaces, when non-nil, restricts the scope to these namespaces;
	// nil means all namespaces of the cluster and resource. An empty
	// non-nil slice matches nothing, and so do cluster-scoped objects for
	// any non-nil slice.
	Namespaces []string
}

// Request is a search.
type Request struct {
	// Query is in bleve query-string syntax, e.g.
	// `image:nginx* cluster:member1 kind:Pod`; "" and "*" match everything.
	// See the package documentation for the rules.
	Query string
	// From is the number of hits to skip; Size the number to return
	// (0 means 50, more than 1000 means 1000).
	From, Size int
	// Scopes, when non-nil, restrict the search to documents inside at
	// least one of them; an empty non-nil slice matches nothing. Total,
	// Hits and Facets all count only documents inside the scopes.
	Scopes []Scope
	// FacetSize is the number of terms of each facet (0 means 100).
	FacetSize int
}

// FacetCount is how many matches have one value of a facet.
type FacetCount struct {
	Term  string
	Count int
}

// Result is the answer to a search.
type Result struct {
	// Total is the number of matching documents.
	Total uint64
	// Hits are the keys of the requested page of matches, best score
	// first, ties in document-id order.
	Hits []Key
	// Facets count all matches (not only the page) per value of "cluster",
	// "kind" and "namespace", by count descending, then term. Objects
	// without a namespace are not counted in "namespace".
	Facets map[string][]FacetCount
}

// Search runs req. A malformed query is a *QueryError.
func (ix *Index) Search(ctx context.Context, req Request) (*Result, error) {
	q, err := parseQuery(req.Query)
	if err != nil {
		return nil, err
	}
	if req.Scopes != nil && len(req.Scopes) == 0 {
		return emptyResult(), nil
	}
	if req.Scopes != nil {
		q = scoped(q, req.Scopes)
	}
	size := req.Size
	if size <= 0 {
		size = defaultSize
	}
	size = min(size, maxSize)
	from := max(req.From, 0)
	facetSize := req.FacetSize
	if facetSize <= 0 {
		facetSize = defaultFacetSize
	}

	sr := bleve.NewSearchRequestOptions(q, size, from, false)
	sr.SortBy([]string{"-_score", "_id"})
	for name, field := range facetFields {
		sr.AddFacet(name, bleve.NewFacetRequest(field, facetTermsLimit))
	}
	res, err := ix.bleve.SearchInContext(ctx, sr)
	if err != nil {
		if errIndexClosed(err) {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("search index: %w", err)
	}

	out := &Result{Total: res.Total, Hits: make([]Key, 0, len(res.Hits)), Facets: make(map[string][]FacetCount, len(facetFields))}
	for _, h := range res.Hits {
		if k, ok := ix.keyForID(h.ID); ok {
			out.Hits = append(out.Hits, k)
		}
	}
	for name := range facetFields {
		counts := []FacetCount{}
		if fr := res.Facets[name]; fr != nil && fr.Terms != nil {
			for _, t := range fr.Terms.Terms() {
				counts = append(counts, FacetCount{Term: t.Term, Count: t.Count})
			}
		}
		slices.SortFunc(counts, func(a, b FacetCount) int {
			if c := cmp.Compare(b.Count, a.Count); c != 0 {
				return c
			}
			return cmp.Compare(a.Term, b.Term)
		})
		if len(counts) > facetSize {
			counts = counts[:facetSize]
		}
		out.Facets[name] = counts
	}
	return out, nil
}

// emptyResult is the result of a search that can match nothing.
func emptyResult() *Result {
	r := &Result{Hits: []Key{}, Facets: make(map[string][]FacetCount, len(facetFields))}
	for name := range facetFields {
		r.Facets[name] = []FacetCount{}
	}
	return r
}

// scoped restricts q to the scopes. Keyword terms score zero (their fields
// skip frequencies), so the restriction leaves the order of hits as it is. It
// is a conjunction rather than a bleve boolean filter because a boolean query
// turns a clause that matches nothing (a query of stop words) into "no
// clause", which a filter would then widen to every document in scope.
func scoped(q query.Query, scopes []Scope) query.Query {
	var terms []query.Query
	for _, s := range scopes {
		if s.Namespaces == nil {
			terms = append(terms, termQuery(fieldScopeResource, scopeResourceTerm(s.Cluster, s.Group, s.Resource)))
			continue
		}
		for _, ns := range s.Namespaces {
			terms = append(terms, termQuery(fieldScopeNamespace, scopeNamespaceTerm(s.Cluster, s.Group, s.Resource, ns)))
		}
	}
	var filter query.Query
	switch len(terms) {
	case 0:
		filter = query.NewMatchNoneQuery()
	case 1:
		filter = terms[0]
	default:
		filter = query.NewDisjunctionQuery(terms)
	}
	return query.NewConjunctionQuery([]query.Query{q, filter})
}

// termQuery is an exact term query on field.
func termQuery(field, term string) *query.TermQuery {
	t := query.NewTermQuery(term)
	t.SetField(field)
	return t
}
