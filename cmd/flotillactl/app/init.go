package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flotilla-io/flotilla/cli/initialize"
	"github.com/flotilla-io/flotilla/names"
)

func newInitCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := initialize.NewInitOptions(cp.config.Namespace)
	cmd := &cobra.Command{
		Use:   "init [--set key=value ...] [-f values.yaml]",
		Short: "Install the Flotilla control plane into the cluster of the current kubeconfig",
		Long: `Install the Flotilla control plane into a host cluster, as karmadactl init does.

Renders the chart charts/flotilla built into this binary (the same chart
helm installs; --set and -f take its values) and applies every object with
server-side apply into --namespace (default ` + names.SystemNamespace + `), creating the
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
			return o.Run(cmd.Context(), cp.config, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	addReleaseFlags(fs, &o.ReleaseFlags)
	fs.StringArrayVar(&o.Values, "set", nil, "Set a chart value (key=value, as helm --set); see charts/flotilla/README.md. May be repeated.")
	fs.StringArrayVarP(&o.ValueFiles, "values", "f", nil, "Read chart values from a YAML file (as helm -f). May be repeated.")
	fs.BoolVar(&o.Wait, "wait", o.Wait, "Wait until every APIService init made is Available.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long --wait waits.")
	return cmd
}

func newDeinitCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := initialize.NewDeinitOptions(cp.config.Namespace)
	cmd := &cobra.Command{
		Use:   "deinit",
		Short: "Remove what init installed, and nothing else",
		Long: `Remove the Flotilla control plane that init installed, as karmadactl deinit does.

Deletes the objects recorded in the ConfigMap <release>-flotillactl-init of
--namespace (default ` + names.SystemNamespace + `), each only if it is still the object
init created (same uid), then that ConfigMap and, if init created it, the
namespace with what is in it. Objects init did not create are kept, as are
the PersistentVolumeClaims of the bundled etcd (delete them to drop its data).
Without that ConfigMap it removes nothing.`,
		Example:               fmt.Sprintf("  %s deinit", self),
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), cp.config, cmd.OutOrStdout())
		},
	}
	addReleaseFlags(cmd.Flags(), &o.ReleaseFlags)
	return cmd
}

// addReleaseFlags adds the flags init and deinit share.
func addReleaseFlags(fs *pflag.FlagSet, f *initialize.ReleaseFlags) {
	fs.StringVar(&f.Release, "release", f.Release, "Name of the release: the prefix of what the chart makes, as helm install's release name.")
	fs.StringVar(&f.DryRun, "dry-run", f.DryRun, `"client": only print what would be applied (YAML); "server": send every write with dryRun=All, so the cluster validates it but stores nothing (the namespace must exist); "none": do it.`)
	fs.Lookup("dry-run").NoOptDefVal = initialize.DryRunClient
}
