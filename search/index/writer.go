package index

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2"
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

// writer is the state of the goroutine that applies queued operations.
type writer struct {
	ix *Index
	// pending maps document ids to their fields, or to nil for a delete.
	pending map[string]*docFields
	// err is the first error since the last Flush.
	err error
}

// run is the writer goroutine: it gathers operations into pending, at most
// BatchSize documents, and applies them when the batch is full, when the
// oldest has waited FlushInterval, before a DeleteResource, on Flush and on
// Close.
func (ix *Index) run() {
	defer close(ix.stopped)
	w := &writer{ix: ix, pending: make(map[string]*docFields)}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	for {
		select {
		case o := <-ix.ops:
			w.handle(o)
			if len(w.pending) == 0 {
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
			w.apply()
		case <-ix.closing:
			for {
				select {
				case o := <-ix.ops:
					w.handle(o)
					continue
				default:
				}
				break
			}
			w.apply()
			return
		}
	}
}

// handle applies or gathers one operation.
func (w *writer) handle(o op) {
	switch o.kind {
	case opPut, opDelete:
		if _, ok := w.pending[o.id]; ok {
			w.ix.stats.coalesced.Add(1)
		}
		w.pending[o.id] = o.fields
		if len(w.pending) >= w.ix.opts.BatchSize {
			w.apply()
		}
	case opDeleteResource:
		w.apply()
		w.deleteResource(o.id)
	case opFlush:
		w.apply()
		o.done <- w.err
		w.err = nil
	}
}

// apply writes the pending operations as one bleve batch.
func (w *writer) apply() {
	if len(w.pending) == 0 {
		return
	}
	start := time.Now()
	b := w.ix.bleve.NewBatch()
	var puts, dels uint64
	for id, f := range w.pending {
		if f == nil {
			b.Delete(id)
			dels++
			continue
		}
		if err := b.IndexAdvanced(w.ix.buildDocument(id, f)); err != nil {
			w.fail(fmt.Errorf("index %s: %w", id, err))
			continue
		}
		puts++
	}
	clear(w.pending)
	if err := w.ix.bleve.Batch(b); err != nil {
		w.fail(fmt.Errorf("apply search index batch: %w", err))
		return
	}
	w.ix.stats.applied.Add(puts)
	w.ix.stats.deleted.Add(dels)
	w.ix.stats.batches.Add(1)
	w.ix.stats.lastBatch.Store(int64(time.Since(start)))
}

// deleteResource deletes every document whose fieldScopeResource term is
// term, in batches of BatchSize.
func (w *writer) deleteResource(term string) {
	ids, err := w.ix.idsWithTerm(fieldScopeResource, term)
	if err != nil {
		w.fail(fmt.Errorf("list documents of %s: %w", term, err))
		return
	}
	for len(ids) > 0 {
		n := min(len(ids), w.ix.opts.BatchSize)
		for _, id := range ids[:n] {
			w.pending[id] = nil
		}
		ids = ids[n:]
		w.apply()
	}
}

// fail records a write error.
func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.ix.stats.errors.Add(1)
	msg := err.Error()
	w.ix.stats.lastError.Store(&msg)
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
