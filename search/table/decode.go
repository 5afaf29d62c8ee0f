package table

import (
	"reflect"
	"time"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// unmarshal decodes one cached object's JSON into a typed object. Benchmarks
// swap it to compare decoders.
var unmarshal = decodeObject

// fastJSON decodes typed objects about twice as fast as sigs.k8s.io/json,
// with the settings apimachinery's JSON serializer used while it was built on
// json-iterator: field names are case-sensitive. It decodes metav1.Time
// itself rather than through Time.UnmarshalJSON, which decodes the string with
// encoding/json again.
var fastJSON = func() jsoniter.API {
	api := jsoniter.Config{
		EscapeHTML:             true,
		SortMapKeys:            true,
		ValidateJsonRawMessage: true,
		CaseSensitive:          true,
	}.Froze()
	api.RegisterExtension(&timeExtension{})
	return api
}()

// decodeObject decodes data into the object into points to as kube-apiserver's
// JSON serializer does. It decodes with fastJSON and, when that fails, decodes
// again with sigs.k8s.io/json, the serializer's own decoder, so that an
// object fastJSON rejects is still decoded if the serializer takes it, and an
// error names the field at fault as the serializer does.
func decodeObject(data []byte, into any) error {
	if err := fastJSON.Unmarshal(data, into); err == nil {
		return nil
	}
	if v := reflect.ValueOf(into); v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().SetZero()
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(data, into)
}

// timeExtension makes fastJSON decode metav1.Time values.
type timeExtension struct {
	jsoniter.DummyExtension
}

// timeType is the type timeExtension decodes.
var timeType = reflect2.TypeOf(metav1.Time{})

// CreateDecoder returns timeDecoder for metav1.Time and nil for every other
// type.
func (timeExtension) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	if typ == timeType {
		return timeDecoder{}
	}
	return nil
}

// timeDecoder decodes a metav1.Time as Time.UnmarshalJSON does: null is the
// zero time, a string is an RFC 3339 time in the local time zone.
type timeDecoder struct{}

// Decode decodes the next JSON value of iter into the metav1.Time at ptr.
func (timeDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	t := (*metav1.Time)(ptr)
	if iter.ReadNil() {
		t.Time = time.Time{}
		return
	}
	s := iter.ReadString()
	if iter.Error != nil {
		return
	}
	parsed, err := time.Parse(time.RFC3339, s)
	if err != nil {
		iter.ReportError("decoding a metav1.Time", err.Error())
		return
	}
	t.Time = parsed.Local()
}
