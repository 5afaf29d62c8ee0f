package security

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestSearchQueryBounds: a 100 KB query, a query of 200 clauses and an
// exploding wildcard are answered 400 naming the limit, and the server
// answers normal queries right after.
func TestSearchQueryBounds(t *testing.T) {
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	client := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient()
	// search answers the Status of a refused query.
	search := func(q string) (code int32, message string) {
		body, err := client.Get().AbsPath("/apis/search.karmada.io/v1alpha1/search/fulltext").Param("q", q).DoRaw(t.Context())
		if err == nil {
			return 200, ""
		}
		var status metav1.Status
		if json.Unmarshal(body, &status) != nil {
			t.Fatalf("query of %d bytes: %v: %s", len(q), err, body)
		}
		return status.Code, status.Message
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
		if code, msg := search(tc.q); code != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", name, code, msg, tc.want)
		}
	}
	// Parsed and judged: the admin reads no cache here (no registry), so
	// 403 "may not read any cached object" is a parsed query's answer.
	if code, msg := search("kind:Deployment"); code == 400 || code >= 500 {
		t.Errorf("a normal query after the refused ones: %d %s", code, msg)
	}
}
