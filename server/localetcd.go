package server

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	etcdkubernetes "go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// localEtcd builds the registry's storage over the embedded etcd's own
// functions (etcd's v3client) instead of a gRPC connection to it: the
// same etcd3 store and watch cache the API server builds, without each
// read, write and watch event being encoded to protobuf, framed over
// HTTP/2 through a socket and decoded again on both sides. One client
// serves every resource (the API server opens one connection per
// resource). Only for etcd in this process: with --etcd-servers the
// storage is the API server's own.
type localEtcd struct {
	client    *etcdkubernetes.Client
	once      sync.Once
	compactor etcd3.Compactor
	stop      func()
}

// newLocalEtcd returns the storage builder over the in-process client c.
func newLocalEtcd(c *clientv3.Client) *localEtcd {
	// Latency per request in the API server's etcd metrics, as over gRPC.
	c.KV = etcd3.NewETCDLatencyTracker(c.KV)
	kc := &etcdkubernetes.Client{Client: c}
	kc.Kubernetes = kc
	// The watch cache serves consistent reads once etcd is known to answer
	// progress requests, which the API server asks each endpoint of its
	// client: this client has none, so it is asked here.
	etcdfeature.DefaultFeatureSupportChecker.CheckClient(context.Background(), inProcessEndpoint{c}, storage.RequestWatchProgress)
	return &localEtcd{client: kc, stop: func() {}}
}

// inProcessEndpoint shows the in-process client as one endpoint to the
// API server's feature check.
type inProcessEndpoint struct{ c *clientv3.Client }

func (e inProcessEndpoint) Endpoints() []string { return []string{"in-process"} }

func (e inProcessEndpoint) Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error) {
	return e.c.Status(ctx, endpoint)
}

// raw is the undecorated etcd3 storage of one resource
// (generic.UndecoratedStorage's, over the in-process client).
func (l *localEtcd) raw(c *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (storage.Interface, factory.DestroyFunc, error) {
	// One compactor for the process, as the API server keeps one per
	// etcd endpoint.
	l.once.Do(func() {
		cp := etcd3.NewCompactor(l.client.Client, c.CompactionInterval, clock.RealClock{}, nil)
		l.compactor, l.stop = cp, cp.Stop
	})
	transformer := c.Transformer
	if transformer == nil {
		transformer = identity.NewEncryptCheckTransformer()
	}
	versioner := storage.APIObjectVersioner{}
	decoder := etcd3.NewDefaultDecoder(c.Codec, versioner)
	// As the API server's own etcd3 storage: objects that no longer decode
	// may then be deleted.
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.AllowUnsafeMalformedObjectDeletion) {
		transformer = etcd3.WithCorruptObjErrorHandlingTransformer(transformer)
		decoder = etcd3.WithCorruptObjErrorHandlingDecoder(decoder)
	}
	store, err := etcd3.New(l.client, l.compactor, c.Codec, newFunc, newListFunc, c.Prefix, resourcePrefix, c.GroupResource, transformer, c.LeaseManagerConfig, decoder, versioner)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	// The registry calls a storage's destroy function once per
	// subresource sharing it.
	return store, func() { once.Do(store.Close) }, nil
}

// undecorated is the generic.StorageDecorator of a resource without a
// watch cache.
func (l *localEtcd) undecorated(c *storagebackend.ConfigForResource, resourcePrefix string, _ func(runtime.Object) (string, error),
	newFunc, newListFunc func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
	return l.raw(c, newFunc, newListFunc, resourcePrefix)
}

// cached is the generic.StorageDecorator of a resource with a watch
// cache: registry.StorageWithCacher's, over the in-process storage.
func (l *localEtcd) cached(c *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(runtime.Object) (string, error),
	newFunc, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
	s, destroy, err := l.raw(c, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return nil, nil, err
	}
	cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
		Storage: s, Versioner: storage.APIObjectVersioner{}, GroupResource: c.GroupResource, EventsHistoryWindow: c.EventsHistoryWindow,
		ResourcePrefix: resourcePrefix, KeyFunc: keyFunc, NewFunc: newFunc, NewListFunc: newListFunc,
		GetAttrsFunc: getAttrs, IndexerFuncs: triggers, Indexers: indexers, Codec: c.Codec,
	})
	if err != nil {
		destroy()
		return nil, nil, err
	}
	delegator := cacherstorage.NewCacheDelegator(cacher, s)
	var once sync.Once
	return delegator, func() {
		once.Do(func() {
			delegator.Stop()
			cacher.Stop()
			destroy()
		})
	}, nil
}

// Close stops the compactor.
func (l *localEtcd) Close() { l.stop() }

// localRESTOptions is a RESTOptionsGetter whose storage is built by a
// localEtcd: the options are the API server's (prefix, codec, paging,
// watch cache or not), only the storage's transport differs.
type localRESTOptions struct {
	inner generic.RESTOptionsGetter
	etcd  *localEtcd
	// watchCache tells whether a resource has a watch cache, as the API
	// server's options decided.
	watchCache func(schema.GroupResource) bool
}

func (g localRESTOptions) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.inner.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	opts.Decorator = g.etcd.undecorated
	if g.watchCache(resource) {
		opts.Decorator = g.etcd.cached
	}
	return opts, nil
}
