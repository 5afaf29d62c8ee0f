package index

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"
)

// FuzzParseQuery checks parseQuery, which turns a caller's query into the
// bleve query, on any input: it never panics, it refuses a query only with
// a *QueryError (placed inside the query) or a *LimitError, what it accepts
// is within the bounds, its grammar errors are bleve's, and a search with
// what it accepts fails only at bleve's own limits, never with an internal
// error (a 500 for the caller).
func FuzzParseQuery(f *testing.F) {
	for _, q := range []string{
		"", "*", "kind:Pod", "kind:Pod -name:x", "image:nginx*", `image:"nginx:1.19"`, `image:nginx\:1.19`,
		"labels.app:web", "label:app=*", "kind:/(pod|node)/", "nginx~1", "name:web~2", "name:p1~3", "p1~-1",
		"name:/a(/", "name:/a+?/", `name:/\bx/`, "name:/p1$/", `name:/x\^y/`, "name:>5", "knd:Pod", "(kind:Pod)",
		"a OR b", `"unterminated`, "a:b^2", "5", "é:x ü:", `\`, "/", "//", "name://", "name:/.{1000}/",
		"name:/(a|b)*a(a|b){20}/", strings.Repeat("a*", 40), strings.Repeat("name:p* ", 9), words(65),
		strings.Repeat("x", MaxQueryBytes+1), "name:" + strings.Repeat("a", 200) + "~1",
	} {
		f.Add(q)
	}
	ix := openTest(f, Options{})
	for i := range 50 {
		ix.Put(podKey("member"+strconv.Itoa(i%2), "default", "p"+strconv.Itoa(i)), nil)
	}
	if err := ix.Flush(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		parsed, err := parseQuery(q)
		var qe *QueryError
		var le *LimitError
		switch {
		case len(q) > MaxQueryBytes:
			if !errors.As(err, &le) || le.Limit != LimitQueryBytes {
				t.Fatalf("query of %d bytes: error %v, want the length limit", len(q), err)
			}
			return
		case errors.As(err, &qe):
			if qe.Query != q || qe.Pos < 0 || qe.Pos > len(q) || qe.Msg == "" {
				t.Fatalf("parseQuery(%q): malformed QueryError %+v", q, qe)
			}
		case errors.As(err, &le):
			if le.Max <= 0 || !strings.Contains(le.Msg, "limit of "+strconv.Itoa(le.Max)) {
				t.Fatalf("parseQuery(%q): LimitError %+v does not name its bound", q, le)
			}
		case err != nil:
			t.Fatalf("parseQuery(%q): error %v is neither a QueryError nor a LimitError", q, err)
		default:
			if n := countClauses(parsed); n > MaxQueryClauses {
				t.Fatalf("parseQuery(%q) accepted %d clauses", q, n)
			}
		}

		_, bleveErr := query.NewQueryStringQuery(q).Parse()
		if se := checkSyntax(q); !matchAll(q) && (bleveErr != nil) != (se != nil && se.grammar) {
			t.Fatalf("query %q: bleve error %v, checkSyntax %+v", q, bleveErr, se)
		}

		if err != nil {
			return
		}
		_, err = ix.Search(context.Background(), Request{Query: q, Scopes: []Scope{{Cluster: "member1", Resource: "pods", Namespaces: []string{"default"}}}})
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("Search(%q): %v, want success or a LimitError", q, err)
		}
		if le != nil && le.Limit != LimitQueryTerms && le.Limit != LimitAutomaton {
			t.Fatalf("Search(%q): %v, which parseQuery let through", q, err)
		}
	})
}
