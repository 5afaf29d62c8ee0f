package overrides

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// applyCommandArgs changes field ("command" or "args") of every container
// named o.ContainerName in obj's pod (template). add appends the values,
// remove drops every item equal to one of them. As in Karmada, a container
// without the field gets it, possibly empty, and other operators change
// nothing.
func applyCommandArgs(obj *unstructured.Unstructured, field string, o *policyv1alpha1.CommandArgsOverrider) error {
	cs, err := containers(obj)
	if err != nil {
		return err
	}
	for i, c := range cs {
		if name, _ := c["name"].(string); name != o.ContainerName {
			continue
		}
		cur, err := stringList(c[field])
		if err != nil {
			return fmt.Errorf("container %d %s: %w", i, field, err)
		}
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			cur = append(cur, o.Value...)
		case policyv1alpha1.OverriderOpRemove:
			drop := sets.New(o.Value...)
			kept := make([]string, 0, len(cur))
			for _, v := range cur {
				if !drop.Has(v) {
					kept = append(kept, v)
				}
			}
			cur = kept
		default:
			continue
		}
		list := make([]any, 0, len(cur))
		for _, v := range cur {
			list = append(list, v)
		}
		c[field] = list
	}
	return nil
}

// stringList reads a list of strings of unstructured content; nil reads as
// an empty list.
func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("not a list")
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("item %d is not a string", i)
		}
		out = append(out, s)
	}
	return out, nil
}
