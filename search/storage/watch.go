package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/watchguard"
)

// maxWatchTimeout bounds a watch; clients watch again from the last
// resourceVersion they saw.
const maxWatchTimeout = 30 * time.Minute

// clusterEvent is a change of one store.
type clusterEvent struct {
	store *searchcache.Store
	ev    searchcache.Event
	// initialEnd marks the end of a store's initial events.
	initialEnd bool
}

// watch streams the changes of every readable store from the request's
// multi-cluster resourceVersion; each object's resourceVersion is the
// cumulative multi-cluster one, so a client resumes from any event. It
// ends when the set of cached clusters changes (the client watches again).
func (r *Reader) watch(w http.ResponseWriter, req *http.Request, q query, changed <-chan struct{}) error {
	rvs, err := ParseMultiRV(q.opts.ResourceVersion)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	initial := q.opts.SendInitialEvents != nil && *q.opts.SendInitialEvents
	cumulative := MultiRV{}
	watchers := make([]*searchcache.Watcher, 0, len(q.stores))
	defer func() {
		for _, wt := range watchers {
			wt.Stop()
		}
	}()
	for _, s := range q.stores {
		from := rvs.Get(s.Cluster)
		all := initial || from == "" || from == anyRV
		n, _ := strconv.ParseUint(from, 10, 64)
		wt, err := s.Watch(n, all)
		if errors.Is(err, searchcache.ErrTooOld) {
			return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s in cluster %s", from, s.Cluster))
		}
		if err != nil {
			return err
		}
		watchers = append(watchers, wt)
		if all {
			cumulative[s.Cluster] = fmt.Sprint(s.RV())
		} else {
			cumulative[s.Cluster] = from
		}
	}
	timeout := maxWatchTimeout
	if q.opts.TimeoutSeconds != nil && *q.opts.TimeoutSeconds > 0 {
		timeout = min(timeout, time.Duration(*q.opts.TimeoutSeconds)*time.Second)
	}
	ctx := req.Context()
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done) // first: the forwarding goroutines may be blocked sending
		wg.Wait()
	}()
	events := make(chan clusterEvent, 256)
	ended := make(chan *searchcache.Store, len(watchers))
	for i, wt := range watchers {
		s := q.stores[i]
		wg.Go(func() {
			send := func(ce clusterEvent) bool {
				select {
				case events <- ce:
					return true
				case <-done:
					return false
				}
			}
			for _, ev := range wt.Initial {
				if !send(clusterEvent{store: s, ev: ev}) {
					return
				}
			}
			if !send(clusterEvent{store: s, initialEnd: true}) {
				return
			}
			for {
				select {
				case ev := <-wt.C():
					if !send(clusterEvent{store: s, ev: ev}) {
						return
					}
				case <-wt.Done():
					if wt.Behind() {
						ended <- s
					} else {
						ended <- nil
					}
					return
				case <-done:
					return
				}
			}
		})
	}

	// A client that stops reading is cut off (watchguard.StallTimeout)
	// rather than holding this handler and its buffers.
	guarded := watchguard.Wrap(w, watchguard.APISearch, r.StallTimeout)
	defer guarded.Stop()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher := http.Flusher(guarded)
	flusher.Flush()
	enc := &eventEncoder{r: r, req: req, q: q, w: guarded}
	pendingInitial := len(watchers)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			return nil
		case <-changed:
			return nil
		case s := <-ended:
			if s != nil {
				// The store closed the watch: its reader fell behind.
				// Say so, as a 429 a client backs off and watches again
				// on (client-go resumes from its last resourceVersion).
				watchguard.CountCutOff(watchguard.APISearch, watchguard.ReasonBehind)
				_ = enc.status(apierrors.NewTooManyRequests(fmt.Sprintf(
					"the watch fell more than %d changes behind in cluster %s and was closed; watch again from the last resourceVersion received",
					searchcache.WatcherBuffer, s.Cluster), 1))
			}
			return nil
		case ce := <-events:
			if err := r.deliver(enc, ce, q, cumulative, &pendingInitial, initial); err != nil {
				return nil // the client went away
			}
		}
		if len(events) == 0 {
			flusher.Flush()
		}
	}
}

// deliver writes one change (or, at the end of the stores' initial
// events, the bookmark a client asking for them waits for).
func (r *Reader) deliver(enc *eventEncoder, ce clusterEvent, q query, cumulative MultiRV, pendingInitial *int, initial bool) error {
	if ce.initialEnd {
		*pendingInitial--
		if *pendingInitial == 0 && initial && q.opts.AllowWatchBookmarks {
			return enc.bookmark(cumulative.String())
		}
		return nil
	}
	if n, _ := strconv.ParseUint(cumulative[ce.store.Cluster], 10, 64); ce.ev.RV > n {
		cumulative[ce.store.Cluster] = strconv.FormatUint(ce.ev.RV, 10)
	}
	if !q.keyFilter(ce.store)(ce.ev.Key) {
		return nil
	}
	return enc.event(ce, cumulative.String())
}

// eventEncoder writes watch events.
type eventEncoder struct {
	r   *Reader
	req *http.Request
	q   query
	w   http.ResponseWriter
	buf []byte // a decompressed object
	out []byte // an encoded event
}

func (e *eventEncoder) event(ce clusterEvent, rv string) error {
	raw, err := ce.store.Decode(e.buf[:0], ce.ev.Data())
	if err != nil {
		return nil // skip an undecodable object rather than end the watch
	}
	e.buf = raw
	if ok, err := labelsMatch(e.q.opts.LabelSelector, raw); err != nil || !ok {
		return nil
	}
	obj, err := withResourceVersion(raw, rv)
	if err != nil {
		return nil
	}
	if e.q.format == formatTable {
		gvk := e.q.Resource.GroupVersion().WithKind(ce.store.Kind)
		t, err := e.r.Table.Convert(e.req.Context(), gvk, [][]byte{obj}, &metav1.TableOptions{IncludeObject: metav1.IncludeObjectPolicy(e.q.Query.Get("includeObject"))}, metav1.ListMeta{ResourceVersion: rv})
		if err != nil {
			return nil
		}
		t.APIVersion, t.Kind = e.q.table.GroupVersion().String(), "Table"
		if obj, err = json.Marshal(t); err != nil {
			return nil
		}
	}
	return e.write(ce.ev.Type, obj)
}

// bookmark tells a client asking for initial events that they are all sent.
func (e *eventEncoder) bookmark(rv string) error {
	kind := ""
	if len(e.q.stores) > 0 {
		kind = e.q.stores[0].Kind
	}
	obj, err := json.Marshal(map[string]any{
		"kind": kind, "apiVersion": apiVersion(e.q.Resource.GroupVersion()),
		"metadata": map[string]any{"resourceVersion": rv, "annotations": map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
	})
	if err != nil {
		return err
	}
	return e.write(watch.Bookmark, obj)
}

// status ends the watch with an ERROR event carrying err's Status.
func (e *eventEncoder) status(err apierrors.APIStatus) error {
	st := err.Status()
	st.APIVersion, st.Kind = "v1", "Status"
	obj, merr := json.Marshal(st)
	if merr != nil {
		return merr
	}
	return e.write(watch.Error, obj)
}

func (e *eventEncoder) write(typ watch.EventType, obj []byte) error {
	e.out = append(append(append(append(e.out[:0], `{"type":"`...), typ...), `","object":`...), obj...)
	e.out = append(e.out, "}\n"...)
	_, err := e.w.Write(e.out)
	return err
}
