// Package proxying serves search.karmada.io's proxying/{name}/proxy: one
// endpoint that answers any Kubernetes request across all members. A
// request goes to the first plugin that takes it, in Karmada's order:
//
//  1. cache: get, list and watch of a cached resource, answered from the
//     multi-cluster cache (search/storage), filtered by what the caller may
//     read;
//  2. cluster: any other request on a cached resource (update, patch,
//     delete, log, exec ...), sent to the one member holding the object
//     among those where the caller may read it, as the caller (the
//     clusters/{name}/proxy machinery of proxy/); an object the caller may
//     not read answers 404, as one that does not exist;
//  3. control plane: everything else, sent to the host API server as the
//     caller (impersonated), never with the server's own rights (unlike
//     Karmada, which forwards with karmada-search's credentials).
//
// It owns the routing and the request rewriting of the cluster plugin; not
// the cache, the member transports or authorization (the server has
// authorized proxying/proxy before Connect is called).
package proxying

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/search/storage"
)

// Connecter implements rest.Connecter for proxying/proxy.
type Connecter struct {
	// Reader answers the cache plugin's reads.
	Reader *storage.Reader
	// Stores returns the stores of a resource (none: not cached).
	Stores func(schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{})
	// Access says which clusters a caller may reach, and where a caller
	// may read (which is where writes look for their object).
	Access *storage.Access
	// Cluster returns the handler proxying a request to one member as the
	// caller (clusters/{name}/proxy); path is the Kubernetes path.
	Cluster func(ctx context.Context, cluster, path string, r rest.Responder) (http.Handler, error)
	// Host proxies a request to the host API server as the caller.
	Host http.Handler
}

var (
	_ rest.Connecter = &Connecter{}
	_ rest.Storage   = &Connecter{}
)

// New returns an empty Proxying; it implements rest.Storage.
func (c *Connecter) New() runtime.Object { return &searchv1alpha1.Proxying{} }

// Destroy implements rest.Storage.
func (c *Connecter) Destroy() {}

// NewConnectOptions implements rest.Connecter: the Kubernetes path is
// read from the request URL itself.
func (c *Connecter) NewConnectOptions() (runtime.Object, bool, string) { return nil, true, "" }

// ConnectMethods implements rest.Connecter.
func (c *Connecter) ConnectMethods() []string {
	return []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
}

// Connect implements rest.Connecter.
func (c *Connecter) Connect(ctx context.Context, name string, _ runtime.Object, r rest.Responder) (http.Handler, error) {
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("no user in the context of the proxying request"))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		path := KubernetesPath(req.URL.Path, "/proxying/"+name+"/proxy")
		c.serve(w, req, u, path, r)
	}), nil
}

// KubernetesPath is the part of an endpoint's URL path after marker ("/"
// when nothing follows it).
func KubernetesPath(urlPath, marker string) string {
	i := strings.Index(urlPath, marker)
	if i < 0 {
		return "/"
	}
	p := urlPath[i+len(marker):]
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// readVerbs are the verbs the cache answers.
var readVerbs = sets.New("get", "list", "watch")

func (c *Connecter) serve(w http.ResponseWriter, req *http.Request, u user.Info, path string, r rest.Responder) {
	info, err := RequestInfo(req, path)
	if err != nil {
		r.Error(apierrors.NewBadRequest(err.Error()))
		return
	}
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	cached := false
	if info.IsResourceRequest {
		stores, _ := c.Stores(gvr)
		cached = len(stores) > 0
	}
	switch {
	case cached && info.Subresource == "" && readVerbs.Has(info.Verb):
		c.Reader.Serve(w, req, storage.Request{
			User: u, Resource: gvr, Namespace: info.Namespace, Name: info.Name, Verb: info.Verb, Query: req.URL.Query(),
		})
	case cached:
		c.serveCluster(w, req, u, info, gvr, path, r)
	default:
		out := req.Clone(req.Context())
		out.URL.Path, out.URL.RawPath = path, ""
		c.Host.ServeHTTP(w, out)
	}
}

// requestInfos parses Kubernetes paths as kube-apiserver does; it is only read.
var requestInfos = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// RequestInfo parses a Kubernetes path (with req's method and query) the
// way the API server would.
func RequestInfo(req *http.Request, path string) (*request.RequestInfo, error) {
	out := req.Clone(req.Context())
	out.URL.Path, out.URL.RawPath = path, ""
	return requestInfos.NewRequestInfo(out)
}

// NamespaceScoped implements rest.Scoper: proxying is cluster-scoped.
func (c *Connecter) NamespaceScoped() bool { return false }

// Parent is the storage of the proxying resource itself, which serves no
// verb: only its proxy subresource does.
type Parent struct{}

// New implements rest.Storage.
func (Parent) New() runtime.Object { return &searchv1alpha1.Proxying{} }

// Destroy implements rest.Storage.
func (Parent) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (Parent) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (Parent) GetSingularName() string { return "proxying" }
