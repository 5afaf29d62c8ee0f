package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/cli/clusterproxy"
	"github.com/flotilla-io/flotilla/cli/promote"
)

// promoteFlags are karmadactl promote's flags.
type promoteFlags struct {
	opts promote.Options
	// clusterKubeconfig and clusterContext read the member directly
	// instead of through the control plane's proxy.
	clusterKubeconfig, clusterContext string
}

// newPromoteCommand returns promote (karmadactl promote): an object that
// runs in a member becomes a template with a policy placing it there.
func newPromoteCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var f promoteFlags
	cmd := &cobra.Command{
		Use:   "promote <RESOURCE_TYPE> <RESOURCE_NAME> -n <NAME_SPACE> -C <CLUSTER_NAME>",
		Short: "Promote resources from legacy clusters to Karmada control plane",
		Long: `Promote resources from legacy clusters to Karmada control plane.
Requires the cluster has been joined or registered.

The object keeps running in the member untouched: its template carries
work.karmada.io/conflict-resolution=overwrite, and Flotilla takes the member
object over in place, without writing it while it equals the template.

If the resource already exists in Karmada control plane,
please edit PropagationPolicy and OverridePolicy to propagate it.`,
		Example: examples(self, `
			# Promote deployment(default/nginx) from cluster1 to Karmada
			%[1]s promote deployment nginx -n default -C cluster1

			# Promote deployment(default/nginx) with gvk from cluster1 to Karmada
			%[1]s promote deployment.v1.apps nginx -n default -C cluster1

			# Promote deployment(default/nginx) and the ConfigMaps, Secrets, ServiceAccount and PVCs it uses
			%[1]s promote deployment nginx -n default -C cluster1 -d

			# Dumps the artifacts but does not deploy them to Karmada, same as 'dry run'
			%[1]s promote deployment nginx -n default -C cluster1 -o yaml|json

			# Promote secret(default/default-token) from cluster1 to Karmada
			%[1]s promote secret default-token -n default -C cluster1

			# Support to use '--cluster-kubeconfig' to specify the configuration of member cluster
			%[1]s promote deployment nginx -n default -C cluster1 --cluster-kubeconfig=<CLUSTER_KUBECONFIG_PATH>

			# Support to use '--cluster-kubeconfig' and '--cluster-context' to specify the configuration of member cluster
			%[1]s promote deployment nginx -n default -C cluster1 --cluster-kubeconfig=<CLUSTER_KUBECONFIG_PATH> --cluster-context=<CLUSTER_CONTEXT>`),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("incorrect command format, please use correct command format: %s promote <RESOURCE_TYPE> <RESOURCE_NAME> -n <NAME_SPACE> -C <CLUSTER_NAME>", self)
			}
			f.opts.Kind, f.opts.Name = args[0], args[1]
			return f.run(cmd.Context(), cp, cmd.ErrOrStderr(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.opts.Output, "output", "o", "", "Output format. One of: json|yaml")
	// -C/--cluster takes the place of the root command's --cluster (the
	// kubeconfig cluster), as in karmadactl.
	fs.StringVarP(&f.opts.Cluster, clusterproxy.ClusterFlag, "C", "", "the name of legacy cluster (eg -C=member1)")
	fs.StringVar(&f.clusterContext, "cluster-context", "", "Context name of legacy cluster in kubeconfig. Only works when there are multiple contexts in the kubeconfig.")
	fs.StringVar(&f.clusterKubeconfig, "cluster-kubeconfig", "", "Path of the legacy cluster's kubeconfig.")
	fs.BoolVar(&f.opts.DryRun, "dry-run", false, "Run the command in dry-run mode, without making any server requests.")
	fs.BoolVarP(&f.opts.Dependencies, "dependencies", "d", false, "Promote resource with its dependencies automatically, default to false")
	return cmd
}

func (f *promoteFlags) run(ctx context.Context, cp *controlPlaneFlags, errOut, out io.Writer) error {
	if err := f.opts.Validate(); err != nil {
		return err
	}
	ns, _, err := cp.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("failed to get namespace from the kubeconfig: %w", err)
	}
	f.opts.Namespace = ns
	cpc, err := cp.clients()
	if err != nil {
		return err
	}
	if err := clusterproxy.CheckCluster(ctx, cpc.karmada, f.opts.Cluster); err != nil {
		return err
	}
	member, err := promote.NewMember(f.opts.Cluster, f.memberGetter(cp))
	if err != nil {
		return err
	}
	cfg, err := cp.config.ToRESTConfig()
	if err != nil {
		return err
	}
	mapper, err := cp.config.ToRESTMapper()
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	p := &promote.Promoter{Member: member, ControlPlane: promote.ControlPlane{Mapper: mapper, Client: client}, Out: out, ErrOut: errOut}
	if f.opts.Dependencies {
		deps, err := dependencyReader(ctx, cpc.karmada, errOut)
		if err != nil {
			return err
		}
		p.Dependencies = deps.Of
	}
	return p.Run(ctx, f.opts)
}

// memberGetter reaches the member: through the control plane's proxy as
// the caller, or with --cluster-kubeconfig directly (the context is
// --cluster-context, by default the cluster's name, as in karmadactl).
func (f *promoteFlags) memberGetter(cp *controlPlaneFlags) genericclioptions.RESTClientGetter {
	if f.clusterKubeconfig == "" {
		return clusterproxy.NewGetter(cp.config, f.opts.Cluster)
	}
	context := f.clusterContext
	if context == "" {
		context = f.opts.Cluster
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig, flags.Context = &f.clusterKubeconfig, &context
	return flags
}

// dependencyReader lists dependencies as the control plane's interpreter
// does, with its ResourceInterpreterCustomizations; a caller who may not
// read them gets the built-in answers, with a warning.
func dependencyReader(ctx context.Context, karmada versioned.Interface, errOut io.Writer) (*promote.Dependencies, error) {
	warn := func(w string) { fmt.Fprintf(errOut, "Warning: %s\n", w) }
	var rics []*configv1alpha1.ResourceInterpreterCustomization
	list, err := karmada.ConfigV1alpha1().ResourceInterpreterCustomizations().List(ctx, metav1.ListOptions{})
	switch {
	case err == nil:
		for i := range list.Items {
			rics = append(rics, &list.Items[i])
		}
	case apierrors.IsForbidden(err):
		warn("reading the ResourceInterpreterCustomizations is forbidden: dependencies are listed by the built-in interpreter only")
	default:
		return nil, fmt.Errorf("listing the ResourceInterpreterCustomizations: %w", err)
	}
	return promote.NewDependencies(rics, warn)
}
