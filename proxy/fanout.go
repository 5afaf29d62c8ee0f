package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// requestInfoFactory parses proxied paths the way a Kubernetes API server does.
var requestInfoFactory = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// DefaultMaxListBytes bounds the bytes of the members' lists one
// clusters/*/proxy list reads, all members together. The lists are held in
// memory until merged (and the merged list with them), so without a bound
// a few concurrent lists of a large fleet would exhaust the server's
// memory. 64 MiB is a list of about 10,000 typical pods.
const DefaultMaxListBytes = 64 << 20

// fanOut returns the handler of clusters/*/proxy/{proxyPath}:
//   - a non-resource path goes to the host as the caller (WithHost; GET and
//     HEAD only);
//   - a named resource is looked up with a GET in every cluster, then the
//     request is proxied to the one cluster that has it (404 when none does,
//     409 when several do);
//   - a collection can only be listed: the lists of all clusters are
//     concatenated into the first one, up to maxListBytes in all.
func (c *Connecter) fanOut(u user.Info, proxyPath string, r rest.Responder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := proxyPath
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		info, err := requestInfoFactory.NewRequestInfo(&http.Request{
			Method: req.Method,
			URL:    &url.URL{Path: p, RawQuery: req.URL.RawQuery},
		})
		if err != nil {
			r.Error(statusError(http.StatusBadRequest, metav1.StatusReasonBadRequest, "", "invalid proxied path %q: %v", p, err))
			return
		}
		if !info.IsResourceRequest {
			c.serveHost(w, req, u, p, r)
			return
		}
		targets, skipped, err := c.readyTargets(req.Context())
		if err != nil {
			r.Error(err)
			return
		}
		if info.Name != "" {
			c.serveNamed(w, req, u, targets, info, proxyPath, r)
			return
		}
		c.serveList(w, req, u, targets, skipped, info, p, r)
	})
}

// readyTargets returns the targets of every cluster that can be proxied to,
// sorted by cluster name, and why the others were left out.
func (c *Connecter) readyTargets(ctx context.Context) ([]*target, []string, error) {
	clusters, err := c.listClusters()
	if err != nil {
		return nil, nil, statusError(http.StatusInternalServerError, metav1.StatusReasonInternalError, "",
			"listing clusters: %v", err)
	}
	slices.SortFunc(clusters, func(a, b *clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	c.members.Retain(clusters)
	logger := klog.FromContext(ctx)
	var targets []*target
	var skipped []string
	for _, cl := range clusters {
		t, err := c.targetFor(cl)
		if err != nil {
			logger.V(4).Info("Skipping cluster in clusters/*/proxy", "cluster", cl.Name, "err", err)
			skipped = append(skipped, fmt.Sprintf("%s: %v", cl.Name, err))
			continue
		}
		targets = append(targets, t)
	}
	return targets, skipped, nil
}

// serveNamed finds the one cluster holding a named resource and proxies the
// request there.
func (c *Connecter) serveNamed(w http.ResponseWriter, req *http.Request, u user.Info, targets []*target,
	info *request.RequestInfo, proxyPath string, r rest.Responder) {
	probe := probePath(info)
	hits := make([]bool, len(targets))
	c.forEach(req.Context(), u, targets, func(ctx context.Context, i int, t *target, rt http.RoundTripper) {
		resp, err := c.get(ctx, t, rt, probe, "")
		if err != nil {
			klog.FromContext(ctx).V(4).Info("Probe failed", "cluster", t.cluster, "path", probe, "err", err)
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		hits[i] = resp.StatusCode == http.StatusOK
	})

	var found []*target
	for i, t := range targets {
		if hits[i] {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		r.Error(statusError(http.StatusNotFound, metav1.StatusReasonNotFound, "",
			"resource not found or don't have permission to get it"))
	case 1:
		found[0].handler(u, proxyPath, r).ServeHTTP(w, req)
	default:
		names := make([]string, len(found))
		for i, t := range found {
			names[i] = t.cluster
		}
		r.Error(statusError(http.StatusConflict, metav1.StatusReasonConflict, "",
			"conflict resource, exist in more than one cluster: %s", strings.Join(names, ",")))
	}
}

// serveList lists a collection in every cluster and concatenates the items.
func (c *Connecter) serveList(w http.ResponseWriter, req *http.Request, u user.Info, targets []*target, skipped []string,
	info *request.RequestInfo, p string, r rest.Responder) {
	if info.Verb != "list" {
		r.Error(statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "",
			"verb %q is not supported on a collection through clusters/*/proxy; only list is", info.Verb))
		return
	}
	type result struct {
		body   []byte
		header http.Header
		err    string
	}
	// One member past the budget makes the whole list fail: stop the others.
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	budget := &listBudget{limit: c.maxListBytes}
	results := make([]result, len(targets))
	c.forEach(ctx, u, targets, func(ctx context.Context, i int, t *target, rt http.RoundTripper) {
		resp, err := c.get(ctx, t, rt, p, req.URL.RawQuery)
		if err != nil {
			results[i].err = err.Error()
			return
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			results[i].err = resp.Status
			return
		}
		body, err := budget.readAll(resp)
		if err != nil {
			if budget.exceeded() {
				cancel()
			}
			results[i].err = err.Error()
			return
		}
		results[i] = result{body: body, header: resp.Header}
	})
	if budget.exceeded() {
		r.Error(errListTooLarge(c.maxListBytes))
		return
	}

	var bodies [][]byte
	var header http.Header
	for i, res := range results {
		if res.body == nil {
			klog.FromContext(req.Context()).V(4).Info("Cluster left out of list", "cluster", targets[i].cluster, "path", p, "err", res.err)
			skipped = append(skipped, fmt.Sprintf("%s: %s", targets[i].cluster, res.err))
			continue
		}
		if header == nil {
			header = res.header
		}
		bodies = append(bodies, res.body)
	}
	merged, err := mergeLists(bodies)
	if err != nil || merged == nil {
		msg := "no cluster answered the list"
		if err != nil {
			msg = err.Error()
		}
		if len(skipped) > 0 {
			msg += " (" + strings.Join(skipped, "; ") + ")"
		}
		r.Error(statusError(http.StatusNotFound, metav1.StatusReasonNotFound, "", "%s", msg))
		return
	}

	for k, vv := range header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Content-Type":
			continue
		}
		if strings.HasPrefix(k, "Access-Control-") {
			continue
		}
		w.Header()[k] = vv
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(merged)
	}
}

// forEach calls fn for every target in parallel, each with its own deadline
// and a round tripper impersonating u, and waits for all of them.
func (c *Connecter) forEach(ctx context.Context, u user.Info, targets []*target,
	fn func(ctx context.Context, i int, t *target, rt http.RoundTripper)) {
	imp := ImpersonationFor(u)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
			defer cancel()
			fn(ctx, i, t, t.roundTripper(imp))
		})
	}
	wg.Wait()
}

// get sends a GET for a JSON document to a cluster. Redirects are not followed.
func (c *Connecter) get(ctx context.Context, t *target, rt http.RoundTripper, p, rawQuery string) (*http.Response, error) {
	location := *t.Location
	location.Path = joinPath(t.Location.Path, p)
	location.RawPath = ""
	location.RawQuery = rawQuery
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location.String(), nil)
	if err != nil {
		return nil, err
	}
	// JSON, whatever the client asked for (a Table or protobuf cannot be
	// concatenated).
	req.Header.Set("Accept", "application/json")
	return rt.RoundTrip(req)
}

// listBudget counts the bytes read from all members for one list.
type listBudget struct {
	limit int64
	used  atomic.Int64
	over  atomic.Bool
}

// errBudgetSpent ends a member's read once the list's budget is spent.
var errBudgetSpent = errors.New("the list's size limit is reached")

// take counts n more bytes and says whether they fit.
func (b *listBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.over.Store(true)
		return false
	}
	return true
}

func (b *listBudget) exceeded() bool { return b.over.Load() }

// readAll reads a member's list within the budget. A list whose announced
// length alone is past the budget is not read at all.
func (b *listBudget) readAll(resp *http.Response) ([]byte, error) {
	if resp.ContentLength > b.limit {
		b.over.Store(true)
		return nil, errBudgetSpent
	}
	return io.ReadAll(budgetReader{r: resp.Body, b: b})
}

// budgetReader counts what it reads against a listBudget.
type budgetReader struct {
	r io.Reader
	b *listBudget
}

func (br budgetReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if n > 0 && !br.b.take(int64(n)) {
		return n, errBudgetSpent
	}
	return n, err
}

// errListTooLarge reports a clusters/*/proxy list past its bound. A
// continue token cannot page the merged list (it is the first cluster's),
// hence the advice to page one cluster at a time.
func errListTooLarge(limit int64) error {
	return statusError(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "",
		"the lists of all clusters together exceed %s, the limit of one clusters/*/proxy list: "+
			"list less at a time with limit (each cluster returns at most that many items), "+
			"narrow the list with a namespace or a label or field selector, "+
			"or list one cluster at a time through clusters/{name}/proxy with limit and continue", byteSize(limit))
}

// byteSize writes n in the largest binary unit that divides it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// mergeLists concatenates the items of JSON lists into the first one, whose
// other fields (kind, apiVersion, metadata) are kept. Bodies that are not
// JSON objects are left out. It returns nil when no body is usable.
func mergeLists(bodies [][]byte) ([]byte, error) {
	var base map[string]json.RawMessage
	items := []json.RawMessage{}
	for _, body := range bodies {
		var list map[string]json.RawMessage
		if err := json.Unmarshal(body, &list); err != nil {
			continue
		}
		var its []json.RawMessage
		if raw, ok := list["items"]; ok {
			if err := json.Unmarshal(raw, &its); err != nil {
				continue
			}
		}
		if base == nil {
			base = list
		}
		items = append(items, its...)
	}
	if base == nil {
		return nil, nil
	}
	rawItems, err := marshalNoEscape(items)
	if err != nil {
		return nil, fmt.Errorf("encoding merged list: %w", err)
	}
	base["items"] = rawItems
	return marshalNoEscape(base)
}

// marshalNoEscape encodes v without escaping HTML characters, so items are
// passed through as the members wrote them.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
