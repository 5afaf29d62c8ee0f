package controlplane

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// UserAgent is sent to the control plane and to member clusters; it is
// also the field manager of what flotillactl applies.
const UserAgent = "flotillactl"

// Clients are the clients of the control plane.
type Clients struct {
	Kube    kubernetes.Interface
	Karmada versioned.Interface
}

// NewClients builds the clients of the control plane cfg reaches.
func NewClients(cfg *rest.Config) (Clients, error) {
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), UserAgent)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("building the control-plane client for %s: %w", cfg.Host, err)
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("building the karmada.io client for %s: %w", cfg.Host, err)
	}
	return Clients{Kube: kube, Karmada: karmada}, nil
}

// ClientsOf builds the clients of the control plane flags locates.
func ClientsOf(flags genericclioptions.RESTClientGetter) (Clients, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return Clients{}, fmt.Errorf("loading the control-plane kubeconfig: %w", err)
	}
	return NewClients(cfg)
}

// ClusterNames returns what lists the member clusters of the control
// plane flags locates.
func ClusterNames(flags genericclioptions.RESTClientGetter) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		c, err := ClientsOf(flags)
		if err != nil {
			return nil, err
		}
		list, err := c.Karmada.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(list.Items))
		for _, c := range list.Items {
			names = append(names, c.Name)
		}
		return names, nil
	}
}
