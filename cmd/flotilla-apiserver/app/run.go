package app

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/controllers/manager"
)

// Run starts flotilla-apiserver and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if _, set := os.LookupEnv("GOGC"); !set && o.GCPercent > 0 {
		debug.SetGCPercent(o.GCPercent)
	}
	var etcdServers []string
	if o.embeddedEtcd() {
		e, err := startEmbeddedEtcd(ctx, o.EmbeddedEtcdDir, o.EmbeddedEtcdUnsafeNoFsync)
		if err != nil {
			return err
		}
		defer e.Close()
		etcdServers = []string{e.clientURL}
	}
	hostCfg, err := clientcmd.BuildConfigFromFlags("", o.HostKubeconfig())
	if err != nil {
		return fmt.Errorf("loading --kubeconfig: %w", err)
	}
	cfg, err := o.Config(etcdServers, hostCfg)
	if err != nil {
		return err
	}
	server, err := cfg.Complete().New()
	if err != nil {
		return err
	}
	if o.APIService.Register {
		reg, err := newAPIServiceRegistrar(hostCfg, o.APIService, o.Server.SecureServing, server.GroupVersions)
		if err != nil {
			return err
		}
		// Registration waits until this server answers, so the aggregator
		// finds it available at once.
		server.GenericAPIServer.AddPostStartHookOrDie("register-apiservices", func(hctx genericapiserver.PostStartHookContext) error {
			go reg.run(hctx, klog.FromContext(ctx))
			return nil
		})
	}
	server.GenericAPIServer.AddPostStartHookOrDie("start-controllers", func(hctx genericapiserver.PostStartHookContext) error {
		loopback, err := serveLoopbackSocket(hctx, server.GenericAPIServer.Handler, hctx.LoopbackClientConfig)
		if err != nil {
			return err
		}
		c, err := manager.NewContext(o.Controllers, loopback, hostCfg)
		if err != nil {
			return err
		}
		if server.Metrics != nil {
			// One client and one watch per kind per member in the process.
			c.UseMembers(server.MemberClients, server.Metrics.Members)
		}
		go func() {
			if err := manager.Run(hctx, c); err != nil {
				klog.FromContext(ctx).Error(err, "Controllers stopped")
			}
		}()
		return nil
	})
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
