package env

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
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
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		h.Ports.Flotilla, h.Ports.FlotillaMetrics = ports[0], ports[1]
		args := append([]string{
			"--kubeconfig=" + h.Kubeconfig,
			"--embedded-etcd-dir=" + e.FlotillaEtcdDir(),
			"--cert-dir=" + filepath.Join(dir, "certs"),
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[0]),
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
			// A local process: the aggregator reaches it through an ExternalName Service.
			"--service-external-name=localhost",
		}, o.Args...)
		p, err := startProcess(h.Name, FlotillaComponent, bin, args, e.logFile(h.Name, FlotillaComponent), e.Options.Detach)
		if err != nil {
			return nil, err
		}
		return p, e.waitFlotillaServed(ctx, p)
	})
	if err != nil {
		return err
	}
	h.Processes = append(h.Processes, p)
	return nil
}

// FlotillaEtcdDir is flotilla-apiserver's --embedded-etcd-dir.
func (e *Environment) FlotillaEtcdDir() string {
	return filepath.Join(e.Host.Dir, "flotilla", "etcd")
}

// RestartFlotilla starts a stopped flotilla-apiserver again with the same
// flags and waits until the host serves its APIs.
func (e *Environment) RestartFlotilla(ctx context.Context) error {
	p := e.Host.Process(FlotillaComponent)
	if p == nil {
		return errors.New("no flotilla-apiserver in this environment")
	}
	if err := p.Restart(); err != nil {
		return err
	}
	return e.waitFlotillaServed(ctx, p)
}

// waitFlotillaServed waits until the host serves flotilla-apiserver's APIs.
func (e *Environment) waitFlotillaServed(ctx context.Context, p *Process) error {
	cs, err := e.Host.Client()
	if err != nil {
		return err
	}
	return p.waitFor(ctx, e.Options.Timeout, "served through the host", func(ctx context.Context) error {
		if _, err := cs.Discovery().RESTClient().Get().AbsPath(flotillaProbeGroup).DoRaw(ctx); err != nil {
			return fmt.Errorf("GET %s through the host: %w", flotillaProbeGroup, err)
		}
		return nil
	})
}

// FlotillactlBinary is the CLI that joins members.
const FlotillactlBinary = "flotillactl"

// Join joins member to the control plane in push mode with
// `flotillactl join`, as a user would. It does not wait for the Cluster
// to be Ready (--wait=0): the suites join every member, then wait for all.
func (e *Environment) Join(ctx context.Context, member string) error {
	m := e.Member(member)
	if m == nil {
		return fmt.Errorf("no member %q", member)
	}
	var out []byte
	var err error
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, e.bin(FlotillactlBinary), "join", member,
			"--kubeconfig="+e.Host.Kubeconfig, "--cluster-kubeconfig="+m.Kubeconfig, "--wait=0")
		out, err = cmd.CombinedOutput()
		// join is idempotent; on a loaded machine the member's
		// kube-controller-manager may start its token controller after
		// join's minute of waiting, so try once more before failing.
		if err == nil || attempt == joinAttempts || !strings.Contains(string(out), "token controller") {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("flotillactl join %s: %w\n%s\nlast lines of %s:\n%s", member, err, out,
			e.logFile(member, binKCM), tail(e.logFile(member, binKCM), 20))
	}
	return nil
}

// joinAttempts is how many times Join runs `flotillactl join` when the
// member's token controller is late.
const joinAttempts = 2

// joinParallel is how many `flotillactl join` JoinAll runs at a time: each
// mostly waits for the member's token controller.
const joinParallel = 4

// JoinAll joins the members named as Join does, several at a time.
func (e *Environment) JoinAll(ctx context.Context, members []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(joinParallel)
	for _, m := range members {
		g.Go(func() error { return e.Join(ctx, m) })
	}
	return g.Wait()
}

// WaitClustersReady waits until the Clusters named are Ready on the control plane.
func (e *Environment) WaitClustersReady(ctx context.Context, names []string, timeout time.Duration) error {
	cfg, err := e.Host.RESTConfig()
	if err != nil {
		return err
	}
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			c, err := cs.ClusterV1alpha1().Clusters().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				last = fmt.Sprintf("cluster %s: conditions %v", n, c.Status.Conditions)
				return false, nil
			}
			// Ready is first written together with the summaries the
			// scheduler divides by: a Ready cluster without them would be
			// scheduled as able to run nothing.
			if c.Status.ResourceSummary == nil || c.Status.NodeSummary == nil {
				last = fmt.Sprintf("cluster %s is Ready without its node and resource summaries", n)
				return false, errors.New(last)
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("clusters %v not Ready after %s (%s: %v); log %s", names, timeout, last, err, e.logFile(e.Host.Name, FlotillaComponent))
	}
	return nil
}
