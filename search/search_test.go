package search

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/flotilla-io/flotilla/search/index"
)

type responder struct{ err error }

func (r *responder) Object(int, runtime.Object) {}
func (r *responder) Error(err error)            { r.err = err }

// TestFullTextQueryBounds checks that search/fulltext answers a query over
// a bound of the index with a 400 naming the bound and its value, before
// it looks at any store or reviews any access (the searchREST here has
// neither).
func TestFullTextQueryBounds(t *testing.T) {
	t.Parallel()
	ix, err := index.Open(index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	s := &searchREST{index: ix}
	many := make([]string, 200)
	for i := range many {
		many[i] = "word" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	for _, tc := range []struct {
		name, query, message string
	}{
		{"100 KB", strings.Repeat("nginx ", 100<<10/6), "query is 102396 bytes long, over the limit of 4096 bytes"},
		{"200 clauses", strings.Join(many, " "), "query has 200 clauses, over the limit of 64 clauses"},
		{"9 wildcards", strings.Repeat("name:web* ", 9), "over the limit of 8"},
		{"wildcard with too many stars", "name:" + strings.Repeat("w*", 17), "over the limit of 16 per wildcard"},
		{"malformed", "kind:", "invalid query at position 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &responder{}
			ctx := request.WithUser(t.Context(), &user.DefaultInfo{Name: "dev"})
			h, err := s.Connect(ctx, EndpointFullText, nil, r)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, "/apis/search.karmada.io/v1alpha1/search/fulltext?q="+url.QueryEscape(tc.query), nil)
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
			if !apierrors.IsBadRequest(r.err) || !strings.Contains(r.err.Error(), tc.message) {
				t.Errorf("error %v, want a 400 with %q", r.err, tc.message)
			}
		})
	}
}

func TestQueryErrorIsBadRequest(t *testing.T) {
	t.Parallel()
	le := &index.LimitError{Limit: index.LimitQueryTerms, Max: index.MaxQueryTerms, Msg: "query matches more than 4096 index terms"}
	if err := queryError(le); !apierrors.IsBadRequest(err) || err.Error() != le.Msg {
		t.Errorf("queryError(LimitError) = %v, want a 400 with its message", err)
	}
	if err := queryError(index.ErrClosed); apierrors.IsBadRequest(err) {
		t.Errorf("queryError(%v) is a 400", index.ErrClosed)
	}
}
