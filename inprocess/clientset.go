package inprocess

import (
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// Clientset is the generated clientset's interface (versioned.Interface)
// over the storage in process. Discovery, RESTClient and server-side
// apply go over HTTP, through the clientset it wraps.
type Clientset struct {
	*versioned.Clientset
	storage *Storage
	shared  bool
}

var _ versioned.Interface = &Clientset{}

// Client returns the clientset whose results are its caller's to change:
// objects read from the watch cache are copies.
func (s *Storage) Client(overHTTP *versioned.Clientset) *Clientset {
	return &Clientset{Clientset: overHTTP, storage: s}
}

// Informers returns the clientset that feeds informers: its List and
// Watch hand out the watch cache's objects themselves, which nobody may
// change (the informers' contract). Informer transforms that change
// objects must not be used with it.
func (s *Storage) Informers(overHTTP *versioned.Clientset) *Clientset {
	return &Clientset{Clientset: overHTTP, storage: s, shared: true}
}
