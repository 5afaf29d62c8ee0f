package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/search/index"
	"github.com/flotilla-io/flotilla/search/proxying"
	"github.com/flotilla-io/flotilla/search/storage"
)

// The endpoints under search/{name}/...
const (
	// EndpointCache is Karmada's legacy cache endpoint:
	// search/cache/{Kubernetes resource path}.
	EndpointCache = "cache"
	// EndpointOpenSearch is Karmada's placeholder: an empty 200.
	EndpointOpenSearch = "opensearch"
	// EndpointFullText is Flotilla's full-text search:
	// search/fulltext?q=<bleve query>&from=0&size=50.
	EndpointFullText = "fulltext"
)

// searchREST implements rest.Connecter for search/{name}/...
type searchREST struct {
	reader  *storage.Reader
	access  *storage.Access
	manager *searchcache.Manager
	index   *index.Index // nil: full-text search is off
}

var (
	_ rest.Connecter = &searchREST{}
	_ rest.Storage   = &searchREST{}
)

func (s *searchREST) New() runtime.Object { return &searchv1alpha1.Search{} }
func (s *searchREST) Destroy()            {}

// GetSingularName implements rest.SingularNameProvider.
func (s *searchREST) GetSingularName() string { return "search" }

// NamespaceScoped implements rest.Scoper: search is cluster-scoped.
func (s *searchREST) NamespaceScoped() bool { return false }

// NewConnectOptions implements rest.Connecter; the path is read from the URL.
func (s *searchREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, true, "" }

// ConnectMethods implements rest.Connecter: reads only.
func (s *searchREST) ConnectMethods() []string { return []string{http.MethodGet} }

// Connect implements rest.Connecter.
func (s *searchREST) Connect(ctx context.Context, name string, _ runtime.Object, r rest.Responder) (http.Handler, error) {
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return nil, apierrors.NewInternalError(errors.New("no user in the context of the search request"))
	}
	switch name {
	case EndpointCache:
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			s.serveCache(w, req, u, r)
		}), nil
	case EndpointOpenSearch:
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }), nil
	case EndpointFullText:
		if s.index == nil {
			return nil, apierrors.NewServiceUnavailable("full-text search is switched off (--search-index=false)")
		}
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			s.serveFullText(w, req, u, r)
		}), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: searchv1alpha1.GroupName, Resource: "search"}, name)
}

// serveCache answers search/cache/{resource path} from the cache.
func (s *searchREST) serveCache(w http.ResponseWriter, req *http.Request, u user.Info, r rest.Responder) {
	path := proxying.KubernetesPath(req.URL.Path, "/search/"+EndpointCache)
	info, err := proxying.RequestInfo(req, path)
	if err != nil || !info.IsResourceRequest || info.Subresource != "" || (info.Verb != "get" && info.Verb != "list") {
		r.Error(apierrors.NewNotFound(schema.GroupResource{Group: searchv1alpha1.GroupName, Resource: "search"}, "cache"+path))
		return
	}
	s.reader.Serve(w, req, storage.Request{
		User: u, Resource: schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource},
		Namespace: info.Namespace, Name: info.Name, Verb: info.Verb, Query: req.URL.Query(),
	})
}

// FullTextResult is the answer of search/fulltext.
type FullTextResult struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Total is how many objects match, over all pages.
	Total uint64 `json:"total"`
	// From is the offset of the first item.
	From int `json:"from"`
	// Items are the matching objects, each annotated with its cluster.
	Items []json.RawMessage `json:"items"`
	// Facets count the matches by "cluster", "kind" and "namespace".
	Facets map[string][]Facet `json:"facets"`
}

// Facet is how many matches have one value of a field.
type Facet struct {
	Term  string `json:"term"`
	Count int    `json:"count"`
}

// FullTextResultKind is the kind of FullTextResult.
const FullTextResultKind = "SearchResult"

// serveFullText answers a bleve query over the objects the caller may read.
func (s *searchREST) serveFullText(w http.ResponseWriter, req *http.Request, u user.Info, r rest.Responder) {
	q := req.URL.Query()
	from, err1 := intParam(q.Get("from"), 0)
	size, err2 := intParam(q.Get("size"), 50)
	if err := errors.Join(err1, err2); err != nil {
		r.Error(apierrors.NewBadRequest(err.Error()))
		return
	}
	// A query the index refuses costs no access review in the members.
	if err := index.CheckQuery(q.Get("q")); err != nil {
		r.Error(queryError(err))
		return
	}
	stores := s.manager.AllStores()
	scopes := s.access.Filter(req.Context(), u, "list", "", stores)
	if len(scopes) == 0 {
		r.Error(apierrors.NewForbidden(schema.GroupResource{Group: searchv1alpha1.GroupName, Resource: "search"}, EndpointFullText,
			fmt.Errorf("user %q may not read any cached object", u.GetName())))
		return
	}
	byStore := map[index.Key]*searchcache.Store{}
	var ixScopes []index.Scope
	for st, sc := range scopes {
		is := index.Scope{Cluster: st.Cluster, Group: st.Resource.Group, Resource: st.Resource.Resource}
		if !sc.All {
			is.Namespaces = sets.List(sc.Namespaces)
		}
		ixScopes = append(ixScopes, is)
		byStore[index.Key{Cluster: st.Cluster, Group: st.Resource.Group, Resource: st.Resource.Resource}] = st
	}
	res, err := s.index.Search(req.Context(), index.Request{Query: q.Get("q"), From: from, Size: size, Scopes: ixScopes})
	if err != nil {
		r.Error(queryError(err))
		return
	}
	out := FullTextResult{APIVersion: searchv1alpha1.SchemeGroupVersion.String(), Kind: FullTextResultKind,
		Total: res.Total, From: from, Items: []json.RawMessage{}, Facets: map[string][]Facet{}}
	for field, counts := range res.Facets {
		out.Facets[field] = make([]Facet, len(counts))
		for i, c := range counts {
			out.Facets[field][i] = Facet{Term: c.Term, Count: c.Count}
		}
	}
	for _, k := range res.Hits {
		st := byStore[index.Key{Cluster: k.Cluster, Group: k.Group, Resource: k.Resource}]
		if st == nil {
			continue
		}
		it, ok := st.Get(searchcache.Key(k.Namespace, k.Name))
		if !ok {
			continue // deleted since it was indexed
		}
		raw, err := st.Decode(nil, it.Data)
		if err != nil {
			continue
		}
		out.Items = append(out.Items, raw)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		r.Error(err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(raw)
}

// queryError is the API error of a failed search: 400 for a query the
// index refuses (malformed, or over one of its bounds), err itself
// otherwise.
func queryError(err error) error {
	var qe *index.QueryError
	var le *index.LimitError
	if errors.As(err, &qe) || errors.As(err, &le) {
		return apierrors.NewBadRequest(err.Error())
	}
	return err
}

func intParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid paging parameter %q: must be a non-negative integer", v)
	}
	return n, nil
}

// indexer feeds the full-text index from the cache.
type indexer struct{ ix *index.Index }

func indexKey(s *searchcache.Store, key string) index.Key {
	ns, name := searchcache.SplitKey(key)
	return index.Key{Cluster: s.Cluster, Group: s.Resource.Group, Version: s.Resource.Version, Resource: s.Resource.Resource, Kind: s.Kind, Namespace: ns, Name: name}
}

func (x indexer) Put(s *searchcache.Store, key string, obj map[string]any) {
	x.ix.Put(indexKey(s, key), obj)
}
func (x indexer) Delete(s *searchcache.Store, key string) { x.ix.Delete(indexKey(s, key)) }
func (x indexer) DeleteStore(s *searchcache.Store) {
	x.ix.DeleteResource(s.Cluster, s.Resource.Group, s.Resource.Resource)
}
