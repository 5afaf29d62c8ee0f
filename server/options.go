package server

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/flotilla-io/flotilla/controllers/manager"
	"github.com/flotilla-io/flotilla/metricsapi"
	"github.com/flotilla-io/flotilla/registry"
	"github.com/flotilla-io/flotilla/registry/admission/deletionprotection"
	workregistry "github.com/flotilla-io/flotilla/registry/work"
	"github.com/flotilla-io/flotilla/search"
)

// What cmd/flotilla-apiserver needs of the parts the server assembles, so
// that the command imports server/ rather than each part: their options
// and defaults, and the storage's scheme, codecs and generic options.

// Options configure the parts the server assembles beyond the generic API
// server; cmd/flotilla-apiserver binds its flags to them. Zero values are
// never valid; use NewOptions.
type Options struct {
	// APIService is how the server registers itself with the aggregator.
	APIService APIServiceOptions
	// Controllers configure the embedded controllers (controllers/manager).
	Controllers manager.Options
	// Search configures the search cache, its index and its access checks.
	Search search.Options
	// Metrics configures the metrics APIs served from the members.
	Metrics metricsapi.Options
	// TunnelRelay lets several replicas serve every Pull cluster.
	TunnelRelay TunnelRelayOptions
}

// NewOptions returns the defaults of the controllers, search and the
// metrics APIs; the APIService and the relay have none of their own.
func NewOptions() Options {
	return Options{
		Controllers: manager.NewOptions(),
		Search:      search.NewOptions(),
		Metrics:     metricsapi.NewOptions(),
	}
}

// ControllerNames lists the controllers --controllers knows.
func ControllerNames() []string { return manager.Names() }

// ControllersOffByDefault lists the controllers that run only when named.
func ControllersOffByDefault() []string { return manager.DisabledByDefault() }

// ValidateControllers checks a --controllers list.
func ValidateControllers(list []string) error { return manager.Validate(list) }

// DefaultSearchIndexDir is where the search index is kept beside dataDir.
func DefaultSearchIndexDir(dataDir string) string { return search.DefaultIndexDir(dataDir) }

// Storage is the scheme and codecs of every object flotilla-apiserver
// serves.
type Storage struct {
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
}

// NewStorage returns the scheme and codecs of flotilla-apiserver's objects.
func NewStorage() Storage {
	scheme := registry.NewScheme()
	return Storage{Scheme: scheme, Codecs: registry.NewCodecs(scheme)}
}

// RecommendedOptions returns the generic API server's options as
// flotilla-apiserver starts from them: objects kept in etcd under
// etcdPathPrefix in their storage versions (registry.StorageCodec), the
// deletion-protection admission plugin on, and no watch cache for the
// resources the controllers' informers already hold (registry/work's
// Uncached; the --watch-cache-sizes flag, when given, replaces that
// list).
func (s Storage) RecommendedOptions(etcdPathPrefix string) *genericoptions.RecommendedOptions {
	o := genericoptions.NewRecommendedOptions(etcdPathPrefix, registry.StorageCodec(s.Scheme, s.Codecs))
	deletionprotection.Register(o.Admission)
	o.Etcd.StorageConfig.EncodeVersioner = registry.StorageVersions
	for _, gr := range workregistry.Uncached() {
		o.Etcd.WatchCacheSizes = append(o.Etcd.WatchCacheSizes, gr.String()+"#0")
	}
	return o
}

// NegotiatedSerializer is the serializer the server answers with.
func (s Storage) NegotiatedSerializer() runtime.NegotiatedSerializer {
	return registry.NegotiatedSerializer(s.Codecs)
}
