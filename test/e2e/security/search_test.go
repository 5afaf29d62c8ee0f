package security

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestSearchQueryBounds: a 100 KB query, a query of 200 clauses and an
// exploding wildcard are answered 400 naming the limit, and the server
// answers normal queries right after.
func TestSearchQueryBounds(t *testing.T) {
	rest := framework.HostClient(t).CoreV1().RESTClient()
	search := func(q string) error {
		_, err := rest.Get().AbsPath("/apis/search.karmada.io/v1alpha1/search/fulltext").Param("q", q).DoRaw(t.Context())
		return err
	}
	clauses := make([]string, 200)
	for i := range clauses {
		clauses[i] = "name:web" + strings.Repeat("x", i%7)
	}
	for name, tc := range map[string]struct{ q, want string }{
		"100 KB":           {"name:" + strings.Repeat("a", 100*1024), "over the limit of 4096 bytes"},
		"200 clauses":      {strings.Join(clauses, " "), "over the limit of 64 clauses"},
		"wildcard storm":   {"name:" + strings.Repeat("a*", 60), "over the limit of 16 per wildcard"},
		"too many regexps": {strings.TrimSpace(strings.Repeat("name:/a.*/ ", 9)), "over the limit of 8"},
	} {
		err := search(tc.q)
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 400 saying %q", name, err, tc.want)
		}
	}
	if err := search("kind:Deployment"); err != nil {
		t.Errorf("a normal query after the refused ones: %v", err)
	}
}
