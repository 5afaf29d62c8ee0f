package index

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// words returns n distinct required terms, "w0 w1 ...".
func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = "w" + strconv.Itoa(i)
	}
	return strings.Join(w, " ")
}

// limitsIndex holds pods p0 ... p4199 in namespace default, so name:p* has
// more terms than MaxQueryTerms, and name:p1* (1,111 names) fewer.
func limitsIndex(t *testing.T) *Index {
	t.Helper()
	ix := openTest(t, Options{})
	for i := range 4200 {
		ix.Put(podKey("member1", "default", "p"+strconv.Itoa(i)), nil)
	}
	mustFlush(t, ix)
	return ix
}

func TestSearchLimits(t *testing.T) {
	ix := limitsIndex(t)
	tests := []struct {
		name  string
		query string
		// limit is the LimitError.Limit wanted, "" for no error.
		limit string
		// message is a part of the error message (the bound and its value).
		message string
		total   uint64
	}{
		{name: "100 KB query", query: strings.Repeat("nginx ", 100<<10/6), limit: LimitQueryBytes, message: "over the limit of 4096 bytes"},
		{name: "query of MaxQueryBytes", query: "name:p1 " + strings.Repeat("x", MaxQueryBytes-len("name:p1 ")), total: 0},
		{name: "200 clauses", query: words(200), limit: LimitQueryClauses, message: "query has 200 clauses, over the limit of 64 clauses"},
		{name: "65 clauses", query: words(65), limit: LimitQueryClauses, message: "limit of 64 clauses"},
		{name: "64 clauses", query: "name:p1 " + words(63), total: 0},
		{name: "64 keyword clauses", query: strings.Repeat("-name:p2 ", 63) + "name:p1", total: 1},
		{name: "9 wildcards", query: strings.Repeat("name:p1* ", 9), limit: LimitPatternClauses, message: "query has 9 wildcard, regular-expression and fuzzy clauses, over the limit of 8"},
		{name: "9 mixed patterns", query: strings.Repeat("name:p1* name:/p.*/ name:p1~1 ", 3), limit: LimitPatternClauses, message: "over the limit of 8"},
		{name: "8 wildcards", query: strings.Repeat("name:p12* ", 8), total: 111},
		{name: "fuzziness 0 is no pattern", query: strings.Repeat("name:p1~0 ", 9), total: 1},
		{name: "lone stars are no pattern", query: strings.Repeat("* ", 9) + "name:p1", total: 1},
		{name: "17 wildcards in a term", query: "name:" + strings.Repeat("p*", 17), limit: LimitPatternWildcards, message: "has 17 * and ?, over the limit of 16 per wildcard"},
		{name: "500 wildcards in a term", query: "name:" + strings.Repeat("a*", 500), limit: LimitPatternBytes, message: "is 1000 bytes long, over the limit of 128 bytes"},
		{name: "16 wildcards in a term", query: "name:p1" + strings.Repeat("?", 3) + strings.Repeat("*", 13), total: 1000},
		{name: "long regular expression", query: "name:/" + strings.Repeat("a", 200) + "/", limit: LimitPatternBytes, message: "the regular expression at position 5 is 202 bytes long, over the limit of 128 bytes"},
		{name: "long fuzzy term", query: strings.Repeat("a", 200) + "~1", limit: LimitPatternBytes, message: "the fuzzy term at position 0 is 200 bytes long"},
		{name: "wildcard expanding too much", query: "name:p*", limit: LimitQueryTerms, message: "query matches more than 4096 index terms"},
		{name: "regular expression expanding too much", query: "name:/p[0-9]+/", limit: LimitQueryTerms, message: "more than 4096 index terms"},
		// 3,333 names for the wildcards, 673 and 771 for the fuzzy terms.
		{name: "fuzzy terms expanding too much", query: "name:p1* name:p2* name:p3* name:p100~2 name:p10~2", limit: LimitQueryTerms, message: "more than 4096 index terms"},
		{name: "wildcards within the terms", query: "-name:p1* -name:p2* -name:p3*", total: 4200 - 3333},
		{name: "wildcard within the terms", query: "name:p1*", total: 1111},
		{name: "regular expression automaton too big", query: "name:/(a|b)*a(a|b){20}/", limit: LimitAutomaton, message: "dfa contains more than 10000 states"},
		// vellum counts a transposition as one edit.
		{name: "fuzzy within the terms", query: "name:p1234~1", total: 37},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r, err := ix.Search(context.Background(), Request{Query: tc.query})
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if tc.limit == "" {
				if err != nil {
					t.Fatalf("Search: %v", err)
				}
				if r.Total != tc.total {
					t.Errorf("total %d, want %d", r.Total, tc.total)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("error %v, want a *LimitError", err)
			}
			if le.Limit != tc.limit || !strings.Contains(le.Error(), tc.message) {
				t.Errorf("error %+v, want limit %q and a message with %q", le, tc.limit, tc.message)
			}
			if len(le.Error()) > 400 {
				t.Errorf("message of %d bytes echoes the query", len(le.Error()))
			}
			if le.Limit != LimitQueryTerms && le.Limit != LimitAutomaton {
				// Found without searching.
				if err := CheckQuery(tc.query); !errors.As(err, &le) {
					t.Errorf("CheckQuery: %v, want a *LimitError", err)
				}
			}
		})
	}
}

// TestTermLimitLeavesScopesOut checks that the scope filter's own terms do
// not count against MaxQueryTerms: a caller allowed in many namespaces has
// the same budget as one allowed everywhere.
func TestTermLimitLeavesScopesOut(t *testing.T) {
	ix := limitsIndex(t)
	namespaces := make([]string, MaxQueryTerms)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("ns-%d", i)
	}
	namespaces[0] = "default"
	scopes := []Scope{{Cluster: "member1", Resource: "pods", Namespaces: namespaces}}
	r, err := ix.Search(context.Background(), Request{Query: "name:p1*", Scopes: scopes})
	if err != nil || r.Total != 1111 {
		t.Fatalf("Search: total %v, error %v; want 1111 hits", r, err)
	}
	_, err = ix.Search(context.Background(), Request{Query: "name:p*", Scopes: scopes})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitQueryTerms {
		t.Fatalf("Search(name:p*): %v, want the term limit", err)
	}
}

func TestCountClauses(t *testing.T) {
	t.Parallel()
	tests := map[string]int{
		"kind:Pod":              1,
		"kind:Pod -name:x":      2,
		"a b c +d -e":           5,
		"5":                     1, // the numeric range bleve adds is dropped
		`"quoted words" name:x`: 2,
		"*":                     1,
	}
	for q, want := range tests {
		parsed, err := parseQuery(q)
		if err != nil {
			t.Fatalf("parseQuery(%q): %v", q, err)
		}
		if got := countClauses(parsed); got != want {
			t.Errorf("countClauses(%q) = %d, want %d", q, got, want)
		}
	}
}
