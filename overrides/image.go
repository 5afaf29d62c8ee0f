package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// containersPath returns where the containers of the pod (template) of a
// workload of kind are. Only the kinds Karmada knows have one: CronJob's
// containers, one level deeper, and init containers are never targeted.
func containersPath(kind string) []string {
	switch kind {
	case "Pod":
		return []string{"spec", "containers"}
	case "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job":
		return []string{"spec", "template", "spec", "containers"}
	}
	return nil
}

// containers returns the container maps of obj's pod (template), in place.
// It returns nil for other kinds and for workloads without containers.
func containers(obj *unstructured.Unstructured) ([]map[string]any, error) {
	path := containersPath(obj.GetKind())
	if path == nil {
		return nil, nil
	}
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("containers of %s are not a list", obj.GetKind())
	}
	out := make([]map[string]any, 0, len(list))
	for i, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("container %d of %s is not an object", i, obj.GetKind())
		}
		out = append(out, m)
	}
	return out, nil
}

// applyImage changes one component of the image at the predicate's path or,
// without predicate, of every container's image.
func applyImage(obj *unstructured.Unstructured, o *policyv1alpha1.ImageOverrider) error {
	if o.Predicate != nil {
		at, image, err := stringAt(obj.Object, o.Predicate.Path)
		if err != nil {
			return fmt.Errorf("reading the image at predicate path: %w", err)
		}
		image, err = overrideImage(image, o)
		if err != nil {
			return err
		}
		at.set(image)
		return nil
	}
	cs, err := containers(obj)
	if err != nil {
		return err
	}
	for i, c := range cs {
		image, _ := c["image"].(string)
		image, err := overrideImage(image, o)
		if err != nil {
			return fmt.Errorf("container %d: %w", i, err)
		}
		c["image"] = image
	}
	return nil
}

// overrideImage returns image with o applied. Like Karmada, add appends the
// value to the component as it is (registry "" + "test-repo" is "test-repo",
// "registry.io" + "-mirror" is "registry.io-mirror"), replace substitutes it
// and remove drops it. A tag that is neither a valid tag nor a valid digest
// after add or replace leaves the image unchanged.
func overrideImage(image string, o *policyv1alpha1.ImageOverrider) (string, error) {
	r, err := parseImage(image)
	if err != nil {
		return "", err
	}
	switch o.Component {
	case policyv1alpha1.Registry:
		r.registry = overrideComponent(r.registry, o)
	case policyv1alpha1.Repository:
		r.repository = overrideComponent(r.repository, o)
	case policyv1alpha1.Tag:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			r.setTagOrDigest(r.tagOrDigest() + o.Value)
		case policyv1alpha1.OverriderOpReplace:
			r.setTagOrDigest(o.Value)
		case policyv1alpha1.OverriderOpRemove:
			r.removeTagOrDigest()
		}
	default:
		return "", fmt.Errorf("unsupported image component %q", o.Component)
	}
	return r.String(), nil
}

// overrideComponent applies o to a registry or repository. Unknown operators
// leave it unchanged, as in Karmada (validation rejects them).
func overrideComponent(cur string, o *policyv1alpha1.ImageOverrider) string {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		return cur + o.Value
	case policyv1alpha1.OverriderOpReplace:
		return o.Value
	case policyv1alpha1.OverriderOpRemove:
		return ""
	}
	return cur
}
