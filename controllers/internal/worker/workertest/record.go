package workertest

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
)

// Events drains a fake recorder's channel and returns the events, in the
// order they were recorded.
func Events(ch <-chan string) []string {
	var out []string
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}

// Writes returns the writes among a fake client's actions (creates,
// updates, patches, deletes) as "verb resource namespace/name", sorted;
// reads are left out.
func Writes(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		var name string
		switch a := a.(type) {
		case clienttesting.CreateAction: // and every UpdateAction: both carry the object
			if m, ok := a.GetObject().(metav1.Object); ok {
				name = m.GetName()
			}
		case clienttesting.PatchAction:
			name = a.GetName()
		case clienttesting.DeleteAction:
			name = a.GetName()
		default:
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource+" "+a.GetNamespace()+"/"+name)
	}
	sort.Strings(out)
	return out
}
