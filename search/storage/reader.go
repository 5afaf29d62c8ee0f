package storage

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	searchcache "github.com/flotilla-io/flotilla/search/cache"
)

// TableConvertor prints objects of one kind as a Table.
type TableConvertor interface {
	Convert(ctx context.Context, gvk schema.GroupVersionKind, objs [][]byte, opts *metav1.TableOptions, listMeta metav1.ListMeta) (*metav1.Table, error)
}

// Reader serves reads of the multi-cluster cache with Kubernetes API
// semantics: get, list (label and field selectors, limit and continue
// across clusters) and watch (resuming from a multi-cluster
// resourceVersion), in JSON, YAML or as a Table, filtered by what the
// caller may read.
type Reader struct {
	Stores func(schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{})
	// KindFor maps a resource no store caches to its kind, as the members
	// serve it, so that a list of an uncached resource is an empty
	// <Kind>List (as Karmada answers), not 404. Nil, or a resource no
	// member serves, leaves 404.
	KindFor func(schema.GroupVersionResource) (string, bool)
	Access  *Access
	Table   TableConvertor
	// StallTimeout is how long a write to a watch client may block
	// before the watch is cut off (watchguard.StallTimeout if 0).
	StallTimeout time.Duration
}

// Request is one read of the cache.
type Request struct {
	User      user.Info
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	// Verb is get, list or watch.
	Verb  string
	Query url.Values
}

// Serve answers a read.
func (r *Reader) Serve(w http.ResponseWriter, req *http.Request, rr Request) {
	if err := r.serve(w, req, rr); err != nil {
		writeError(w, err)
	}
}

func (r *Reader) serve(w http.ResponseWriter, req *http.Request, rr Request) error {
	f, tableGVK, err := negotiate(req)
	if err != nil {
		return err
	}
	opts, err := listOptions(rr.Query)
	if err != nil {
		return err
	}
	stores, changed := r.Stores(rr.Resource)
	verb := rr.Verb
	if verb == "list" && opts.Watch {
		verb = "watch"
	}
	if len(stores) == 0 {
		// Nothing cached: a list is empty, and says so in the kind's
		// own list type; a get or a watch has nothing to serve.
		if verb == "list" && r.KindFor != nil {
			if kind, ok := r.KindFor(rr.Resource); ok {
				return r.list(w, req, query{Request: rr, opts: opts, kind: kind, format: f, table: tableGVK})
			}
		}
		return apierrors.NewNotFound(rr.Resource.GroupResource(), rr.Name)
	}
	scopes := r.Access.Filter(req.Context(), rr.User, verb, rr.Namespace, stores)
	if len(scopes) == 0 {
		return apierrors.NewForbidden(rr.Resource.GroupResource(), rr.Name,
			fmt.Errorf("user %q may not %s %s in any member cluster (clusters/proxy on the control plane and the member's own RBAC decide)", rr.User.GetName(), verb, rr.Resource.Resource))
	}
	allowed := make([]*searchcache.Store, 0, len(scopes))
	for _, s := range stores {
		if _, ok := scopes[s]; ok {
			allowed = append(allowed, s)
		}
	}
	q := query{Request: rr, opts: opts, stores: allowed, scopes: scopes, kind: stores[0].Kind, format: f, table: tableGVK}
	switch verb {
	case "get":
		return r.get(w, req, q)
	case "watch":
		return r.watch(w, req, q, changed)
	}
	return r.list(w, req, q)
}

// query is a read with its options decoded and its stores filtered.
type query struct {
	Request
	opts   *metainternalversion.ListOptions
	stores []*searchcache.Store
	scopes map[*searchcache.Store]Scope
	kind   string
	format format
	table  *schema.GroupVersionKind
}

// listOptions decodes and checks the query parameters of a read.
func listOptions(q url.Values) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, badRequest("invalid list options: %v", err)
	}
	if opts.FieldSelector != nil {
		for _, req := range opts.FieldSelector.Requirements() {
			if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
				return nil, badRequest("field selector %q is not supported by the cache: only metadata.name and metadata.namespace are", req.Field)
			}
		}
	}
	if opts.Limit < 0 {
		return nil, badRequest("invalid limit %d: must not be negative", opts.Limit)
	}
	if _, err := ParseMultiRV(opts.ResourceVersion); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return opts, nil
}

// keyFilter returns whether a key is readable and selected by the field
// selector.
func (q *query) keyFilter(s *searchcache.Store) func(key string) bool {
	scope := q.scopes[s]
	fs := q.opts.FieldSelector
	if fs != nil && fs.Empty() {
		fs = nil
	}
	return func(key string) bool {
		ns, name := searchcache.SplitKey(key)
		if s.Namespaced && !scope.allows(ns) {
			return false
		}
		if q.Name != "" && name != q.Name {
			return false
		}
		return fs == nil || fs.Matches(fields.Set{"metadata.name": name, "metadata.namespace": ns})
	}
}

// labelsMatch reports whether the labels of an object's JSON match sel.
func labelsMatch(sel labels.Selector, raw []byte) (bool, error) {
	if sel == nil || sel.Empty() {
		return true, nil
	}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(obj.Metadata.Labels)), nil
}

// get answers one object, with its resourceVersion made multi-cluster.
func (r *Reader) get(w http.ResponseWriter, req *http.Request, q query) error {
	var found []*searchcache.Store
	var item searchcache.Item
	for _, s := range q.stores {
		if !q.scopes[s].allows(q.Namespace) && s.Namespaced {
			continue
		}
		if it, ok := s.Get(searchcache.Key(q.Namespace, q.Name)); ok {
			found = append(found, s)
			item = it
		}
	}
	switch len(found) {
	case 0:
		return apierrors.NewNotFound(q.Resource.GroupResource(), q.Name)
	case 1:
	default:
		clusters := make([]string, len(found))
		for i, s := range found {
			clusters[i] = s.Cluster
		}
		return Ambiguous(q.Resource.GroupResource(), q.Name, clusters)
	}
	s := found[0]
	raw, err := s.Decode(nil, item.Data)
	if err != nil {
		return err
	}
	raw, err = withResourceVersion(raw, MultiRV{s.Cluster: fmt.Sprint(item.RV)}.String())
	if err != nil {
		return err
	}
	if q.format == formatTable {
		return r.writeTable(w, req, q, [][]byte{raw}, metav1.ListMeta{})
	}
	writeObject(w, q.format, raw)
	return nil
}

// Ambiguous is the 409 of a name found in several clusters, in Karmada's words.
func Ambiguous(gr schema.GroupResource, name string, clusters []string) error {
	return apierrors.NewConflict(gr, name, fmt.Errorf("ambiguous objects in clusters [%s]", strings.Join(clusters, ", ")))
}

// withResourceVersion sets metadata.resourceVersion of an object's JSON.
func withResourceVersion(raw []byte, rv string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		md["resourceVersion"] = rv
	}
	return json.Marshal(obj)
}

// list answers a page of objects across clusters: clusters in name order,
// objects in key order within a cluster.
func (r *Reader) list(w http.ResponseWriter, req *http.Request, q query) error {
	start, after, rvs := 0, "", MultiRV{}
	if q.opts.Continue != "" {
		tok, err := parseContinue(q.opts.Continue)
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		rvs, _ = ParseMultiRV(tok.RV)
		if rvs == nil {
			rvs = MultiRV{}
		}
		start = slices.IndexFunc(q.stores, func(s *searchcache.Store) bool { return s.Cluster >= tok.Cluster })
		if start < 0 {
			start = len(q.stores)
		}
		if start < len(q.stores) && q.stores[start].Cluster == tok.Cluster {
			after = tok.Continue
		}
	}
	for _, s := range q.stores {
		if _, ok := rvs[s.Cluster]; !ok {
			rvs[s.Cluster] = fmt.Sprint(s.RV())
		}
	}
	limit := int(q.opts.Limit)
	out := &listWriter{}
	if q.format == formatJSON {
		// JSON streams: each object goes out as it is decompressed, and the
		// list's metadata (known at the end) follows the items.
		out.stream = newStreamWriter(w, apiVersion(q.Resource.GroupVersion()), listKind(q.kind))
	}
	next := continueToken{}
	var buf []byte
	for i := start; i < len(q.stores) && next.Cluster == ""; i++ {
		s := q.stores[i]
		items, _, _ := s.List(q.Namespace, after, 0, q.keyFilter(s))
		after = ""
		for j, it := range items {
			var err error
			buf, err = s.Decode(buf[:0], it.Data)
			if err != nil {
				return err
			}
			if ok, err := labelsMatch(q.opts.LabelSelector, buf); err != nil {
				return err
			} else if !ok {
				continue
			}
			if err := out.add(buf); err != nil {
				return nil // the client went away; nothing more can be said
			}
			if limit > 0 && out.n == limit {
				switch {
				case j < len(items)-1:
					next = continueToken{Cluster: s.Cluster, Continue: it.Key}
				case i < len(q.stores)-1:
					next = continueToken{Cluster: q.stores[i+1].Cluster}
				}
				break
			}
		}
	}
	meta := metav1.ListMeta{ResourceVersion: rvs.String()}
	if next.Cluster != "" {
		next.RV = meta.ResourceVersion
		meta.Continue = next.String()
	}
	switch {
	case out.stream != nil:
		return out.stream.finish(meta)
	case q.format == formatTable:
		return r.writeTable(w, req, q, out.items, meta)
	}
	return out.write(w, q.format, apiVersion(q.Resource.GroupVersion()), listKind(q.kind), meta)
}

// listWriter streams a list's items (JSON) or collects them (YAML, Table).
type listWriter struct {
	stream *streamWriter
	items  [][]byte
	n      int
}

func (l *listWriter) add(raw []byte) error {
	l.n++
	if l.stream != nil {
		return l.stream.item(raw)
	}
	l.items = append(l.items, slices.Clone(raw))
	return nil
}

// streamWriter writes a JSON list as its items come: the status line and
// the start of the list are sent with the first write.
type streamWriter struct {
	w      http.ResponseWriter
	bw     *bufio.Writer
	prefix string
	n      int
}

func newStreamWriter(w http.ResponseWriter, apiVersion, kind string) *streamWriter {
	return &streamWriter{w: w, prefix: `{"kind":"` + kind + `","apiVersion":"` + apiVersion + `","items":[`}
}

func (s *streamWriter) start() {
	if s.bw == nil {
		s.w.Header().Set("Content-Type", "application/json")
		s.w.WriteHeader(http.StatusOK)
		s.bw = bufio.NewWriterSize(s.w, 64<<10)
		_, _ = s.bw.WriteString(s.prefix)
	}
}

func (s *streamWriter) item(raw []byte) error {
	s.start()
	if s.n > 0 {
		_ = s.bw.WriteByte(',')
	}
	s.n++
	_, err := s.bw.Write(raw)
	return err
}

func (s *streamWriter) finish(meta metav1.ListMeta) error {
	s.start()
	md, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	_, _ = s.bw.WriteString(`],"metadata":`)
	_, _ = s.bw.Write(md)
	_, _ = s.bw.WriteString("}")
	return s.bw.Flush()
}

// write answers the collected items in YAML.
func (l *listWriter) write(w http.ResponseWriter, f format, apiVersion, kind string, meta metav1.ListMeta) error {
	md, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	var b strings.Builder
	l.encode(&b, apiVersion, kind, md)
	writeObject(w, f, []byte(b.String()))
	return nil
}

func (l *listWriter) encode(w interface {
	WriteString(string) (int, error)
	Write([]byte) (int, error)
}, apiVersion, kind string, md []byte) {
	_, _ = w.WriteString(`{"kind":"` + kind + `","apiVersion":"` + apiVersion + `","metadata":`)
	_, _ = w.Write(md)
	_, _ = w.WriteString(`,"items":[`)
	for i, it := range l.items {
		if i > 0 {
			_, _ = w.WriteString(",")
		}
		_, _ = w.Write(it)
	}
	_, _ = w.WriteString("]}")
}

// writeTable answers the objects as a Table.
func (r *Reader) writeTable(w http.ResponseWriter, req *http.Request, q query, objs [][]byte, meta metav1.ListMeta) error {
	if r.Table == nil {
		return notAcceptable("tables are not served")
	}
	topts := &metav1.TableOptions{}
	if v := q.Query.Get("includeObject"); v != "" {
		topts.IncludeObject = metav1.IncludeObjectPolicy(v)
	}
	gvk := q.Resource.GroupVersion().WithKind(q.kind)
	t, err := r.Table.Convert(req.Context(), gvk, objs, topts, meta)
	if err != nil {
		return err
	}
	t.APIVersion, t.Kind = q.table.GroupVersion().String(), "Table"
	raw, err := json.Marshal(t)
	if err != nil {
		return err
	}
	writeObject(w, formatJSON, raw)
	return nil
}
