package env

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
)

// FlotillaOptions start flotilla-apiserver beside the host, registered with
// the host's aggregator. Nil Options.Flotilla starts only the clusters.
type FlotillaOptions struct {
	// Binary is the flotilla-apiserver executable. Default BinDir/flotilla-apiserver.
	Binary string `json:"binary,omitempty"`
	// Args are added to the flags the environment sets.
	Args []string `json:"args,omitempty"`
}

// FlotillaComponent is the name of flotilla-apiserver's process and log.
const FlotillaComponent = "flotilla-apiserver"

// flotillaProbeGroup is the group whose discovery through the host proves
// that the aggregator routes to flotilla-apiserver.
const flotillaProbeGroup = "/apis/cluster.karmada.io/v1alpha1"

// startFlotilla starts flotilla-apiserver with embedded etcd under the
// host's directory, and waits until the host serves its APIs.
func (e *Environment) startFlotilla(ctx context.Context) error {
	o := e.Options.Flotilla
	bin := o.Binary
	if bin == "" {
		bin = e.bin(FlotillaComponent)
	}
	h := e.Host
	dir := filepath.Join(h.Dir, "flotilla")
	p, err := retryOnPortClash(func() (*Process, error) {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		h.Ports.Flotilla = ports[0]
		args := append([]string{
			"--kubeconfig=" + h.Kubeconfig,
			"--embedded-etcd-dir=" + filepath.Join(dir, "etcd"),
			"--cert-dir=" + filepath.Join(dir, "certs"),
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[0]),
			// A local process: the aggregator reaches it through an ExternalName Service.
			"--service-external-name=localhost",
		}, o.Args...)
		p, err := startProcess(h.Name, FlotillaComponent, bin, args, e.logFile(h.Name, FlotillaComponent), e.Options.Detach)
		if err != nil {
			return nil, err
		}
		cs, err := h.Client()
		if err != nil {
			return p, err
		}
		return p, p.waitFor(ctx, e.Options.Timeout, "served through the host", func(ctx context.Context) error {
			if _, err := cs.Discovery().RESTClient().Get().AbsPath(flotillaProbeGroup).DoRaw(ctx); err != nil {
				return fmt.Errorf("GET %s through the host: %w", flotillaProbeGroup, err)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	h.Processes = append(h.Processes, p)
	return nil
}
