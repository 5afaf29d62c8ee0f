package initialize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/cli/chartapply"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// defaultRelease names what init installs (in names.SystemNamespace by
// default, as karmadactl init): the chart's release name.
const defaultRelease = "flotilla"

// Values of --dry-run, as kubectl's.
const (
	dryRunNone = "none"
	// DryRunClient is --dry-run alone: print what would be applied.
	DryRunClient = "client"
	dryRunServer = "server"
)

// ReleaseFlags are the flags init and deinit share.
type ReleaseFlags struct {
	Release string
	DryRun  string
	// Namespace is the control-plane flags' --namespace; nil or empty:
	// names.SystemNamespace.
	Namespace *string
}

func (f *ReleaseFlags) ns() string {
	if f.Namespace != nil && *f.Namespace != "" {
		return *f.Namespace
	}
	return names.SystemNamespace
}

func (f *ReleaseFlags) validate() error {
	switch f.DryRun {
	case dryRunNone, DryRunClient, dryRunServer:
	default:
		return fmt.Errorf(`--dry-run must be "none", "client" or "server", got %q`, f.DryRun)
	}
	if f.Release == "" {
		return errors.New("--release must not be empty")
	}
	return nil
}

// installer builds the clients init and deinit write with.
func (f *ReleaseFlags) installer(cfg *rest.Config, out io.Writer) (*chartapply.Installer, error) {
	clients, err := chartapply.NewClients(rest.AddUserAgent(rest.CopyConfig(cfg), controlplane.UserAgent))
	if err != nil {
		return nil, err
	}
	return &chartapply.Installer{
		Clients: clients,
		Release: f.Release, Namespace: f.ns(), DryRun: f.DryRun == dryRunServer, Out: out,
		Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla", "app.kubernetes.io/instance": f.Release, "app.kubernetes.io/managed-by": controlplane.UserAgent},
	}, nil
}

// InitOptions holds the flags of init. Use NewInitOptions.
type InitOptions struct {
	ReleaseFlags
	// ValueFiles (-f) and Values (--set) are merged as helm does: files
	// in order, then each --set over them.
	ValueFiles, Values []string
	Wait               bool
	Timeout            time.Duration
	interval           time.Duration
}

// NewInitOptions returns init's defaults; namespace is the control-plane
// flags' --namespace.
func NewInitOptions(namespace *string) *InitOptions {
	return &InitOptions{
		ReleaseFlags: ReleaseFlags{Release: defaultRelease, DryRun: dryRunNone, Namespace: namespace},
		Wait:         true, Timeout: 5 * time.Minute, interval: 2 * time.Second,
	}
}

// Run installs into the cluster flags locates; each object applied and
// the wait for the APIServices are reported on progress (stderr, as
// karmadactl init logs them), the result and the next commands on out.
func (o *InitOptions) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, out, progress io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading the host kubeconfig: %w", err)
	}
	return o.run(ctx, cfg, out, progress)
}

func (o *InitOptions) validate() error {
	if err := o.ReleaseFlags.validate(); err != nil {
		return err
	}
	if o.Wait && o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive with --wait, got %s", o.Timeout)
	}
	return nil
}

// run installs; each object applied and the wait for the APIServices are
// reported on progress (stderr, as karmadactl init logs them), the result
// and the next commands on out.
func (o *InitOptions) run(ctx context.Context, cfg *rest.Config, out, progress io.Writer) error {
	vals, err := o.values()
	if err != nil {
		return fmt.Errorf("chart values: %w", err)
	}
	chrt, err := charts.Load(charts.FlotillaChart)
	if err != nil {
		return err
	}
	if o.DryRun == DryRunClient {
		// Nothing is read from the cluster: certificates are made anew.
		r, err := charts.Render(chrt, charts.Release{Name: o.Release, Namespace: o.ns(), Values: vals}, nil)
		if err != nil {
			return fmt.Errorf("rendering chart %s: %w", charts.FlotillaChart, err)
		}
		for _, obj := range r.Objects {
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "---\n%s", data)
		}
		return nil
	}
	if o.DryRun == dryRunServer {
		progress = out // what would be done is the result
	}
	in, err := o.installer(cfg, progress)
	if err != nil {
		return err
	}
	// Rendered against the cluster: generated certificates are read back.
	_, err = in.Inventory(ctx)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading what init installed before: %w", err)
	}
	rel := charts.Release{Name: o.Release, Namespace: o.ns(), Values: vals, Upgrade: err == nil}
	r, err := charts.Render(chrt, rel, cfg)
	if err != nil {
		return fmt.Errorf("rendering chart %s: %w", charts.FlotillaChart, err)
	}
	if in.DryRun {
		if _, err := in.Core.CoreV1().Namespaces().Get(ctx, in.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s does not exist: a server dry run cannot create it; create it, or use --dry-run=client", in.Namespace)
		}
	}
	inv, err := in.Apply(ctx, r.Objects)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if in.DryRun {
		fmt.Fprintf(out, "\n%d objects pass the server's validation (dry run: nothing was stored)\n", len(inv.Objects))
		return nil
	}
	fmt.Fprintf(out, "\n%d objects applied; recorded in configmap %s/%s\n", len(inv.Objects), in.Namespace, chartapply.InventoryName(o.Release))
	if o.Wait {
		if err := in.WaitAPIServices(ctx, inv.Objects, o.Timeout, o.interval); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		fmt.Fprintln(out, "Flotilla's APIs are served.")
	}
	fmt.Fprintf(out, "\n%s", r.Notes)
	return nil
}

// values merges the chart values of -f and --set as helm does.
func (o *InitOptions) values() (map[string]any, error) {
	vals := map[string]any{}
	for _, f := range o.ValueFiles {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		vals = mergeValues(vals, v)
	}
	for _, s := range o.Values {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return vals, nil
}

// mergeValues merges src into dst, src winning; tables merge key by key.
func mergeValues(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// DeinitOptions holds the flags of deinit. Use NewDeinitOptions.
type DeinitOptions struct {
	ReleaseFlags
}

// NewDeinitOptions returns deinit's defaults; namespace is the
// control-plane flags' --namespace.
func NewDeinitOptions(namespace *string) *DeinitOptions {
	return &DeinitOptions{ReleaseFlags{Release: defaultRelease, DryRun: dryRunNone, Namespace: namespace}}
}

// Run removes what init installed in the cluster flags locates, reporting
// each deletion on out.
func (o *DeinitOptions) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, out io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.DryRun == DryRunClient {
		return errors.New("deinit --dry-run takes server (the cluster checks each deletion and keeps everything) or none")
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading the host kubeconfig: %w", err)
	}
	in, err := o.installer(cfg, out)
	if err != nil {
		return err
	}
	if err := in.Remove(ctx); err != nil {
		return fmt.Errorf("deinit: %w", err)
	}
	fmt.Fprintf(out, "\nrelease %s is removed from namespace %s\n", o.Release, in.Namespace)
	return nil
}
