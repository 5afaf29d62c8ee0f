package registry

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// TestLeadingTypeMeta: the kind read from the first two fields is the one
// json.DefaultMetaFactory finds, for every shape; the fast path only
// takes the shape the encoder writes.
func TestLeadingTypeMeta(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"kind":"Work","apiVersion":"work.karmada.io/v1alpha1","metadata":{"name":"w"}}`,
		`{"kind":"Status","apiVersion":"v1"}`,
		`{"apiVersion":"work.karmada.io/v1alpha1","kind":"Work"}`,
		`{"kind":"W\u006frk","apiVersion":"work.karmada.io/v1alpha1"}`,
		`{ "kind":"Work","apiVersion":"work.karmada.io/v1alpha1"}`,
		`{"kind":"Work","apiVersion":"a/b/c"}`,
		`{"kind":"Work"}`,
		`{"metadata":{"kind":"Work"}}`,
		`{"kind":"Work","apiVersion":"v1"`,
		`not json`,
	} {
		got, gotErr := leadingTypeMeta{}.Interpret([]byte(doc))
		want, wantErr := json.DefaultMetaFactory.Interpret([]byte(doc))
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, %v; DefaultMetaFactory %v, %v", doc, got, gotErr, want, wantErr)
		}
	}
}

// TestStorageCodecRoundTrip: an object stored with StorageCodec reads back
// the same, and its JSON starts with the kind and apiVersion, the shape
// leadingTypeMeta reads without a scan.
func TestStorageCodecRoundTrip(t *testing.T) {
	t.Parallel()
	scheme := NewScheme()
	codec := StorageCodec(scheme, NewCodecs(scheme))
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}}}
	data, err := runtime.Encode(codec, w)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"kind":"Work","apiVersion":"work.karmada.io/v1alpha1",`) {
		t.Errorf("stored as %s", data)
	}
	out := &workv1alpha1.Work{}
	if err := runtime.DecodeInto(codec, data, out); err != nil {
		t.Fatal(err)
	}
	out.TypeMeta = metav1.TypeMeta{}
	if !reflect.DeepEqual(out, w) {
		t.Errorf("read back %+v, want %+v", out, w)
	}
}

// BenchmarkInterpret: the kind of a Work with a Deployment's manifest.
func BenchmarkInterpret(b *testing.B) {
	doc := []byte(`{"kind":"Work","apiVersion":"work.karmada.io/v1alpha1","metadata":{"name":"w","namespace":"karmada-es-member1","labels":{"a":"b"}},"spec":{"workload":{"manifests":[` +
		strings.Repeat(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"n"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"pause"}]}}}},`, 8) + `{}]}}}`)
	for _, mf := range []struct {
		name string
		mf   json.MetaFactory
	}{{"leading", leadingTypeMeta{}}, {"default", json.DefaultMetaFactory}} {
		b.Run(mf.name, func(b *testing.B) {
			for range b.N {
				if _, err := mf.mf.Interpret(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
