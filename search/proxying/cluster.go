package proxying

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeprotobuf "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes/scheme"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/search/storage"
)

// maxBody bounds an update body the cluster plugin rewrites.
const maxBody = 16 << 20

// serveCluster sends a request on a cached object to the one member
// holding it, as the caller.
func (c *Connecter) serveCluster(w http.ResponseWriter, req *http.Request, u user.Info, info *request.RequestInfo, gvr schema.GroupVersionResource, path string, r rest.Responder) {
	if info.Name == "" {
		r.Error(apierrors.NewMethodNotSupported(gvr.GroupResource(), info.Verb))
		return
	}
	cluster, err := c.locate(req, u, info, gvr)
	if err != nil {
		r.Error(err)
		return
	}
	out := req.Clone(req.Context())
	if info.Verb == "update" && info.Subresource == "" {
		body, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
		if err != nil {
			r.Error(apierrors.NewBadRequest(fmt.Sprintf("reading the body: %v", err)))
			return
		}
		body, err = forCluster(body, req.Header.Get("Content-Type"), cluster)
		if err != nil {
			r.Error(err)
			return
		}
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.Header.Set("Content-Length", fmt.Sprint(len(body)))
	}
	h, err := c.Cluster(req.Context(), cluster, path, r)
	if err != nil {
		r.Error(err)
		return
	}
	h.ServeHTTP(w, out)
}

// locate finds the one cluster whose cache holds the object, among those
// where the caller may read it (get, as Access.Filter decides for reads).
// Copies the caller may not read are not looked at: an object only there
// answers 404, exactly as a name that exists nowhere, and one also there
// is not ambiguous. Otherwise a write would tell, by a 409 naming clusters
// or by the member's 403, that a name exists in a namespace the caller
// cannot see. The price: a caller allowed to write an object but not to
// read it cannot write it through proxying (clusters/{name}/proxy still
// serves it).
func (c *Connecter) locate(req *http.Request, u user.Info, info *request.RequestInfo, gvr schema.GroupVersionResource) (string, error) {
	stores, _ := c.Stores(gvr)
	// A namespaced object has a namespace: without one there is nothing
	// to find, and no need to review access in every namespace.
	candidates := slices.DeleteFunc(slices.Clone(stores), func(s *searchcache.Store) bool {
		return s.Namespaced && info.Namespace == ""
	})
	scopes := c.Access.Filter(req.Context(), u, "get", info.Namespace, candidates)
	var found []string
	for _, s := range candidates {
		sc, ok := scopes[s]
		if !ok || s.Namespaced && !sc.All && !sc.Namespaces.Has(info.Namespace) {
			continue
		}
		if _, ok := s.Get(searchcache.Key(info.Namespace, info.Name)); ok {
			found = append(found, s.Cluster)
		}
	}
	switch len(found) {
	case 0:
		return "", apierrors.NewNotFound(gvr.GroupResource(), info.Name)
	case 1:
		return found[0], nil
	}
	return "", storage.Ambiguous(gvr.GroupResource(), info.Name, found)
}

// forCluster rewrites an update's body for the member: the cache's
// annotation removed and a multi-cluster resourceVersion translated back
// to the member's. JSON bodies of any kind and protobuf bodies of built-in
// kinds (client-go's typed clients send those) are rewritten; others are
// sent as they are.
func forCluster(body []byte, contentType, cluster string) ([]byte, error) {
	if mediaType, _, _ := mime.ParseMediaType(contentType); mediaType == runtime.ContentTypeProtobuf {
		return forClusterProtobuf(body, cluster)
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return body, nil
	}
	u := &unstructured.Unstructured{Object: obj}
	if err := rewriteMeta(u, cluster); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// protobuf decodes and encodes the built-in kinds.
var protobuf = kubeprotobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

func forClusterProtobuf(body []byte, cluster string) ([]byte, error) {
	obj, gvk, err := protobuf.Decode(body, nil, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding the protobuf body: %v", err))
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return body, nil
	}
	if err := rewriteMeta(acc, cluster); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	var buf bytes.Buffer
	if err := protobuf.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rewriteMeta removes the cache's annotation and translates a
// multi-cluster resourceVersion to the cluster's.
func rewriteMeta(obj metav1.Object, cluster string) error {
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann[searchv1alpha1.CachedFromClusterAnnotation]; ok {
			delete(ann, searchv1alpha1.CachedFromClusterAnnotation)
			if len(ann) == 0 {
				ann = nil
			}
			obj.SetAnnotations(ann)
		}
	}
	rv := obj.GetResourceVersion()
	if rv == "" {
		return nil
	}
	m, err := storage.ParseMultiRV(rv)
	switch {
	case err != nil:
		// A member's own resourceVersion is kept.
	case m == nil:
		obj.SetResourceVersion("")
	default:
		v := m.Get(cluster)
		if v == "" {
			return apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q names no resourceVersion of cluster %s", rv, cluster))
		}
		obj.SetResourceVersion(v)
	}
	return nil
}
