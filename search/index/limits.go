package index

import (
	"context"
	"fmt"
	"math"
	"regexp/syntax"
	"strings"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
)

// Bounds on the work one search may ask for, whatever its query: the
// full-text endpoint is open to every caller allowed to read anything, so
// no query may cost more than a bounded amount of CPU and memory. Each
// bound is checked before the work it bounds, or by bleve itself where
// bleve has the facility (term expansion). A query over one is a
// *LimitError, which the API answers with 400.
const (
	// MaxQueryBytes bounds the length of Request.Query. bleve's parser and
	// the checks here are linear in it.
	MaxQueryBytes = 4 << 10
	// MaxQueryClauses bounds the clauses of a query: its terms, phrases,
	// wildcards, regular expressions and fuzzy terms, each one clause of
	// the boolean query bleve runs (nested conjunctions and disjunctions
	// counted by their clauses).
	MaxQueryClauses = 64
	// MaxPatternClauses bounds the wildcard, regular-expression and fuzzy
	// clauses of a query. Each builds an automaton, which can take about
	// 0.1s before vellum's 10,000-state limit stops it, and walks a term
	// dictionary.
	MaxPatternClauses = 8
	// MaxPatternBytes bounds one wildcard, regular expression or fuzzy
	// term (keyword terms are cut to 256 bytes anyway).
	MaxPatternBytes = 128
	// MaxPatternWildcards bounds the * and ? of one wildcard term: building
	// its automaton costs about the square of their number (measured: 32
	// take 70ms, 500 take 21s).
	MaxPatternWildcards = 16
	// MaxQueryTerms bounds the index terms one search looks up, over all
	// its clauses: a wildcard, regular expression or fuzzy term expands to
	// every term it matches, and each term costs about 4 KB and 10µs (a
	// wildcard matching 20,000 names allocated 80 MB). bleve counts them
	// (search.MaxTermSearchersKey) and fails the search past the limit; the
	// terms of Request.Scopes come on top of it.
	MaxQueryTerms = 4096
)

// Names of the bounds, in LimitError.Limit.
const (
	LimitQueryBytes       = "query length"
	LimitQueryClauses     = "clauses"
	LimitPatternClauses   = "pattern clauses"
	LimitPatternBytes     = "pattern length"
	LimitPatternWildcards = "wildcards per pattern"
	LimitQueryTerms       = "index terms"
	LimitAutomaton        = "automaton size"
)

// LimitError is a query over one of the bounds above.
type LimitError struct {
	// Limit names the bound: one of the Limit constants.
	Limit string
	// Max is the bound's value.
	Max int
	// Msg says what is over the bound, and the bound.
	Msg string
}

// Error returns Msg.
func (e *LimitError) Error() string { return e.Msg }

// queryTooLong is the LimitError of a query over MaxQueryBytes.
func queryTooLong(q string) *LimitError {
	return &LimitError{Limit: LimitQueryBytes, Max: MaxQueryBytes,
		Msg: fmt.Sprintf("query is %d bytes long, over the limit of %d bytes", len(q), MaxQueryBytes)}
}

// checkClauses returns the LimitError of a parsed query with more than
// MaxQueryClauses clauses, or nil.
func checkClauses(q query.Query) *LimitError {
	if n := countClauses(q); n > MaxQueryClauses {
		return &LimitError{Limit: LimitQueryClauses, Max: MaxQueryClauses,
			Msg: fmt.Sprintf("query has %d clauses, over the limit of %d clauses", n, MaxQueryClauses)}
	}
	return nil
}

// countClauses counts the leaf queries of q, the clauses bleve turns into
// searchers.
func countClauses(q query.Query) int {
	switch t := q.(type) {
	case *query.BooleanQuery:
		n := 0
		for _, c := range []query.Query{t.Must, t.Should, t.MustNot, t.Filter} {
			if c != nil {
				n += countClauses(c)
			}
		}
		return n
	case *query.ConjunctionQuery:
		n := 0
		for _, c := range t.Conjuncts {
			n += countClauses(c)
		}
		return n
	case *query.DisjunctionQuery:
		n := 0
		for _, c := range t.Disjuncts {
			n += countClauses(c)
		}
		return n
	}
	return 1
}

// withTermLimit has bleve fail a search that looks up more than
// MaxQueryTerms terms plus scopeTerms, the terms of the scope filter.
func withTermLimit(ctx context.Context, scopeTerms int) context.Context {
	return context.WithValue(ctx, search.MaxTermSearchersKey, MaxQueryTerms+scopeTerms)
}

// limitFromBleve returns the LimitError of a search that bleve stopped at
// one of its own limits, or nil. bleve and vellum report them as plain
// errors, so they are known by their messages; the tests of the limits fail
// if an upgrade changes them.
func limitFromBleve(err error) *LimitError {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "TooManyTermSearchers"):
		return &LimitError{Limit: LimitQueryTerms, Max: MaxQueryTerms,
			Msg: fmt.Sprintf("query matches more than %d index terms, the limit of terms one search may look up "+
				"(a wildcard, regular expression or fuzzy term counts every term it matches): narrow it", MaxQueryTerms)}
	case strings.Contains(msg, "dfa contains more than"), strings.Contains(msg, "too many instructions"):
		// vellum's bounds on the automaton of a pattern (10,000 states,
		// 10 MiB of instructions), which its message names.
		return &LimitError{Limit: LimitAutomaton,
			Msg: fmt.Sprintf("a wildcard, regular expression or fuzzy term of the query is too complex to search: its automaton is over vellum's limit (%s)", msg)}
	}
	return nil
}

// Pattern kinds, as messages name them.
const (
	patternWildcard = "wildcard"
	patternRegexp   = "regular expression"
	patternFuzzy    = "fuzzy term"
)

// pattern checks a string term that bleve searches with an automaton
// (kind is one of the pattern kinds) against the pattern bounds and, for a
// regular expression, against what vellum compiles. The count of patterns
// is checked once the whole query is read (checkPatternCount).
func (c *syntaxChecker) pattern(t token, kind string) {
	c.patterns = append(c.patterns, t.pos)
	if len(t.text) > MaxPatternBytes {
		c.limitAt(t.pos, &LimitError{Limit: LimitPatternBytes, Max: MaxPatternBytes,
			Msg: fmt.Sprintf("the %s at position %d is %d bytes long, over the limit of %d bytes for a wildcard, regular expression or fuzzy term",
				kind, t.pos, len(t.text), MaxPatternBytes)})
		return
	}
	switch kind {
	case patternWildcard:
		if n := strings.Count(t.text, "*") + strings.Count(t.text, "?"); n > MaxPatternWildcards {
			c.limitAt(t.pos, &LimitError{Limit: LimitPatternWildcards, Max: MaxPatternWildcards,
				Msg: fmt.Sprintf("the wildcard at position %d has %d * and ?, over the limit of %d per wildcard", t.pos, n, MaxPatternWildcards)})
		}
	case patternRegexp:
		if msg := regexpProblem(t.text[1 : len(t.text)-1]); msg != "" {
			c.unsupportedAt(t.pos, msg)
		}
	}
}

// checkPatternCount records a query over MaxPatternClauses.
func (c *syntaxChecker) checkPatternCount() {
	if n := len(c.patterns); n > MaxPatternClauses {
		c.limitAt(c.patterns[MaxPatternClauses], &LimitError{Limit: LimitPatternClauses, Max: MaxPatternClauses,
			Msg: fmt.Sprintf("query has %d wildcard, regular-expression and fuzzy clauses, over the limit of %d", n, MaxPatternClauses)})
	}
}

// regexpProblem says why bleve could not search for the regular expression
// re of a query, "" if it can: Go's syntax, then what vellum refuses to
// compile (vellum/regexp/compile.go). It checks re as the search will see
// it: lower-cased (rewrite) and without a leading ^ (bleve's RegexpQuery).
func regexpProblem(re string) string {
	parsed, err := syntax.Parse(strings.TrimPrefix(lowerRegexp(re), "^"), syntax.Perl)
	if err != nil {
		return fmt.Sprintf("invalid regular expression: %v", err)
	}
	var problem string
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch {
		case problem != "":
			return
		case r.Flags&syntax.NonGreedy != 0:
			problem = "lazy quantifiers are not supported in regular expressions"
		case r.Op == syntax.OpBeginLine || r.Op == syntax.OpEndLine || r.Op == syntax.OpBeginText || r.Op == syntax.OpEndText:
			problem = "anchors are not supported in regular expressions: a regular expression always matches a whole term"
		case r.Op == syntax.OpWordBoundary || r.Op == syntax.OpNoWordBoundary:
			problem = "word boundaries are not supported in regular expressions"
		}
		for _, s := range r.Sub {
			walk(s)
		}
	}
	walk(parsed)
	return problem
}

// fuzzinessProblem says why bleve would refuse a fuzziness, "" if it
// would not: bleve truncates it to an integer, which must be 0 to
// searcher.MaxFuzziness.
func fuzzinessProblem(f float64) string {
	if math.IsNaN(f) || f <= -1 || f >= float64(searcher.MaxFuzziness+1) {
		return fmt.Sprintf("fuzziness must be 0 to %d", searcher.MaxFuzziness)
	}
	return ""
}
