package multiget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	describecmd "k8s.io/kubectl/pkg/cmd/describe"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/describe"
)

// DescribeOptions is karmadactl describe: kubectl describe in each
// cluster of a Selection.
type DescribeOptions struct {
	// Flags are kubectl describe's (-f, -l, -A, --show-events,
	// --chunk-size); their Factory is set for each cluster.
	Flags     *describecmd.DescribeFlags
	Selection Selection
	genericiooptions.IOStreams
}

// NewDescribeOptions returns kubectl's defaults and karmadactl's default
// scope.
func NewDescribeOptions(streams genericiooptions.IOStreams) *DescribeOptions {
	return &DescribeOptions{
		Flags:     describecmd.NewDescribeFlags(nil, streams),
		Selection: Selection{Scope: clusterproxy.ScopeKarmada, Timeout: DefaultMemberTimeout, RequestTimeout: true},
		IOStreams: streams,
	}
}

// Run describes args in every target. Descriptions of member objects
// start with a Cluster line; with the control plane alone the output is
// kubectl's. Clusters that cannot be read are named in a warning; Run
// fails only when none could be (with one target, its error, as
// kubectl's).
func (o *DescribeOptions) Run(ctx context.Context, cp genericclioptions.RESTClientGetter, list ListClusters, parent string, args []string) error {
	if o.Selection.Timeout < 0 {
		return errors.New("--member-timeout must not be negative")
	}
	targets, err := Resolve(ctx, cp, list, o.Selection)
	if err != nil {
		return err
	}
	headed := len(targets) > 1 || !targets[0].ControlPlane
	outcomes := ReadAll(ctx, targets, o.Selection.Timeout, func(ctx context.Context, t Target) (described, error) {
		if err := Probe(ctx, t); err != nil {
			return described{}, err
		}
		return o.describe(t, parent, args, headed)
	})
	var errs []error
	first := true
	for _, oc := range outcomes {
		if len(oc.Value.out) > 0 {
			if !first {
				fmt.Fprint(o.Out, "\n\n")
			}
			first = false
			if _, err := o.Out.Write(oc.Value.out); err != nil {
				return err
			}
		}
		if _, err := o.ErrOut.Write(oc.Value.errOut); err != nil {
			return err
		}
		if oc.Err == nil {
			continue
		}
		errs = append(errs, oc.Err)
		if len(targets) > 1 {
			Warn(o.ErrOut, oc.Target.Cluster, oc.Err)
		}
	}
	return result(len(targets), errs)
}

// described is what kubectl describe printed for one target.
type described struct{ out, errOut []byte }

// describe runs kubectl describe against one target, into buffers printed
// in the targets' order.
func (o *DescribeOptions) describe(t Target, parent string, args []string, headed bool) (described, error) {
	var out, errOut bytes.Buffer
	flags := *o.Flags
	flags.Factory = cmdutil.NewFactory(t.Getter)
	flags.IOStreams = genericiooptions.IOStreams{In: o.In, Out: &out, ErrOut: &errOut}
	// Run turns events off for several objects: each cluster decides for
	// its own.
	settings := *o.Flags.DescriberSettings
	flags.DescriberSettings = &settings
	opts, err := flags.ToOptions(parent, args)
	if err != nil {
		return described{}, err
	}
	if headed {
		inner := opts.Describer
		opts.Describer = func(m *meta.RESTMapping) (describe.ResourceDescriber, error) {
			d, err := inner(m)
			if err != nil {
				return nil, err
			}
			return clusterDescriber{inner: d, cluster: t.Cluster}, nil
		}
	}
	err = opts.Run()
	return described{out: out.Bytes(), errOut: errOut.Bytes()}, err
}

// clusterDescriber heads each description with its cluster.
type clusterDescriber struct {
	inner   describe.ResourceDescriber
	cluster string
}

func (d clusterDescriber) Describe(namespace, name string, settings describe.DescriberSettings) (string, error) {
	s, err := d.inner.Describe(namespace, name, settings)
	if err != nil {
		return s, err
	}
	return WithClusterLine(s, d.cluster), nil
}

// WithClusterLine puts "Cluster:" before a kubectl description, its
// value aligned with the values of the description's first lines.
func WithClusterLine(description, cluster string) string {
	const label = "Cluster:"
	width := len(label) + 1
	first, _, _ := strings.Cut(description, "\n")
	if key, rest, ok := strings.Cut(first, ":"); ok && !strings.HasPrefix(key, " ") && strings.TrimSpace(rest) != "" {
		value := len(first) - len(strings.TrimLeft(rest, " ")) // where the first line's value starts
		width = max(width, value)
	}
	return label + strings.Repeat(" ", width-len(label)) + cluster + "\n" + description
}
