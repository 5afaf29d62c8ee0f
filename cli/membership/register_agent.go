package membership

// The agent half of register: flotilla-agent's Deployment in the member,
// rendered from charts/flotilla-agent (the chart helm installs) with
// register's flags, applied server-side, or printed with --dry-run.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/distribution/reference"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// AgentRelease is the release register renders the agent chart as: it
// names the agent's Deployment.
const AgentRelease = "flotilla-agent"

// agentValues are the agent chart's values from register's flags: what
// register creates itself (the Secret, ServiceAccount and RBAC) is not
// rendered again.
func (o *RegisterOptions) agentValues() (map[string]any, error) {
	vals := map[string]any{
		"clusterName":                  o.ClusterName,
		"replicas":                     int64(o.AgentReplicas),
		"controlPlaneKubeconfigSecret": names.AgentConfigSecret,
		"serviceAccount":               map[string]any{"create": false, "name": AgentServiceAccount},
		"rbac":                         map[string]any{"create": false, "name": AgentClusterRole},
	}
	if o.AgentImage == "" {
		return vals, nil
	}
	repo, tag, err := splitImage(o.AgentImage)
	if err != nil {
		return nil, err
	}
	vals["image"] = map[string]any{"repository": repo, "tag": tag}
	return vals, nil
}

// splitImage splits an image reference into the chart's repository and
// tag (a digest, when the reference has one; "latest" when it has neither).
func splitImage(image string) (repo, tag string, err error) {
	ref, err := reference.Parse(image)
	if err != nil {
		return "", "", fmt.Errorf("invalid --karmada-agent-image %q: %w", image, err)
	}
	named, ok := ref.(reference.Named)
	if !ok {
		return "", "", fmt.Errorf("invalid --karmada-agent-image %q: no repository", image)
	}
	tag = "latest"
	if t, ok := ref.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if d, ok := ref.(reference.Digested); ok {
		tag = d.Digest().String()
	}
	return named.Name(), tag, nil
}

// agentObjects renders the agent chart with register's values, labelled
// as what flotillactl created (unregister deletes only those).
func (o *RegisterOptions) agentObjects() ([]*unstructured.Unstructured, error) {
	vals, err := o.agentValues()
	if err != nil {
		return nil, err
	}
	chrt, err := charts.Load(charts.AgentChart)
	if err != nil {
		return nil, err
	}
	r, err := charts.Render(chrt, charts.Release{Name: AgentRelease, Namespace: o.AgentNamespace, Values: vals}, nil)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", charts.AgentChart, err)
	}
	for _, obj := range r.Objects {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range createdLabels() {
			labels[k] = v
		}
		obj.SetLabels(labels)
	}
	return r.Objects, nil
}

// printAgentObjects writes what register --dry-run would do: comments
// naming the objects register creates, then the rendered objects as YAML.
func (o *RegisterOptions) printAgentObjects(out io.Writer, objs []*unstructured.Unstructured) error {
	fmt.Fprintf(out, "# Dry run: nothing was requested of the control plane, nothing was written to the member.\n")
	fmt.Fprintf(out, "# register would create in the member namespace/%s, %s, %s, %s and %s,\n",
		o.AgentNamespace, ref("secret", o.AgentNamespace, names.AgentConfigSecret),
		ref("serviceaccount", o.AgentNamespace, AgentServiceAccount), ref("clusterrole", "", AgentClusterRole), ref("clusterrolebinding", "", AgentClusterRole))
	if o.AgentReplicas == 0 {
		fmt.Fprintf(out, "# and no Deployment (--karmada-agent-replicas=0): the agent runs as a local process.\n")
		return nil
	}
	fmt.Fprintf(out, "# and apply (server-side):\n")
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "---\n%s", data)
	}
	return nil
}

// applyAgentObjects applies the rendered objects to the member with
// server-side apply; an object that did not change is not written.
func (o *RegisterOptions) applyAgentObjects(ctx context.Context, member kubernetes.Interface, objs []*unstructured.Unstructured, out io.Writer) error {
	p := printer{out: out}
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			// The values of agentValues render the Deployment alone.
			return fmt.Errorf("chart %s rendered %s %s, which register does not apply", charts.AgentChart, obj.GetKind(), obj.GetName())
		}
		data, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		deployments := member.AppsV1().Deployments(obj.GetNamespace())
		before := ""
		if cur, err := deployments.Get(ctx, obj.GetName(), metav1.GetOptions{}); err == nil {
			before = cur.ResourceVersion
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading deployment %s/%s on the member: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		applied, err := deployments.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: controlplane.UserAgent, Force: ptr.To(true)})
		if err != nil {
			return fmt.Errorf("applying deployment %s/%s on the member: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		verb := "configured"
		switch before {
		case "":
			verb = "created"
		case applied.ResourceVersion:
			verb = "unchanged"
		}
		p.changed(onMember, ref("deployment", obj.GetNamespace(), obj.GetName()), verb)
	}
	return nil
}

// agentDeploymentObject is the agent's Deployment, for unregister.
func agentDeploymentObject(kube kubernetes.Interface, namespace, name string) object {
	c := kube.AppsV1().Deployments(namespace)
	return object{where: onMember, what: ref("deployment", namespace, name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

// agentImage names the image of the Deployment, for messages.
func agentImage(objs []*unstructured.Unstructured) string {
	var images []string
	for _, obj := range objs {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if m, ok := c.(map[string]any); ok {
				if s, ok := m["image"].(string); ok {
					images = append(images, s)
				}
			}
		}
	}
	return strings.Join(images, ", ")
}
