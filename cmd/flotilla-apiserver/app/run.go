package app

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/server"
	"github.com/flotilla-io/flotilla/telemetry"
)

// Run starts flotilla-apiserver and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if _, set := os.LookupEnv("GOGC"); !set && o.GCPercent > 0 {
		debug.SetGCPercent(o.GCPercent)
	}
	if _, err := telemetry.Serve(ctx, o.MetricsBindAddress); err != nil {
		return err
	}
	var embedded *server.EmbeddedEtcd
	if o.embeddedEtcd() {
		e, err := server.StartEmbeddedEtcd(ctx, o.EmbeddedEtcdDir, o.EmbeddedEtcdUnsafeNoFsync)
		if err != nil {
			return err
		}
		defer e.Close()
		embedded = e
	}
	hostCfg, err := clientcmd.BuildConfigFromFlags("", o.HostKubeconfig())
	if err != nil {
		return fmt.Errorf("loading --kubeconfig: %w", err)
	}
	cfg, err := o.Config(embedded, hostCfg)
	if err != nil {
		return err
	}
	s, err := cfg.Complete().New()
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
