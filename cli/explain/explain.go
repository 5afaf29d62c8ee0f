// Package explain is flotillactl explain-placement: it reads the explain
// subresource of a template's (Cluster)ResourceBinding and prints, per
// cluster, whether the template runs there and why not, with the replica
// division and its inputs.
package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/cli/encoded"
	"github.com/flotilla-io/flotilla/cli/rollout"
)

// Get reads the explanation of the template args name (TYPE/NAME or TYPE
// NAME) in the namespace of cp.
func Get(ctx context.Context, cp genericclioptions.RESTClientGetter, args []string) (*flotillav1alpha1.PlacementExplanation, error) {
	namespace, _, err := cp.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("failed to get namespace from the kubeconfig: %w", err)
	}
	clients, err := rollout.NewClients(cp)
	if err != nil {
		return nil, err
	}
	t, err := rollout.Resolve(clients.Mapper, args, namespace)
	if err != nil {
		return nil, err
	}
	out, err := Read(ctx, clients.Flotilla, t.Namespace, t.Binding())
	if apierrors.IsNotFound(err) {
		binding := "ClusterResourceBinding " + t.Binding()
		if t.Namespace != "" {
			binding = "ResourceBinding " + t.Namespace + "/" + t.Binding()
		}
		return nil, fmt.Errorf("%s has no %s: no propagation policy claims it, or it does not exist", t, binding)
	}
	if err != nil {
		return nil, fmt.Errorf("explaining the placement of %s: %w", t, err)
	}
	return out, nil
}

// Read reads the explain subresource of the ResourceBinding namespace/name
// (a ClusterResourceBinding when namespace is ""), as client's user.
func Read(ctx context.Context, client versioned.Interface, namespace, name string) (*flotillav1alpha1.PlacementExplanation, error) {
	req := client.WorkV1alpha2().RESTClient().Get()
	if namespace != "" {
		req = req.Namespace(namespace).Resource("resourcebindings")
	} else {
		req = req.Resource("clusterresourcebindings")
	}
	raw, err := req.Name(name).SubResource(flotillav1alpha1.ExplainSubresource).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := &flotillav1alpha1.PlacementExplanation{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("reading the explanation: %w", err)
	}
	return out, nil
}

// Print writes e as output says: "" (a summary and a table of the
// clusters), "yaml" or "json".
func Print(w io.Writer, e *flotillav1alpha1.PlacementExplanation, output string) error {
	if done, err := encoded.Print(w, e, output, ""); done || err != nil {
		return err
	}
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintf(tw, "Template:\t%s\n", e.Template)
	scheduled := "False"
	if e.Scheduled {
		scheduled = "True"
	}
	fmt.Fprintf(tw, "Scheduled:\t%s\t%s\n", scheduled, e.Message)
	if d := e.Division; d != nil {
		how := d.Scheduling
		if d.Preference != "" {
			how += ", " + d.Preference
		}
		fmt.Fprintf(tw, "Replicas:\t%d (%s)\n", d.Replicas, how)
	}
	if e.AffinityName != "" {
		fmt.Fprintf(tw, "Affinity term:\t%s\n", e.AffinityName)
	}
	fmt.Fprintf(tw, "Estimator:\t%s\n", e.Estimator)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "CLUSTER\tSELECTED\tREPLICAS\tAVAILABLE\tWEIGHT\tREASON\tMESSAGE")
	for _, c := range e.Clusters {
		selected, replicas, reason := "No", "-", c.Reason
		if c.Selected {
			selected, replicas, reason = "Yes", strconv.Itoa(int(c.Replicas)), "-"
		}
		fmt.Fprintln(tw, strings.Join([]string{c.Name, selected, replicas, optional(c.AvailableReplicas), optional(c.Weight), reason, c.Message}, "\t"))
	}
	return tw.Flush()
}

func optional(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
