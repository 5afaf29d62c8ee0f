package registry

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapiserver "k8s.io/apiserver/pkg/server"

	clusterinstall "github.com/flotilla-io/flotilla/apis/cluster/install"
	clusterregistry "github.com/flotilla-io/flotilla/registry/cluster"
)

// NewScheme returns a scheme holding every API flotilla-apiserver serves.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	clusterinstall.Install(scheme)
	// Options and status objects every API server speaks, unversioned.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Group: "", Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return scheme
}

// Config is the configuration of flotilla-apiserver's API surface.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	Scheme        *runtime.Scheme
	Codecs        serializer.CodecFactory
}

// CompletedConfig is a Config with its defaults filled in; only it can build a Server.
type CompletedConfig struct {
	generic genericapiserver.CompletedConfig
	scheme  *runtime.Scheme
	codecs  serializer.CodecFactory
}

// Server is the running API surface of flotilla-apiserver.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
	// GroupVersions are the API group versions the server serves.
	GroupVersions []schema.GroupVersion
}

// Complete fills in defaults. It does no I/O.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{generic: c.GenericConfig.Complete(), scheme: c.Scheme, codecs: c.Codecs}
}

// New builds the server and installs every API group.
func (c CompletedConfig) New() (*Server, error) {
	s, err := c.generic.New("flotilla-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	clusterGroup, err := clusterregistry.NewAPIGroupInfo(c.scheme, c.codecs, c.generic.RESTOptionsGetter, nil)
	if err != nil {
		return nil, err
	}
	server := &Server{GenericAPIServer: s}
	for _, g := range []*genericapiserver.APIGroupInfo{clusterGroup} {
		if err := s.InstallAPIGroup(g); err != nil {
			return nil, fmt.Errorf("installing %s: %w", g.PrioritizedVersions[0].Group, err)
		}
		server.GroupVersions = append(server.GroupVersions, g.PrioritizedVersions...)
	}
	return server, nil
}

// NewCodecs returns the codecs of scheme.
func NewCodecs(scheme *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(scheme)
}
