// Package server assembles flotilla-apiserver (Options in cmd, then
// Config -> Complete -> New here, as kubernetes/sample-apiserver): the
// registry's API groups, search, the metrics adapter, clusters/proxy and
// the agents' tunnels, the member clients and hub every part shares, the
// embedded controllers, and what the server installs on its host
// (APIServices and their Service, the RBAC of agent registration, the
// deletion-protection admission policy).
package server

import (
	"context"

	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/controllers/manager"
	"github.com/flotilla-io/flotilla/registry"
)

// Config is the configuration of flotilla-apiserver.
type Config struct {
	// Registry configures the API surface: storage, search, metrics.
	Registry *registry.Config
	// Controllers configure the embedded controllers.
	Controllers manager.Options
	// APIService says how the server registers itself with the host's
	// aggregator; Serving is its serving configuration (the certificate
	// the APIServices' CA bundle comes from).
	APIService APIServiceOptions
	Serving    *genericoptions.SecureServingOptionsWithLoopback
}

// CompletedConfig is a Config with its defaults filled in.
type CompletedConfig struct {
	registry    registry.CompletedConfig
	hostCfg     *rest.Config
	controllers manager.Options
	apiService  APIServiceOptions
	serving     *genericoptions.SecureServingOptionsWithLoopback
}

// Complete fills in defaults. It does no I/O.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{registry: c.Registry.Complete(), hostCfg: c.Registry.HostConfig, controllers: c.Controllers,
		apiService: c.APIService, serving: c.Serving}
}

// Server is flotilla-apiserver, ready to run.
type Server struct {
	*registry.Server
}

// New builds the server: its API surface, the registration of its groups
// on the host, and the controllers, which start once it serves.
func (c CompletedConfig) New() (*Server, error) {
	s, err := c.registry.New()
	if err != nil {
		return nil, err
	}
	g := s.GenericAPIServer
	if c.apiService.Register {
		reg, err := newAPIServiceRegistrar(c.hostCfg, c.apiService, c.serving, s.GroupVersions)
		if err != nil {
			return nil, err
		}
		// Registration waits until this server answers, so the aggregator
		// finds it available at once.
		if err := g.AddPostStartHook("register-apiservices", func(hctx genericapiserver.PostStartHookContext) error {
			go reg.run(hctx, klog.FromContext(hctx))
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if err := g.AddPostStartHook("start-controllers", func(hctx genericapiserver.PostStartHookContext) error {
		loopback, err := serveLoopbackSocket(hctx, g.Handler, hctx.LoopbackClientConfig)
		if err != nil {
			return err
		}
		mc, err := manager.NewContext(c.controllers, loopback, c.hostCfg)
		if err != nil {
			return err
		}
		if s.Metrics != nil {
			// One client and one watch per kind per member in the process.
			mc.UseMembers(s.MemberClients, s.Metrics.Members)
		}
		go func() {
			if err := manager.Run(hctx, mc); err != nil {
				klog.FromContext(hctx).Error(err, "Controllers stopped")
			}
		}()
		return nil
	}); err != nil {
		return nil, err
	}
	return &Server{Server: s}, nil
}

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	return s.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
