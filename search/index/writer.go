package index

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
)

// opKind is the kind of a queued operation.
type opKind uint8

const (
	opPut opKind = iota
	opDelete
	opDeleteResource
	opFlush
)

// op is one queued operation. For opDeleteResource, id is the
// fieldScopeResource term.
type op struct {
	kind   opKind
	id     string
	fields *docFields
	done   chan error
}

// enqueue queues o, blocking while the queue is full. It reports false once
// the index is closing.
func (ix *Index) enqueue(o op) bool {
	select {
	case <-ix.closing:
		return false
	default:
	}
	select {
	case ix.ops <- o:
		return true
	case <-ix.closing:
		return false
	}
}

// The writer is two goroutines. The gatherer (run) takes operations from
// the queue, coalesces writes of the same id, and turns each batch into
// analyzed bleve documents; the applier (apply) hands batches to bleve one at
// a time, in order. bleve builds a segment on one core, so analyzing the
// next batch while it does keeps both cores busy during a bulk load.

// step is one unit of work for the applier.
type step struct {
	batch    []*document.Document // documents to index
	deletes  []string             // ids to delete
	resource string               // a fieldScopeResource term to delete
	done     chan error           // a Flush waiting for the applier
}

// gatherer is the state of run.
type gatherer struct {
	ix *Index
	// pending maps document ids to their fields, or to nil for a delete.
	pending map[string]*docFields
	steps   chan<- step
}

// run is the gatherer: it collects operations into pending, at most
// BatchSize documents, and passes them on when the batch is full, when the
// oldest has waited FlushInterval, and before a DeleteResource, a Flush or
// Close.
func (ix *Index) run() {
	steps := make(chan step, 1)
	applied := make(chan struct{})
	go ix.apply(steps, applied)
	defer func() {
		close(steps)
		<-applied
		close(ix.stopped)
	}()
	g := &gatherer{ix: ix, pending: make(map[string]*docFields), steps: steps}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	for {
		select {
		case o := <-ix.ops:
			g.handle(o)
			if len(g.pending) == 0 {
				if armed {
					timer.Stop()
					armed = false
				}
			} else if !armed {
				timer.Reset(ix.opts.FlushInterval)
				armed = true
			}
		case <-timer.C:
			armed = false
			g.send()
		case <-ix.closing:
			for {
				select {
				case o := <-ix.ops:
					g.handle(o)
					continue
				default:
				}
				break
			}
			g.send()
			return
		}
	}
}

// handle gathers one operation.
func (g *gatherer) handle(o op) {
	switch o.kind {
	case opPut, opDelete:
		if _, ok := g.pending[o.id]; ok {
			g.ix.stats.coalesced.Add(1)
		}
		g.pending[o.id] = o.fields
		if len(g.pending) >= g.ix.opts.BatchSize {
			g.send()
		}
	case opDeleteResource:
		g.send()
		g.steps <- step{resource: o.id}
	case opFlush:
		g.send()
		g.steps <- step{done: o.done}
	}
}

// send analyzes the pending documents and passes them to the applier.
func (g *gatherer) send() {
	if len(g.pending) == 0 {
		return
	}
	var st step
	for id, f := range g.pending {
		if f == nil {
			st.deletes = append(st.deletes, id)
		} else {
			st.batch = append(st.batch, g.ix.buildDocument(id, f))
		}
	}
	clear(g.pending)
	analyze(st.batch)
	g.steps <- st
}

// analyze analyzes the fields of docs on every core.
func analyze(docs []*document.Document) {
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(docs); i += workers {
				for _, f := range docs[i].Fields {
					f.Analyze()
				}
			}
		}()
	}
	wg.Wait()
}

// applier is the state of apply.
type applier struct {
	ix *Index
	// err is the first error since the last Flush.
	err error
}

// apply is the applier: it applies steps in order until steps is closed.
func (ix *Index) apply(steps <-chan step, done chan<- struct{}) {
	defer close(done)
	a := &applier{ix: ix}
	for st := range steps {
		switch {
		case st.done != nil:
			st.done <- a.err
			a.err = nil
		case st.resource != "":
			a.deleteResource(st.resource)
		default:
			a.write(st.batch, st.deletes)
		}
	}
}

// write applies one bleve batch.
func (a *applier) write(docs []*document.Document, deletes []string) {
	start := time.Now()
	b := a.ix.bleve.NewBatch()
	var puts uint64
	for _, d := range docs {
		if err := b.IndexAdvanced(d); err != nil {
			a.fail(fmt.Errorf("index %s: %w", d.ID(), err))
			continue
		}
		puts++
	}
	for _, id := range deletes {
		b.Delete(id)
	}
	if err := a.ix.bleve.Batch(b); err != nil {
		a.fail(fmt.Errorf("apply search index batch: %w", err))
		return
	}
	a.ix.stats.applied.Add(puts)
	a.ix.stats.deleted.Add(uint64(len(deletes)))
	a.ix.stats.batches.Add(1)
	a.ix.stats.lastBatch.Store(int64(time.Since(start)))
}

// deleteResource deletes every document whose fieldScopeResource term is
// term, in batches of BatchSize.
func (a *applier) deleteResource(term string) {
	ids, err := a.ix.idsWithTerm(fieldScopeResource, term)
	if err != nil {
		a.fail(fmt.Errorf("list documents of %s: %w", term, err))
		return
	}
	for len(ids) > 0 {
		n := min(len(ids), a.ix.opts.BatchSize)
		a.write(nil, ids[:n])
		ids = ids[n:]
	}
}

// fail records a write error.
func (a *applier) fail(err error) {
	if a.err == nil {
		a.err = err
	}
	a.ix.stats.errors.Add(1)
	msg := err.Error()
	a.ix.stats.lastError.Store(&msg)
}

// idsWithTerm returns the ids of the documents that have term in field.
func (ix *Index) idsWithTerm(field, term string) ([]string, error) {
	adv, err := ix.bleve.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, false, false, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tfr.Close() }()
	var ids []string
	for {
		d, err := tfr.Next(nil)
		if err != nil {
			return nil, err
		}
		if d == nil {
			return ids, nil
		}
		id, err := r.ExternalID(d.ID)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
}

// errIndexClosed tells whether err is bleve's closed-index error.
func errIndexClosed(err error) bool {
	return errors.Is(err, bleve.ErrorIndexClosed)
}
