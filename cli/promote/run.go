package promote

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/cli/clusterproxy"
	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// Flags are karmadactl promote's flags.
type Flags struct {
	Options
	// ClusterKubeconfig and ClusterContext read the member directly
	// instead of through the control plane's proxy.
	ClusterKubeconfig, ClusterContext string
}

// Run promotes the object args names (promote TYPE NAME) from the member
// -C names to the control plane cp locates (its namespace is cp's);
// self is how the user runs this binary, for the usage error.
func (f *Flags) Run(ctx context.Context, cp genericclioptions.RESTClientGetter, self string, args []string, errOut, out io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("incorrect command format, please use correct command format: %s promote <RESOURCE_TYPE> <RESOURCE_NAME> -n <NAME_SPACE> -C <CLUSTER_NAME>", self)
	}
	f.Kind, f.Name = args[0], args[1]
	if err := f.Validate(); err != nil {
		return err
	}
	ns, _, err := cp.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("failed to get namespace from the kubeconfig: %w", err)
	}
	f.Namespace = ns
	cpc, err := controlplane.ClientsOf(cp)
	if err != nil {
		return err
	}
	if err := clusterproxy.CheckCluster(ctx, cpc.Karmada, f.Cluster); err != nil {
		return err
	}
	member, err := NewMember(f.Cluster, f.memberGetter(cp))
	if err != nil {
		return err
	}
	cfg, err := cp.ToRESTConfig()
	if err != nil {
		return err
	}
	mapper, err := cp.ToRESTMapper()
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	p := &Promoter{Member: member, ControlPlane: ControlPlane{Mapper: mapper, Client: client}, Out: out, ErrOut: errOut}
	if f.Dependencies {
		deps, err := dependencyReader(ctx, cpc.Karmada, errOut)
		if err != nil {
			return err
		}
		p.Dependencies = deps.Of
	}
	return p.Run(ctx, f.Options)
}

// memberGetter reaches the member: through the control plane's proxy as
// the caller, or with --cluster-kubeconfig directly (the context is
// --cluster-context, by default the cluster's name, as in karmadactl).
func (f *Flags) memberGetter(cp genericclioptions.RESTClientGetter) genericclioptions.RESTClientGetter {
	if f.ClusterKubeconfig == "" {
		return clusterproxy.NewGetter(cp, f.Cluster)
	}
	context := f.ClusterContext
	if context == "" {
		context = f.Cluster
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig, flags.Context = &f.ClusterKubeconfig, &context
	return flags
}

// dependencyReader lists dependencies as the control plane's interpreter
// does, with its ResourceInterpreterCustomizations; a caller who may not
// read them gets the built-in answers, with a warning.
func dependencyReader(ctx context.Context, karmada versioned.Interface, errOut io.Writer) (*Dependencies, error) {
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
	return NewDependencies(rics, warn)
}
