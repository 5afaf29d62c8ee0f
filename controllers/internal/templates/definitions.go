package templates

import (
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// The informer of the host's CustomResourceDefinitions tells when a kind
// appears, goes or comes back: a kind whose CRD is deleted loses its
// templates with it (the API server deletes them first), and a CRD created
// again is new storage, whose templates a new informer lists at once
// rather than when the old one's list-and-watch retries succeed.

// definitionsKind is the kind of CustomResourceDefinitions. The host's
// CRDs are followed once discovery says it serves them; kinds are found
// through discovery alone before (and on a host without them).
var definitionsKind = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition").GroupKind()

// groupKindIndex indexes CRDs by the group/kind they define.
const groupKindIndex = "groupKind"

// newDefinitions returns the informer of the host's CRDs; its store holds
// them typed, without managedFields, indexed by the kind they define.
func newDefinitions(client dynamic.Interface, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	inf := dynamicinformer.NewFilteredDynamicInformer(client, gvr, "", 0,
		cache.Indexers{groupKindIndex: definedGroupKind}, nil).Informer()
	_ = inf.SetTransform(toDefinition)
	return inf
}

// toDefinition converts an unstructured CRD to its type.
func toDefinition(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, err
	}
	crd.ManagedFields = nil
	return crd, nil
}

func definedGroupKind(obj any) ([]string, error) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, nil
	}
	return []string{schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}.String()}, nil
}

// target is how the host serves a kind now.
type target struct {
	// known is false when the host's answer was an error: nothing changes.
	known bool
	// served tells whether the host serves the kind, at gvr.
	served bool
	gvr    schema.GroupVersionResource
	// definition is the UID of the CRD defining the kind, served or not;
	// empty when no CRD defines it (a built-in or aggregated kind).
	definition types.UID
	// elsewhere is true when the CRD is Established but does not serve
	// the version: the kind's templates may be stored under another.
	elsewhere bool
}

// definitionTarget is how crd serves version: at its plural once it is
// Established and serves the version.
func definitionTarget(crd *apiextensionsv1.CustomResourceDefinition, version string) target {
	t := target{known: true, definition: crd.UID}
	if !established(crd) {
		return t
	}
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == version })
	if i < 0 || !crd.Spec.Versions[i].Served {
		t.elsewhere = true
		return t
	}
	t.served = true
	t.gvr = schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
	return t
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// definingOne is the CRD that defines a kind among crds (several CRDs may
// claim one kind; the API server accepts the names of one): an
// Established one first, then the first.
func definingOne(crds []*apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	if len(crds) == 0 {
		return nil
	}
	if i := slices.IndexFunc(crds, established); i >= 0 {
		return crds[i]
	}
	return crds[0]
}

// servingChanged tells whether a CRD update changes which kinds the host
// serves, and where: another UID, established or not, other served
// versions, another plural.
func servingChanged(old, crd *apiextensionsv1.CustomResourceDefinition) bool {
	served := func(c *apiextensionsv1.CustomResourceDefinition) []string {
		var out []string
		for _, v := range c.Spec.Versions {
			if v.Served {
				out = append(out, v.Name)
			}
		}
		return out
	}
	return old.UID != crd.UID || established(old) != established(crd) ||
		old.Spec.Names.Plural != crd.Spec.Names.Plural || !slices.Equal(served(old), served(crd))
}

// step is what Ensure does with the informer of one wanted kind.
type step struct {
	// stop stops the running informer.
	stop bool
	// forget tells the handlers that the running informer's templates are
	// deleted: the CRD they were stored by is gone.
	forget bool
	// start starts an informer at the target's resource.
	start bool
}

// plan is the step of a wanted kind: running tells whether an informer
// watches it, at gvr, started under definition (empty for a kind no CRD
// defined then); now is how the host serves it.
func plan(running bool, gvr schema.GroupVersionResource, definition types.UID, now target) step {
	switch {
	case !now.known:
		return step{}
	case !running:
		return step{start: now.served}
	case definition != "" && definition != now.definition:
		// The CRD was deleted (and maybe created again): its templates
		// went with it, and the new one's are listed by a new informer.
		return step{stop: true, forget: true, start: now.served}
	case !now.served && definition == "" && now.definition == "":
		// A built-in or aggregated kind missing from discovery for a
		// while (an APIService unavailable): its templates are still
		// there; the informer keeps retrying.
		return step{}
	case !now.served:
		// The same CRD no longer serves this version (or is no longer
		// Established): its templates are still stored.
		return step{stop: true}
	case now.gvr != gvr:
		return step{stop: true, start: true}
	}
	return step{}
}
