package inprocess

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// notStored are the kinds of the clientset the server answers without
// storing them (create-only reviews): nothing in process creates them, and
// the storage in process serves only kinds it stores.
var notStored = map[string]bool{"PlacementReviews": true}

// TestEveryKindInProcess: every kind of the generated clientset, in every
// group, is reached in process, not over HTTP (but those notStored).
func TestEveryKindInProcess(t *testing.T) {
	overHTTP, err := versioned.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	c := reflect.ValueOf(New(Config{}).Client(overHTTP))
	iface := reflect.TypeFor[versioned.Interface]()
	kinds := 0
	for i := range iface.NumMethod() {
		m := iface.Method(i)
		if m.Name == "Discovery" {
			continue
		}
		group := c.MethodByName(m.Name).Call(nil)[0]
		for j := range group.NumMethod() {
			gm := group.Type().Method(j)
			if gm.Name == "RESTClient" || notStored[gm.Name] {
				continue
			}
			var args []reflect.Value
			if gm.Type.NumIn() == 1 {
				args = []reflect.Value{reflect.ValueOf("ns")}
			}
			client := group.Method(j).Call(args)[0]
			if got := client.Elem().Type().String(); !strings.HasPrefix(got, "*inprocess.typed[") {
				t.Errorf("%s().%s() is %s, not in process", m.Name, gm.Name, got)
			}
			kinds++
		}
	}
	if kinds < 20 {
		t.Errorf("found %d kinds, want every kind of the clientset", kinds)
	}
}
