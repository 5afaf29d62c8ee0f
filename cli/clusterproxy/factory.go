package clusterproxy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// Factory is the cmdutil.Factory kubectl's commands run over: the control
// plane's until Use points it at a member. kubectl's commands take their
// Factory when they are built, before the flags that choose the target are
// parsed, and call it only when they run, so the target is swapped in
// between (Bind).
type Factory struct {
	// Factory is the current target's; its methods are the Factory's.
	cmdutil.Factory

	controlPlane genericclioptions.RESTClientGetter
	cluster      string
}

var _ cmdutil.Factory = (*Factory)(nil)

// New returns the Factory of the control plane located by controlPlane
// (the root command's kubectl flags).
func New(controlPlane genericclioptions.RESTClientGetter) *Factory {
	return &Factory{Factory: kubectlFactory(controlPlane), controlPlane: controlPlane}
}

// kubectlFactory is kubectl's Factory over getter. kubectl's own getter is
// wrapped in MatchVersionFlags, whose configurations carry the defaults
// the streaming commands (exec, attach) need: core/v1 and its serializer.
func kubectlFactory(getter genericclioptions.RESTClientGetter) cmdutil.Factory {
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(getter))
}

// Cluster is the member the Factory targets, "" for the control plane.
func (f *Factory) Cluster() string { return f.cluster }

// Use points the Factory at cluster ("" for the control plane) after
// checking that the control plane knows it.
func (f *Factory) Use(ctx context.Context, cluster string) error {
	if cluster == "" {
		f.Factory, f.cluster = kubectlFactory(f.controlPlane), ""
		return nil
	}
	cfg, err := f.controlPlane.ToRESTConfig()
	if err != nil {
		return err
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the karmada.io client for %s: %w", cfg.Host, err)
	}
	if err := CheckCluster(ctx, karmada, cluster); err != nil {
		return err
	}
	if err := Reach(ctx, Config(cfg, cluster)); err != nil {
		return fmt.Errorf("cluster(%s): %w", cluster, err)
	}
	f.Factory, f.cluster = kubectlFactory(NewGetter(f.controlPlane, cluster)), cluster
	return nil
}

// CheckCluster fails unless the control plane has a Cluster named name,
// with an error naming it. A caller that may not read the Cluster object
// may still have rights on its proxy (the member's RBAC decides there), so
// Forbidden passes.
func CheckCluster(ctx context.Context, karmada versioned.Interface, name string) error {
	_, err := karmada.ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("cluster %q not found: no member cluster of that name is registered with the control plane", name)
	default:
		return fmt.Errorf("checking member cluster %q: %w", name, err)
	}
}
