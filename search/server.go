package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	clientrest "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	searchinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/search/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
	memberaccess "github.com/flotilla-io/flotilla/member/access"
	"github.com/flotilla-io/flotilla/proxy"
	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/search/index"
	"github.com/flotilla-io/flotilla/search/proxying"
	"github.com/flotilla-io/flotilla/search/storage"
	"github.com/flotilla-io/flotilla/search/table"
)

// Options are the flags of the search surface.
type Options struct {
	// MemberAuthorization checks each cache read against the member's own
	// RBAC (a SubjectAccessReview there); off only for trusted setups.
	MemberAuthorization bool
	// Index switches the full-text index on.
	Index bool
	// IndexDir is where the index lives on disk; "" keeps it in memory.
	IndexDir string
}

// NewOptions returns the defaults: member checks and the index on, the
// index in memory until a data directory is known.
func NewOptions() Options {
	return Options{MemberAuthorization: true, Index: true}
}

// AddFlags adds the flags of the search surface.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.MemberAuthorization, "search-member-authorization", o.MemberAuthorization,
		"check every search/cache and proxying read against the member's own RBAC (SubjectAccessReview in the member, remembered 10s); switch off only when every caller allowed proxying/proxy may read everything cached")
	fs.BoolVar(&o.Index, "search-index", o.Index, "keep a full-text (bleve) index of every cached object, served at search/fulltext")
	fs.StringVar(&o.IndexDir, "search-index-dir", o.IndexDir, "directory of the full-text index (rebuilt at every start); empty keeps it in memory")
}

// DefaultIndexDir is the index directory beside a data directory.
func DefaultIndexDir(dataDir string) string { return filepath.Join(dataDir, "search-index") }

// Config is what the search surface needs from the server.
type Config struct {
	Options
	// Authorizer is the server's (delegating) authorizer.
	Authorizer authorizer.Authorizer
	// HostConfig reaches the host API server with the server's credentials.
	HostConfig *clientrest.Config
	// MemberClients reach the members, Pull ones through their agents'
	// tunnels when its Tunnel is set: the process's one member cache, whose
	// transports proxying/proxy uses too.
	MemberClients *member.Cache
	// Informers is the server's one informer factory over its loopback
	// client, started by the server: search reads Clusters (the informer
	// the member hub and the controllers share) and ResourceRegistries
	// from it. Client is that loopback client (ResourceRegistry status).
	Informers externalversions.SharedInformerFactory
	Client    versioned.Interface
}

// CompletedConfig is a Config with defaults filled in.
type CompletedConfig struct{ *Config }

// Complete fills in defaults; it does no I/O.
func (c *Config) Complete() CompletedConfig { return CompletedConfig{c} }

// Server is the search surface: the storage of search and proxying/proxy,
// and the cache behind them, started by a post-start hook.
type Server struct {
	// Storage is what the search.karmada.io group serves besides
	// resourceregistries.
	Storage map[string]rest.Storage

	cfg        CompletedConfig
	members    *member.Cache
	manager    *searchcache.Manager
	index      *index.Index
	clusters   clusterinformers.ClusterInformer
	registries searchinformers.ResourceRegistryInformer
}

// SharedListerWatcher reads the cache of resource in cluster, when it
// holds every namespace's and has listed them, for the metrics adapter's
// member informers (member.Shared): a member whose Pods or Nodes
// a ResourceRegistry caches is watched once for both.
func (s *Server) SharedListerWatcher(cluster string, gvr schema.GroupVersionResource, decoder runtime.Decoder, newList func() runtime.Object) (cache.ListerWatcher, bool) {
	st, ok := s.manager.Shared(cluster, gvr)
	if !ok {
		return nil, false
	}
	return &searchcache.ListWatch{Store: st, Decoder: decoder, NewList: newList}, true
}

// New builds the search surface.
func (c CompletedConfig) New() (*Server, error) {
	s := &Server{cfg: c, members: c.MemberClients,
		clusters: c.Informers.Cluster().V1alpha1().Clusters(), registries: c.Informers.Search().V1alpha1().ResourceRegistries()}
	if c.Index {
		ix, err := index.Open(index.Options{Dir: c.IndexDir})
		if err != nil {
			return nil, fmt.Errorf("opening the search index: %w", err)
		}
		s.index = ix
	}
	access := &storage.Access{Host: c.Authorizer}
	if c.MemberAuthorization {
		access.MemberReview = memberaccess.NewReviewer(s.memberClientset)
	}
	tables, err := table.New()
	if err != nil {
		return nil, err
	}
	var indexr searchcache.Indexer
	if s.index != nil {
		indexr = indexer{s.index}
	}
	s.manager = searchcache.NewManager(searchcache.Config{
		Clusters: func() ([]*clusterv1alpha1.Cluster, error) {
			return s.clusters.Lister().List(labels.Everything())
		},
		Registries: func() ([]*searchv1alpha1.ResourceRegistry, error) {
			return s.registries.Lister().List(labels.Everything())
		},
		Client: s.members.Get,
		WriteStatus: func(ctx context.Context, r *searchv1alpha1.ResourceRegistry, conds []metav1.Condition) error {
			// A merge patch of the conditions alone: one write, no conflict
			// with other writers of the object.
			patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
			if err != nil {
				return err
			}
			_, err = c.Client.SearchV1alpha1().ResourceRegistries().Patch(ctx, r.Name, types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: "flotilla-search"}, "status")
			if apierrors.IsNotFound(err) {
				return nil // deleted since it was listed
			}
			return err
		},
		Index: indexr,
	})
	// The informers are registered with the factory now, before the
	// server starts it.
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.manager.Trigger() },
		UpdateFunc: func(old, cur any) { s.manager.Trigger() },
		DeleteFunc: func(any) { s.manager.Trigger() },
	}
	if _, err := s.clusters.Informer().AddEventHandler(handler); err != nil {
		return nil, err
	}
	if _, err := s.registries.Informer().AddEventHandler(handler); err != nil {
		return nil, err
	}
	reader := &storage.Reader{Stores: s.manager.Stores, KindFor: s.manager.KindFor, Access: access, Table: tables}
	host, err := proxying.NewHostHandler(c.HostConfig)
	if err != nil {
		return nil, err
	}
	clusterProxy := proxy.NewConnecter(s.getCluster, s.members, nil)
	s.Storage = map[string]rest.Storage{
		"search":   &searchREST{reader: reader, access: access, manager: s.manager, index: s.index},
		"proxying": proxying.Parent{},
		"proxying/proxy": &proxying.Connecter{
			Reader: reader, Stores: s.manager.Stores, Access: access, Host: host,
			Cluster: func(ctx context.Context, cluster, path string, r rest.Responder) (http.Handler, error) {
				return clusterProxy.Connect(ctx, cluster, &clusterv1alpha1.ClusterProxyOptions{Path: path}, r)
			},
		},
	}
	return s, nil
}

// PostStartHook runs the cache once the server's informers (Config.Informers,
// which the server starts) have synced; the server registers it as
// "start-search-cache".
func (s *Server) PostStartHook(hctx genericapiserver.PostStartHookContext) error {
	go func() {
		// The hook's context ends when the server stops.
		ctx := klog.NewContext(hctx.Context, klog.Background().WithName("search"))
		if !cache.WaitForCacheSync(hctx.Done(), s.clusters.Informer().HasSynced, s.registries.Informer().HasSynced) {
			return
		}
		s.manager.Run(ctx)
		if s.index != nil {
			_ = s.index.Close()
		}
	}()
	return nil
}

func (s *Server) getCluster(name string) (*clusterv1alpha1.Cluster, error) {
	if !s.clusters.Informer().HasSynced() {
		return nil, apierrors.NewServiceUnavailable("the search cache is starting")
	}
	return s.clusters.Lister().Get(name)
}

// memberClientset is a member's client with the control plane's
// credentials there, for access reviews.
func (s *Server) memberClientset(cluster string) (kubernetes.Interface, error) {
	c, err := s.getCluster(cluster)
	if err != nil {
		return nil, err
	}
	client, err := s.members.Get(c)
	if err != nil {
		return nil, err
	}
	return client.Clientset, nil
}
