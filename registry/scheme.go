package registry

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	metricsinstall "k8s.io/metrics/pkg/apis/metrics/install"

	appsinstall "github.com/flotilla-io/flotilla/apis/apps/install"
	autoscalinginstall "github.com/flotilla-io/flotilla/apis/autoscaling/install"
	clusterinstall "github.com/flotilla-io/flotilla/apis/cluster/install"
	configinstall "github.com/flotilla-io/flotilla/apis/config/install"
	flotillainstall "github.com/flotilla-io/flotilla/apis/flotilla/install"
	networkinginstall "github.com/flotilla-io/flotilla/apis/networking/install"
	policyinstall "github.com/flotilla-io/flotilla/apis/policy/install"
	remedyinstall "github.com/flotilla-io/flotilla/apis/remedy/install"
	searchinstall "github.com/flotilla-io/flotilla/apis/search/install"
	workinstall "github.com/flotilla-io/flotilla/apis/work/install"
)

// StorageVersions are the versions objects are stored in, one per group.
var StorageVersions = schema.GroupVersions{
	{Group: "cluster.karmada.io", Version: "v1alpha1"},
	{Group: "policy.karmada.io", Version: "v1alpha1"},
	{Group: "work.karmada.io", Version: "v1alpha2"},
	{Group: "work.karmada.io", Version: "v1alpha1"},
	{Group: "config.karmada.io", Version: "v1alpha1"},
	{Group: "autoscaling.karmada.io", Version: "v1alpha1"},
	{Group: "search.karmada.io", Version: "v1alpha1"},
	{Group: "networking.karmada.io", Version: "v1alpha1"},
	{Group: "apps.karmada.io", Version: "v1alpha1"},
	{Group: "remedy.karmada.io", Version: "v1alpha1"},
	{Group: "flotilla.io", Version: "v1alpha1"},
}

// NewScheme returns a scheme holding every API flotilla-apiserver serves.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, install := range []func(*runtime.Scheme){
		clusterinstall.Install, policyinstall.Install, workinstall.Install, configinstall.Install,
		autoscalinginstall.Install, searchinstall.Install, networkinginstall.Install, appsinstall.Install, remedyinstall.Install,
		flotillainstall.Install,
		metricsinstall.Install,
	} {
		install(scheme)
	}
	// Options and status objects every API server speaks, unversioned.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Group: "", Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return scheme
}

// NewCodecs returns the codecs of scheme.
func NewCodecs(scheme *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(scheme)
}

// withoutProtobuf offers JSON, YAML and CBOR but not protobuf: the karmada.io
// types have no protobuf encoding, and a client that prefers it (the host's
// namespace controller deleting collections through the metadata client)
// must fall back to JSON instead of getting an encoding error.
type withoutProtobuf struct {
	serializer.CodecFactory
}

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (w withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range w.CodecFactory.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			out = append(out, info)
		}
	}
	return out
}

// NegotiatedSerializer returns what the server negotiates content types with.
func NegotiatedSerializer(codecs serializer.CodecFactory) runtime.NegotiatedSerializer {
	return withoutProtobuf{codecs}
}
