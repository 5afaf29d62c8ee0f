package index

import (
	"context"
	"fmt"
	"math"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

const (
	defaultSize = 50
	maxSize     = 1000
	// defaultFacetSize is the number of terms of each facet by default.
	defaultFacetSize = 100
)

// Facet names of Result.Facets.
const (
	FacetCluster   = "cluster"
	FacetKind      = "kind"
	FacetNamespace = "namespace"
)

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

// Search runs req. A malformed query is a *QueryError, one over a bound of
// limits.go a *LimitError.
func (ix *Index) Search(ctx context.Context, req Request) (*Result, error) {
	q, err := parseQuery(req.Query)
	if err != nil {
		return nil, err
	}
	if req.Scopes != nil && len(req.Scopes) == 0 {
		return emptyResult(), nil
	}
	size := req.Size
	if size <= 0 {
		size = defaultSize
	}
	size = min(size, maxSize)
	from := min(max(req.From, 0), math.MaxInt32)
	facetSize := req.FacetSize
	if facetSize <= 0 {
		facetSize = defaultFacetSize
	}

	text := scoresText(q)
	if text {
		q = zeroKeywordScores(q)
	}
	scopeTerms := 0
	if req.Scopes != nil {
		q, scopeTerms = scoped(q, req.Scopes)
	}
	sr := bleve.NewSearchRequest(q)
	sr.Size = 0
	if !text {
		// Only text scores: every hit ties, ranked by id.
		sr.Score = bleve.ScoreNone
	}
	c := newHitCollector(from + size)
	if err := ix.collect(withTermLimit(ctx, scopeTerms), sr, c); err != nil {
		if errIndexClosed(err) {
			return nil, ErrClosed
		}
		if le := limitFromBleve(err); le != nil {
			return nil, le
		}
		return nil, fmt.Errorf("search index: %w", err)
	}

	ranked := c.ranked(from)
	out := &Result{Total: c.total, Hits: make([]Key, 0, len(ranked)), Facets: ix.facets(c.counts, facetSize)}
	for _, h := range ranked {
		if k, ok := ix.keyForID(h.id); ok {
			out.Hits = append(out.Hits, k)
		}
	}
	return out, nil
}

// CheckQuery returns the error Search would return for query q, if any,
// without searching: a *QueryError or a *LimitError. It cannot tell a query
// that bleve stops at its own limits (MaxQueryTerms, the automaton size),
// which depend on the index.
func CheckQuery(q string) error {
	_, err := parseQuery(q)
	return err
}

// emptyResult is the result of a search that can match nothing.
func emptyResult() *Result {
	return &Result{Hits: []Key{}, Facets: map[string][]FacetCount{FacetCluster: {}, FacetKind: {}, FacetNamespace: {}}}
}

// scoped restricts q to the scopes, with a bleve boolean filter, which
// scores nothing, and returns the number of terms the filter looks up. q
// goes in a conjunction of its own first: a boolean query drops a clause
// that matches nothing (a query of stop words), and the filter alone would
// then match every document in scope.
func scoped(q query.Query, scopes []Scope) (query.Query, int) {
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
	bq := query.NewBooleanQuery([]query.Query{query.NewConjunctionQuery([]query.Query{q})}, nil, nil)
	bq.AddFilter(filter)
	return bq, len(terms)
}

// termQuery is an exact term query on field.
func termQuery(field, term string) *query.TermQuery {
	t := query.NewTermQuery(term)
	t.SetField(field)
	return t
}
