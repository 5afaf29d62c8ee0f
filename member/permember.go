package member

import (
	"maps"
	"slices"
	"sync"
)

// PerMember is state a reader keeps for each member, built from the
// member's connection: built when the member arrives, built again (the old
// state stopped first) when its connection changes (the Cluster's
// endpoint, proxy or TLS settings, its credential Secret, the agent's
// tunnel: Client.Key), stopped when the member leaves, and left alone
// while the connection stays the same.
//
// Something drives it: the hub, for a PerMember registered with
// Hub.Register (its members are the hub's: the Ready ones and those a
// reader asked for), or its owner, which calls Sync with the members it
// wants (the search cache: the Ready members a ResourceRegistry selects).
//
// build and the stop it returns run while the driver holds its lock: they
// must not block, and must not call back into the driver or into this
// PerMember.
type PerMember[T any] struct {
	build func(name string, cl *Client) (T, func())

	mu     sync.RWMutex
	states map[string]*memberValue[T]
}

// memberValue is one member's state and the connection it was built for.
type memberValue[T any] struct {
	client *Client
	value  T
	stop   func()
}

// NewPerMember returns a PerMember whose state is built by build, which
// returns the state and the function that stops it (nil: nothing to stop).
func NewPerMember[T any](build func(name string, cl *Client) (T, func())) *PerMember[T] {
	return &PerMember[T]{build: build, states: map[string]*memberValue[T]{}}
}

// Get returns the state of a member, when it has one.
func (p *PerMember[T]) Get(name string) (T, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.states[name]
	if !ok {
		var zero T
		return zero, false
	}
	return v.value, true
}

// Client returns the client a member's state was built with.
func (p *PerMember[T]) Client(name string) (*Client, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.states[name]
	if !ok {
		return nil, false
	}
	return v.client, true
}

// Names returns the members with a state, sorted.
func (p *PerMember[T]) Names() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Sorted(maps.Keys(p.states))
}

// Values returns the states of every member, in no order.
func (p *PerMember[T]) Values() []T {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]T, 0, len(p.states))
	for _, v := range p.states {
		out = append(out, v.value)
	}
	return out
}

// Sync makes the members with a state those of want, each on its client:
// it stops the states of the members not in want and of those whose
// connection changed, then builds the missing ones.
func (p *PerMember[T]) Sync(want map[string]*Client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, v := range p.states {
		if cl, ok := want[name]; !ok || cl.Key() != v.client.Key() {
			p.stopLocked(name, v)
		}
	}
	for name, cl := range want {
		if _, ok := p.states[name]; !ok {
			p.buildLocked(name, cl)
		}
	}
}

// Ensure returns the state of a member on cl, built (or built again, when
// it was built on another connection) when needed.
func (p *PerMember[T]) Ensure(name string, cl *Client) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.states[name]; ok {
		if v.client.Key() == cl.Key() {
			return v.value
		}
		p.stopLocked(name, v)
	}
	return p.buildLocked(name, cl)
}

// Delete stops and forgets the state of a member.
func (p *PerMember[T]) Delete(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.states[name]; ok {
		p.stopLocked(name, v)
	}
}

func (p *PerMember[T]) buildLocked(name string, cl *Client) T {
	value, stop := p.build(name, cl)
	p.states[name] = &memberValue[T]{client: cl, value: value, stop: stop}
	return value
}

func (p *PerMember[T]) stopLocked(name string, v *memberValue[T]) {
	delete(p.states, name)
	if v.stop != nil {
		v.stop()
	}
}

var _ Registrant = (*PerMember[int])(nil)

func (p *PerMember[T]) ensure(name string, cl *Client) { p.Ensure(name, cl) }
