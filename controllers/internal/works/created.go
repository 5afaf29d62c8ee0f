package works

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// Created remembers the Works a controller created until its informer
// delivers them: a pass over their owner in between (queued by another
// event of the same change) reads them as stored instead of creating them
// again, which the server refuses with AlreadyExists and the controller
// would report as a failed sync. A Work is forgotten when the informer
// adds or deletes it, when the controller deletes it, and at the latest
// ttl after its creation. client-go's mutation cache keeps creations
// only in a 100-entry LRU and returns them after their deletion until
// they expire; this keeps them by owner and forgets them on delivery.
type Created struct {
	ttl   time.Duration
	now   func() time.Time
	owner func(*workv1alpha1.Work) string

	mu      sync.Mutex
	byKey   map[string]createdWork
	byOwner map[string]map[string]bool
	swept   time.Time
}

type createdWork struct {
	work  *workv1alpha1.Work
	owner string
	at    time.Time
}

// NewCreated returns an empty memory whose Works belong to the owner owner
// names ("" for none: such Works are not remembered).
func NewCreated(ttl time.Duration, owner func(*workv1alpha1.Work) string) *Created {
	return &Created{ttl: ttl, now: time.Now, owner: owner, byKey: map[string]createdWork{}, byOwner: map[string]map[string]bool{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// Remember records w, as the server returned its creation.
func (c *Created) Remember(w *workv1alpha1.Work) {
	owner := c.owner(w)
	if owner == "" {
		return
	}
	now := c.now()
	k := key(w.Namespace, w.Name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.swept) > c.ttl {
		// A Work delivered before its creation returned stays until it
		// expires; sweep those of owners not passed over again.
		c.swept = now
		for k, e := range c.byKey {
			if now.Sub(e.at) > c.ttl {
				c.forgetLocked(k)
			}
		}
	}
	c.forgetLocked(k)
	c.byKey[k] = createdWork{work: w, owner: owner, at: now}
	if c.byOwner[owner] == nil {
		c.byOwner[owner] = map[string]bool{}
	}
	c.byOwner[owner][k] = true
}

// Write is the package's Write, remembering what it created.
func (c *Created) Write(ctx context.Context, client versioned.Interface, cur, desired *workv1alpha1.Work, fieldManager string) error {
	w, err := Write(ctx, client, cur, desired, fieldManager)
	if err == nil && cur == nil {
		c.Remember(w)
	}
	return err
}

// Forget drops the Work namespace/name.
func (c *Created) Forget(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(key(namespace, name))
}

func (c *Created) forgetLocked(k string) {
	e, ok := c.byKey[k]
	if !ok {
		return
	}
	delete(c.byKey, k)
	if keys := c.byOwner[e.owner]; keys != nil {
		delete(keys, k)
		if len(keys) == 0 {
			delete(c.byOwner, e.owner)
		}
	}
}

// With returns stored, the owner's Works as the informer has them, with
// the Works created for owner it does not have yet. Those stored or
// expired are forgotten.
func (c *Created) With(owner string, stored []*workv1alpha1.Work) []*workv1alpha1.Work {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := c.byOwner[owner]
	if len(keys) == 0 {
		return stored
	}
	have := make(map[string]bool, len(stored))
	for _, w := range stored {
		have[key(w.Namespace, w.Name)] = true
	}
	now := c.now()
	out := stored
	for k := range keys {
		e := c.byKey[k]
		if have[k] || now.Sub(e.at) > c.ttl {
			c.forgetLocked(k)
			continue
		}
		out = append(out, e.work)
	}
	return out
}

// Get returns the Work namespace/name created and not delivered yet;
// false if there is none or it expired (then it is forgotten).
func (c *Created) Get(namespace, name string) (*workv1alpha1.Work, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(namespace, name)
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	if c.now().Sub(e.at) > c.ttl {
		c.forgetLocked(k)
		return nil, false
	}
	return e.work, true
}

// Len is the number of Works remembered.
func (c *Created) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}

// Handler forgets each Work the informer adds or deletes.
func (c *Created) Handler() cache.ResourceEventHandler {
	forget := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if w, ok := obj.(*workv1alpha1.Work); ok {
			c.Forget(w.Namespace, w.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: forget, DeleteFunc: forget}
}
