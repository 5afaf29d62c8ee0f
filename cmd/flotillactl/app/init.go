package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/install"
	"github.com/flotilla-io/flotilla/names"
)

const (
	// defaultInstallNamespace is where init installs, as karmadactl init.
	defaultInstallNamespace = names.SystemNamespace
	// defaultRelease names what init installs: the chart's release name.
	defaultRelease = "flotilla"
)

// Values of --dry-run, as kubectl's.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// installFlags are the flags init and deinit share.
type installFlags struct {
	Release string
	// namespace is the control-plane flags' --namespace.
	namespace *string
	DryRun    string
}

func (f *installFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Release, "release", f.Release, "Name of the release: the prefix of what the chart makes, as helm install's release name.")
	fs.StringVar(&f.DryRun, "dry-run", f.DryRun, `"client": only print what would be applied (YAML); "server": send every write with dryRun=All, so the cluster validates it but stores nothing (the namespace must exist); "none": do it.`)
	fs.Lookup("dry-run").NoOptDefVal = dryRunClient
}

func (f *installFlags) ns() string {
	if f.namespace != nil && *f.namespace != "" {
		return *f.namespace
	}
	return defaultInstallNamespace
}

func (f *installFlags) validate() error {
	switch f.DryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return fmt.Errorf(`--dry-run must be "none", "client" or "server", got %q`, f.DryRun)
	}
	if f.Release == "" {
		return errors.New("--release must not be empty")
	}
	return nil
}

// installer builds the clients init and deinit write with.
func (f *installFlags) installer(cfg *rest.Config, out io.Writer) (*install.Installer, error) {
	clients, err := install.NewClients(rest.AddUserAgent(rest.CopyConfig(cfg), userAgent))
	if err != nil {
		return nil, err
	}
	return &install.Installer{
		Clients: clients,
		Release: f.Release, Namespace: f.ns(), DryRun: f.DryRun == dryRunServer, Out: out,
		Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla", "app.kubernetes.io/instance": f.Release, "app.kubernetes.io/managed-by": userAgent},
	}, nil
}

// initOptions holds the flags of init. Use newInitOptions.
type initOptions struct {
	installFlags
	// ValueFiles (-f) and Values (--set) are merged as helm does: files
	// in order, then each --set over them.
	ValueFiles, Values []string
	Wait               bool
	Timeout            time.Duration
	interval           time.Duration
	self               string
}

func newInitOptions(self string) *initOptions {
	return &initOptions{
		installFlags: installFlags{Release: defaultRelease, DryRun: dryRunNone},
		Wait:         true, Timeout: 5 * time.Minute, interval: 2 * time.Second, self: self,
	}
}

func newInitCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := newInitOptions(self)
	o.namespace = cp.config.Namespace
	cmd := &cobra.Command{
		Use:   "init [--set key=value ...] [-f values.yaml]",
		Short: "Install the Flotilla control plane into the cluster of the current kubeconfig",
		Long: `Install the Flotilla control plane into a host cluster, as karmadactl init does.

Renders the chart charts/flotilla built into this binary (the same chart
helm installs; --set and -f take its values) and applies every object with
server-side apply into --namespace (default ` + defaultInstallNamespace + `), creating the
namespace when missing. What it created is recorded in the ConfigMap
<release>-flotillactl-init, so that running init again updates the
installation (and deletes what the chart no longer makes) and deinit removes
exactly that. Generated certificates are read back and kept.

With --wait (the default) it then waits until every APIService it made is
Available, and on --timeout names those that are not. Each object applied
and the wait are reported on stderr, as karmadactl init logs them; the
result ends on stdout with the commands that join or register member
clusters.`,
		Example: fmt.Sprintf(`  # Two replicas on a bundled 3-member etcd (the defaults)
  %[1]s init

  # One replica with its etcd inside the process
  %[1]s init --set etcd.mode=embedded --set apiserver.replicas=1

  # Print what would be applied
  %[1]s init --dry-run=client`, self),
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			cfg, err := cp.config.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("loading the host kubeconfig: %w", err)
			}
			return o.run(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *initOptions) addFlags(fs *pflag.FlagSet) {
	o.installFlags.addFlags(fs)
	fs.StringArrayVar(&o.Values, "set", nil, "Set a chart value (key=value, as helm --set); see charts/flotilla/README.md. May be repeated.")
	fs.StringArrayVarP(&o.ValueFiles, "values", "f", nil, "Read chart values from a YAML file (as helm -f). May be repeated.")
	fs.BoolVar(&o.Wait, "wait", o.Wait, "Wait until every APIService init made is Available.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long --wait waits.")
}

func (o *initOptions) validate() error {
	if err := o.installFlags.validate(); err != nil {
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
func (o *initOptions) run(ctx context.Context, cfg *rest.Config, out, progress io.Writer) error {
	vals, err := o.values()
	if err != nil {
		return fmt.Errorf("chart values: %w", err)
	}
	chrt, err := charts.Load(charts.FlotillaChart)
	if err != nil {
		return err
	}
	if o.DryRun == dryRunClient {
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
	fmt.Fprintf(out, "\n%d objects applied; recorded in configmap %s/%s\n", len(inv.Objects), in.Namespace, install.InventoryName(o.Release))
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
func (o *initOptions) values() (map[string]any, error) {
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

// deinitOptions holds the flags of deinit. Use newDeinitOptions.
type deinitOptions struct {
	installFlags
}

func newDeinitCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := &deinitOptions{installFlags{Release: defaultRelease, DryRun: dryRunNone, namespace: cp.config.Namespace}}
	cmd := &cobra.Command{
		Use:   "deinit",
		Short: "Remove what init installed, and nothing else",
		Long: `Remove the Flotilla control plane that init installed, as karmadactl deinit does.

Deletes the objects recorded in the ConfigMap <release>-flotillactl-init of
--namespace (default ` + defaultInstallNamespace + `), each only if it is still the object
init created (same uid), then that ConfigMap and, if init created it, the
namespace with what is in it. Objects init did not create are kept, as are
the PersistentVolumeClaims of the bundled etcd (delete them to drop its data).
Without that ConfigMap it removes nothing.`,
		Example:               fmt.Sprintf("  %s deinit", self),
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if o.DryRun == dryRunClient {
				return errors.New("deinit --dry-run takes server (the cluster checks each deletion and keeps everything) or none")
			}
			cfg, err := cp.config.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("loading the host kubeconfig: %w", err)
			}
			in, err := o.installer(cfg, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if err := in.Remove(cmd.Context()); err != nil {
				return fmt.Errorf("deinit: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nrelease %s is removed from namespace %s\n", o.Release, in.Namespace)
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}
