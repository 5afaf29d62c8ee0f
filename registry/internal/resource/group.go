package resource

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// KarmadaCategory is the category of Karmada's kinds: `kubectl get karmada-io`.
var KarmadaCategory = []string{"karmada-io"}

// FlotillaCategory is the category of Flotilla's own kinds (flotilla.io):
// `kubectl get flotilla`.
var FlotillaCategory = []string{"flotilla"}

// NewAPIGroupInfo returns a group served in the one version gv, every kind
// from defs.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter, gv schema.GroupVersion, defs []*Definition) (*genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, scheme, runtime.NewParameterCodec(scheme), codecs)
	storage, err := Storage(scheme, opts, defs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gv, err)
	}
	info.VersionedResourcesStorageMap[gv.Version] = storage
	return &info, nil
}
