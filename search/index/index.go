package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
)

// ErrClosed is returned by Search and Flush once the index is closed.
var ErrClosed = errors.New("search index is closed")

const (
	defaultBatchSize     = 1000
	defaultFlushInterval = 200 * time.Millisecond
	// queueSize bounds the writes waiting for the writer; Put blocks when
	// it is full.
	queueSize = 10000
	// keywordAnalyzer is the query-side analyzer of every keyword field.
	keywordAnalyzer = "flotilla_keyword_lower"
	// metaFile marks a directory as a bleve index.
	metaFile = "index_meta.json"
)

// Key identifies one cached object.
type Key struct {
	// Cluster is the member cluster the object comes from.
	Cluster string
	// Group, Version, Resource and Kind name its type, e.g. "", "v1",
	// "pods", "Pod".
	Group, Version, Resource, Kind string
	// Namespace is empty for cluster-scoped objects.
	Namespace, Name string
}

// ID returns the object's document id, cluster/group/resource/namespace/name
// with "%" and "/" escaped in each part, so it is unambiguous even when parts
// are empty. Version and kind are not part of it: the same object served at
// another version is the same document.
func (k Key) ID() string {
	return joinID(k.Cluster, k.Group, k.Resource, k.Namespace, k.Name)
}

// Options configure Open.
type Options struct {
	// Dir is where the index lives on disk. Open creates Dir if missing and
	// deletes an index already in it, since the cache is rebuilt from the
	// members on every start; it refuses a non-empty Dir that holds no
	// bleve index rather than delete it.
	//
	// "" means no lasting location: the index lives in a private temporary
	// directory (under os.TempDir) that Close deletes. It is not a bleve
	// in-memory index on purpose. bleve's in-memory scorch never merges
	// segments: each batch adds one, which goes only once all its documents
	// are replaced or deleted, so a watch-fed index degrades without bound
	// (measured: 10,000 pods with 5 pod updates per 200ms flush reach 3,375
	// segments, 1.3 GB of heap and 60ms queries after 4,000 flushes; on disk,
	// 3 segments, 2 MB of heap, 16 MB of files and 3ms). bleve's other
	// in-memory index, upsidedown on gtreap, indexes about 20 times slower,
	// takes 17 times the heap per document and answers large queries 30 to
	// 300 times slower. On disk, scorch merges segments in the background
	// and keeps them in memory-mapped files, outside the Go heap; where
	// os.TempDir is a tmpfs, those files take memory, so set Dir to a
	// disk-backed volume to keep them out of it.
	Dir string
	// BatchSize is the maximum number of documents per bleve batch
	// (default 1000).
	BatchSize int
	// FlushInterval is how long queued writes may wait before they are
	// applied (default 200ms).
	FlushInterval time.Duration
}

// Index is the full-text index of cached member objects. Its methods are safe
// for concurrent use.
type Index struct {
	bleve        bleve.Index
	textAnalyzer analysis.Analyzer
	opts         Options
	// tempDir is the directory Open made for an index without Dir, which
	// Close deletes.
	tempDir string

	ops       chan op
	closing   chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error
	// closeMu orders Close after Stats' reads of bleve's statistics, which
	// are not safe on a closed index; closed tells Stats not to read them.
	closeMu sync.RWMutex
	closed  bool

	// types maps cluster/group/resource to the version and kind last Put,
	// to rebuild whole Keys from document ids.
	typesMu sync.RWMutex
	types   map[resourceKey]typeInfo

	stats writerStats
}

type resourceKey struct{ cluster, group, resource string }

type typeInfo struct{ version, kind string }

// Stats describe the index and its writer.
type Stats struct {
	// DocCount is the number of documents in the index.
	DocCount uint64
	// Applied is the number of documents written since Open.
	Applied uint64
	// Deleted is the number of deletes applied since Open, including those
	// of DeleteResource.
	Deleted uint64
	// Coalesced is the number of queued writes replaced by a later write of
	// the same key before they were applied.
	Coalesced uint64
	// Batches is the number of bleve batches applied.
	Batches uint64
	// Queued is the number of operations waiting in the queue.
	Queued int
	// Errors is the number of failed batches; LastError describes the last.
	Errors    uint64
	LastError string
	// LastBatch is how long the last batch took to apply.
	LastBatch time.Duration
	// Segments is the number of index segments searches go through.
	Segments uint64
	// DiskBytes is the size of the index files, which are memory-mapped.
	DiskBytes uint64
}

// writerStats are updated by the writer and read by Stats.
type writerStats struct {
	applied, deleted, coalesced, batches, errors atomic.Uint64
	lastBatch                                    atomic.Int64
	lastError                                    atomic.Pointer[string]
}

// Open creates an empty index in opts.Dir, or in a temporary directory, and
// starts its writer.
func Open(opts Options) (*Index, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = defaultFlushInterval
	}
	m, err := newMapping()
	if err != nil {
		return nil, err
	}
	textAnalyzer := m.AnalyzerNamed(standard.Name)
	if textAnalyzer == nil {
		return nil, errors.New("create search index: no standard analyzer")
	}
	dir, tempDir := opts.Dir, ""
	if dir == "" {
		if tempDir, err = os.MkdirTemp("", "flotilla-search-index-"); err != nil {
			return nil, fmt.Errorf("create search index directory: %w", err)
		}
		dir = tempDir
	} else if err = clearDir(dir); err != nil {
		return nil, err
	}
	b, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, map[string]interface{}{
		// The index is rebuilt on start: a batch need not wait for the
		// disk to be searchable.
		"unsafe_batch": true,
	})
	if err != nil {
		if tempDir != "" {
			_ = os.RemoveAll(tempDir)
		}
		return nil, fmt.Errorf("create search index: %w", err)
	}
	ix := &Index{
		bleve:        b,
		textAnalyzer: textAnalyzer,
		opts:         opts,
		tempDir:      tempDir,
		ops:          make(chan op, queueSize),
		closing:      make(chan struct{}),
		stopped:      make(chan struct{}),
		types:        map[resourceKey]typeInfo{},
	}
	go ix.run()
	return ix, nil
}

// newMapping returns the mapping the query side uses to analyze terms: the
// text field with the standard analyzer, every other field (including the
// per-key label and annotation fields) with the lower-casing keyword
// analyzer. Documents bypass the mapping (see buildDocument).
func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	err := m.AddCustomAnalyzer(keywordAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     single.Name,
		"token_filters": []interface{}{lowercase.Name},
	})
	if err != nil {
		return nil, fmt.Errorf("define keyword analyzer: %w", err)
	}
	m.DefaultAnalyzer = keywordAnalyzer
	m.DefaultField = fieldText
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	dm := bleve.NewDocumentStaticMapping()
	text := bleve.NewTextFieldMapping()
	text.Analyzer = standard.Name
	text.Store = false
	text.IncludeInAll = false
	text.DocValues = false
	dm.AddFieldMappingsAt(fieldText, text)
	m.DefaultMapping = dm
	return m, nil
}

// clearDir makes sure dir is missing or empty, deleting the bleve index in
// it. It deletes the directory's entries, not the directory, which may be a
// mount point.
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read search index directory: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, metaFile)); err != nil {
		return fmt.Errorf("search index directory %s is not empty and holds no bleve index: %w", dir, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("delete old search index: %w", err)
		}
	}
	return nil
}

// Put queues the indexing of obj, the object as served by the member, under
// k. It extracts the fields at once and does not retain obj. It blocks only
// while the queue is full; after Close it does nothing.
func (ix *Index) Put(k Key, obj map[string]interface{}) {
	ix.noteType(k)
	ix.enqueue(op{kind: opPut, id: k.ID(), fields: extract(k, obj)})
}

// Delete queues the removal of the object k.
func (ix *Index) Delete(k Key) {
	ix.enqueue(op{kind: opDelete, id: k.ID()})
}

// DeleteResource queues the removal of every object of one resource of one
// cluster, e.g. when the cluster leaves or its ResourceRegistry is removed.
// Puts queued before it are removed too; Puts queued after it are kept.
func (ix *Index) DeleteResource(cluster, group, resource string) {
	ix.enqueue(op{kind: opDeleteResource, id: scopeResourceTerm(cluster, group, resource)})
}

// Flush blocks until every write queued before the call is applied and
// searchable, and returns the first error of the batches applied since the
// previous Flush.
func (ix *Index) Flush() error {
	done := make(chan error, 1)
	if !ix.enqueue(op{kind: opFlush, done: done}) {
		return ErrClosed
	}
	select {
	case err := <-done:
		return err
	case <-ix.stopped:
		select {
		case err := <-done:
			return err
		default:
			return ErrClosed
		}
	}
}

// Close applies the queued writes, stops the writer and closes the bleve
// index. Later calls return the first call's result.
func (ix *Index) Close() error {
	ix.closeOnce.Do(func() {
		close(ix.closing)
		<-ix.stopped
		ix.closeMu.Lock()
		defer ix.closeMu.Unlock()
		ix.closed = true
		if err := ix.bleve.Close(); err != nil {
			ix.closeErr = fmt.Errorf("close search index: %w", err)
		}
		if ix.tempDir != "" {
			if err := os.RemoveAll(ix.tempDir); err != nil && ix.closeErr == nil {
				ix.closeErr = fmt.Errorf("delete search index directory: %w", err)
			}
		}
	})
	return ix.closeErr
}

// Stats returns counters of the index and its writer.
func (ix *Index) Stats() Stats {
	s := Stats{
		Applied:   ix.stats.applied.Load(),
		Deleted:   ix.stats.deleted.Load(),
		Coalesced: ix.stats.coalesced.Load(),
		Batches:   ix.stats.batches.Load(),
		Errors:    ix.stats.errors.Load(),
		Queued:    len(ix.ops),
		LastBatch: time.Duration(ix.stats.lastBatch.Load()),
	}
	if e := ix.stats.lastError.Load(); e != nil {
		s.LastError = *e
	}
	ix.closeMu.RLock()
	defer ix.closeMu.RUnlock()
	if ix.closed {
		return s
	}
	if n, err := ix.bleve.DocCount(); err == nil {
		s.DocCount = n
	}
	m, _ := ix.bleve.StatsMap()["index"].(map[string]interface{})
	mem, _ := m["TotMemorySegmentsAtRoot"].(uint64)
	file, _ := m["TotFileSegmentsAtRoot"].(uint64)
	s.Segments = mem + file
	s.DiskBytes, _ = m["CurOnDiskBytes"].(uint64)
	return s
}

// noteType records the version and kind of k's resource.
func (ix *Index) noteType(k Key) {
	rk := resourceKey{k.Cluster, k.Group, k.Resource}
	ti := typeInfo{k.Version, k.Kind}
	ix.typesMu.RLock()
	cur, ok := ix.types[rk]
	ix.typesMu.RUnlock()
	if ok && cur == ti {
		return
	}
	ix.typesMu.Lock()
	ix.types[rk] = ti
	ix.typesMu.Unlock()
}

// keyForID rebuilds the Key of a document id.
func (ix *Index) keyForID(id string) (Key, bool) {
	parts, ok := splitID(id, 5)
	if !ok {
		return Key{}, false
	}
	k := Key{Cluster: parts[0], Group: parts[1], Resource: parts[2], Namespace: parts[3], Name: parts[4]}
	ix.typesMu.RLock()
	ti := ix.types[resourceKey{k.Cluster, k.Group, k.Resource}]
	ix.typesMu.RUnlock()
	k.Version, k.Kind = ti.version, ti.kind
	return k, true
}

// scopeResourceTerm is the exact term of fieldScopeResource.
func scopeResourceTerm(cluster, group, resource string) string {
	return joinID(cluster, group, resource)
}

// scopeNamespaceTerm is the exact term of fieldScopeNamespace.
func scopeNamespaceTerm(cluster, group, resource, namespace string) string {
	return joinID(cluster, group, resource, namespace)
}

// idEscaper escapes the separator and the escape character of ids.
var idEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// idUnescaper reverses idEscaper.
var idUnescaper = strings.NewReplacer("%25", "%", "%2F", "/")

// joinID joins parts with "/", escaping each.
func joinID(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('/')
		}
		if strings.ContainsAny(p, "%/") {
			p = idEscaper.Replace(p)
		}
		b.WriteString(p)
	}
	return b.String()
}

// splitID reverses joinID for n parts.
func splitID(id string, n int) ([]string, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != n {
		return nil, false
	}
	for i, p := range parts {
		if strings.IndexByte(p, '%') >= 0 {
			parts[i] = idUnescaper.Replace(p)
		}
	}
	return parts, true
}
