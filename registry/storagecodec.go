package registry

import (
	"bytes"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
)

// StorageCodec is the codec objects are stored with: JSON in their
// StorageVersions, as codecs.LegacyCodec(StorageVersions...) stores them,
// decoded with leadingTypeMeta first. Every object read from etcd (each
// get, each update's current state, each watch event of the resources
// without a watch cache) is decoded through it.
func StorageCodec(scheme *runtime.Scheme, codecs serializer.CodecFactory) runtime.Codec {
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	stored := json.NewSerializerWithOptions(leadingTypeMeta{}, scheme, scheme, json.SerializerOptions{})
	// What is not JSON (nothing this server wrote) the universal
	// deserializer reads, as it always did.
	decoder := recognizer.NewDecoder(stored, codecs.UniversalDeserializer())
	return versioning.NewDefaultingCodecForScheme(scheme, info.Serializer, decoder, StorageVersions, runtime.InternalGroupVersioner)
}

// leadingTypeMeta finds an object's kind where the JSON encoder writes it,
// first ({"kind":"…","apiVersion":"…",…}, TypeMeta's fields in order), and
// only there: json.DefaultMetaFactory scans the whole object for them
// (a full pass of encoding/json before the decode's own), which for a
// Work carrying its manifests is a third of the decode. Anything else (other
// order, escapes, spaces) goes to DefaultMetaFactory.
type leadingTypeMeta struct{}

var (
	kindKey       = []byte(`{"kind":"`)
	apiVersionKey = []byte(`,"apiVersion":"`)
)

// Interpret implements json.MetaFactory.
func (leadingTypeMeta) Interpret(data []byte) (*schema.GroupVersionKind, error) {
	if rest, ok := bytes.CutPrefix(data, kindKey); ok {
		if kind, rest, ok := plainString(rest); ok {
			if rest, ok := bytes.CutPrefix(rest, apiVersionKey); ok {
				if apiVersion, rest, ok := plainString(rest); ok && len(rest) > 0 && (rest[0] == ',' || rest[0] == '}') {
					if gv, err := schema.ParseGroupVersion(string(apiVersion)); err == nil {
						return &schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: string(kind)}, nil
					}
				}
			}
		}
	}
	return json.DefaultMetaFactory.Interpret(data)
}

// plainString cuts a JSON string's content (its opening quote already
// read) at its closing quote; false when it has an escape or no end.
func plainString(data []byte) (s, rest []byte, ok bool) {
	for i, c := range data {
		switch c {
		case '"':
			return data[:i], data[i+1:], true
		case '\\':
			return nil, nil, false
		}
	}
	return nil, nil, false
}
