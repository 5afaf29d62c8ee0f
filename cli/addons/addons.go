package addons

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	apiregistrationv1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// addon is one of karmadactl's addons and what stands for it here: the
// APIServices flotilla-apiserver serves it through, or none when it is
// part of the controllers.
type addon struct {
	name        string
	apiServices []string
	note        string
}

// addons are karmadactl's addons, in its order.
var addons = []addon{
	{name: "karmada-descheduler", note: "a controller of flotilla-apiserver, off by default: run it with --controllers=*,descheduler"},
	{name: "karmada-metrics-adapter", apiServices: []string{"v1beta1.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io"},
		note: "served by flotilla-apiserver"},
	{name: "karmada-scheduler-estimator", note: "built into the scheduler: it estimates from each member's nodes and pods"},
	{name: "karmada-search", apiServices: []string{"v1alpha1.search.karmada.io"}, note: "served by flotilla-apiserver"},
}

// List prints karmadactl's addons and their status, read from the
// control plane flags locates, on out (addons list).
func List(ctx context.Context, flags genericclioptions.RESTClientGetter, out io.Writer) error {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading the control-plane kubeconfig: %w", err)
	}
	c, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return listAddons(ctx, c, out)
}

// Toggle is addons enable|disable (verb) ADDON: an error that says how
// the addon, built into flotilla-apiserver, is turned on or off.
func Toggle(verb, name string) error {
	for _, a := range addons {
		if a.name == name {
			return fmt.Errorf("addon %s cannot be %sd by flotillactl: %s", a.name, strings.TrimSuffix(verb, "e"), a.note)
		}
	}
	return fmt.Errorf("unknown addon %q: known addons are %s", name, addonNames())
}

func addonNames() string {
	names := make([]string, len(addons))
	for i, a := range addons {
		names[i] = a.name
	}
	return strings.Join(names, ", ")
}

// listAddons prints NAME, STATUS (enabled: every APIService Available;
// disabled: one is not; built in: nothing to check) and how it is served.
func listAddons(ctx context.Context, c aggregator.Interface, out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATUS\tSERVED BY")
	for _, a := range addons {
		status := "built in"
		if len(a.apiServices) > 0 {
			status = "enabled"
			for _, name := range a.apiServices {
				svc, err := c.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					status = "disabled"
				case err != nil:
					return fmt.Errorf("reading APIService %s: %w", name, err)
				case !apiregistrationv1helper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available):
					status = "disabled"
				}
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", a.name, status, a.note)
	}
	return w.Flush()
}
