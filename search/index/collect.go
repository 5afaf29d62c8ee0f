package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// The collector here replaces the ranking and faceting of bleve's top-N
// collector, through bleve's documented hook for a custom hit handler
// (search.MakeDocumentMatchHandlerKey). bleve still finds and scores the
// hits; its own sort is by score only, which needs no per-hit field reads.
// For each hit the handler reads one doc value, the document id (fieldKey),
// and from it
//
//   - ranks the hit by score, then id, in a bounded heap of From+Size hits,
//     without loading the stored id of every hit;
//   - counts the facets: the id names cluster, group, resource and
//     namespace, and the kind follows from the resource (Index.types).
//
// This is several times cheaper per hit than bleve's facets and id sort, which
// matters when a query matches most of 100,000 objects.

// hit is a ranked match.
type hit struct {
	score float64
	id    string
}

// hitCollector is the state of one search's handler.
type hitCollector struct {
	keep  int   // From+Size: how many of the best hits to keep
	heap  []hit // the best hits so far, the worst of them at the root
	total uint64
	// counts maps an id prefix, cluster/group/resource/namespace/, to the
	// number of hits under it.
	counts map[string]*int
	id     []byte // the current hit's id
	visit  bindex.DocValueVisitor
}

func newHitCollector(keep int) *hitCollector {
	c := &hitCollector{keep: keep, counts: make(map[string]*int)}
	c.visit = func(_ string, term []byte) { c.id = append(c.id[:0], term...) }
	return c
}

// collect runs sr, whose Size and sort the caller leaves to bleve's
// defaults, through c.
func (ix *Index) collect(ctx context.Context, sr *bleve.SearchRequest, c *hitCollector) error {
	maker := search.MakeDocumentMatchHandler(func(sctx *search.SearchContext) (search.DocumentMatchHandler, bool, error) {
		dvr, err := sctx.IndexReader.DocValueReader([]string{fieldKey})
		if err != nil {
			return nil, false, fmt.Errorf("read document ids: %w", err)
		}
		return func(d *search.DocumentMatch) error {
			if d == nil {
				return nil
			}
			c.id = c.id[:0]
			err := dvr.VisitDocValues(d.IndexInternalID, c.visit)
			score := d.Score
			sctx.DocumentMatchPool.Put(d)
			if err != nil {
				return fmt.Errorf("read document id: %w", err)
			}
			if math.IsNaN(score) {
				// bleve's scorer divides by zero on boosts of zero.
				score = 0
			}
			if len(c.id) > 0 {
				c.add(score, c.id)
			}
			return nil
		}, false, nil
	})
	_, err := ix.bleve.SearchInContext(context.WithValue(ctx, search.MakeDocumentMatchHandlerKey, maker), sr)
	return err
}

// add counts a hit and keeps it if it ranks among the best.
func (c *hitCollector) add(score float64, id []byte) {
	c.total++
	if prefix, ok := facetPrefix(id); ok {
		if p := c.counts[string(prefix)]; p != nil {
			*p++
		} else {
			n := 1
			c.counts[string(prefix)] = &n
		}
	}
	if len(c.heap) < c.keep {
		c.heap = append(c.heap, hit{score, string(id)})
		c.up(len(c.heap) - 1)
		return
	}
	if worst := c.heap[0]; score > worst.score || score == worst.score && string(id) < worst.id {
		c.heap[0] = hit{score, string(id)}
		c.down(0)
	}
}

// worse tells whether heap entry i ranks after entry j.
func (c *hitCollector) worse(i, j int) bool {
	a, b := c.heap[i], c.heap[j]
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

func (c *hitCollector) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !c.worse(i, p) {
			return
		}
		c.heap[i], c.heap[p] = c.heap[p], c.heap[i]
		i = p
	}
}

func (c *hitCollector) down(i int) {
	n := len(c.heap)
	for {
		w := i
		if l := 2*i + 1; l < n && c.worse(l, w) {
			w = l
		}
		if r := 2*i + 2; r < n && c.worse(r, w) {
			w = r
		}
		if w == i {
			return
		}
		c.heap[i], c.heap[w] = c.heap[w], c.heap[i]
		i = w
	}
}

// ranked returns the kept hits, best first, from the from-th on.
func (c *hitCollector) ranked(from int) []hit {
	slices.SortFunc(c.heap, func(a, b hit) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.id, b.id)
	})
	if from >= len(c.heap) {
		return nil
	}
	return c.heap[from:]
}

// facetPrefix returns the cluster/group/resource/namespace/ prefix of an id.
func facetPrefix(id []byte) ([]byte, bool) {
	n := 0
	for i, b := range id {
		if b == '/' {
			n++
			if n == 4 {
				return id[:i+1], true
			}
		}
	}
	return nil, false
}

// facets turns the counts into Result.Facets, by count descending then term,
// at most size terms each.
func (ix *Index) facets(counts map[string]*int, size int) map[string][]FacetCount {
	sums := map[string]map[string]int{FacetCluster: {}, FacetKind: {}, FacetNamespace: {}}
	for prefix, n := range counts {
		parts, ok := splitID(prefix, 5)
		if !ok {
			continue
		}
		sums[FacetCluster][parts[0]] += *n
		if parts[3] != "" {
			sums[FacetNamespace][parts[3]] += *n
		}
		ix.typesMu.RLock()
		ti, ok := ix.types[resourceKey{parts[0], parts[1], parts[2]}]
		ix.typesMu.RUnlock()
		if ok && ti.kind != "" {
			sums[FacetKind][ti.kind] += *n
		}
	}
	out := make(map[string][]FacetCount, len(sums))
	for name, m := range sums {
		fc := make([]FacetCount, 0, len(m))
		for term, n := range m {
			fc = append(fc, FacetCount{Term: term, Count: n})
		}
		slices.SortFunc(fc, func(a, b FacetCount) int {
			if c := cmp.Compare(b.Count, a.Count); c != 0 {
				return c
			}
			return cmp.Compare(a.Term, b.Term)
		})
		out[name] = fc[:min(len(fc), size)]
	}
	return out
}
