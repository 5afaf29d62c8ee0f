package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// memberDuration is how long each member took to answer its part of a
// metrics request: where a slow list of the control plane waits.
var memberDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Namespace: "flotilla", Subsystem: "metrics_adapter", Name: "member_request_duration_seconds",
	Help:           "How long a member took to answer its part of a metrics.k8s.io or custom.metrics.k8s.io request, by cluster and result (success, error).",
	Buckets:        []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	StabilityLevel: metrics.ALPHA,
}, []string{"cluster", "result"})

func init() { legacyregistry.MustRegister(memberDuration) }

// answer is one member's part of a fan-out.
type answer[T any] struct {
	cluster string
	value   T
	err     error
}

// gather calls ask for every cluster concurrently, each under its own
// deadline of timeout, and returns the answers in cluster order. A member
// whose call has not returned by then counts as failed with a timeout even
// if ask ignores its context: the caller never waits longer than timeout.
func gather[T any](ctx context.Context, clusters []string, timeout time.Duration, ask func(ctx context.Context, cluster string) (T, error)) []answer[T] {
	out := make([]answer[T], len(clusters))
	if len(clusters) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type indexed struct {
		i int
		answer[T]
	}
	ch := make(chan indexed, len(clusters)) // buffered: late answers never block
	for i, c := range clusters {
		out[i] = answer[T]{cluster: c, err: fmt.Errorf("no answer within %s", timeout)}
		go func() {
			start := time.Now()
			v, err := ask(ctx, c)
			result := "success"
			if err != nil {
				result = "error"
			}
			memberDuration.WithLabelValues(c, result).Observe(time.Since(start).Seconds())
			ch <- indexed{i, answer[T]{cluster: c, value: v, err: err}}
		}()
	}
	for range clusters {
		select {
		case a := <-ch:
			out[a.i] = a.answer
		case <-ctx.Done():
			return out
		}
	}
	return out
}

// warnMissing adds one warning to the response naming the members whose
// answer is missing and why.
func warnMissing(ctx context.Context, failed map[string]error) {
	if len(failed) == 0 {
		return
	}
	names := make([]string, 0, len(failed))
	for c := range failed {
		names = append(names, c)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = fmt.Sprintf("%s (%v)", c, failed[c])
	}
	warning.AddWarning(ctx, "", "metrics of these clusters are missing: "+strings.Join(parts, "; "))
}

// mergeItems converts the items of every member's answer and marks each
// with its member. Members that failed are named in a warning; it fails
// only when every member asked failed.
func mergeItems[V, I any](ctx context.Context, answers []answer[[]V], convert func(*V, *I, conversion.Scope) error, meta func(*I) *metav1.ObjectMeta) ([]I, error) {
	n := 0
	for _, a := range answers {
		n += len(a.value)
	}
	out := make([]I, 0, n)
	failed := map[string]error{}
	for _, a := range answers {
		if a.err != nil {
			failed[a.cluster] = a.err
			continue
		}
		for i := range a.value {
			out = append(out, *new(I))
			item := &out[len(out)-1]
			if err := convert(&a.value[i], item, nil); err != nil {
				return nil, err
			}
			markSource(meta(item), a.cluster)
		}
	}
	if len(failed) == len(answers) && len(answers) > 0 {
		return nil, unavailable(failed)
	}
	warnMissing(ctx, failed)
	return out, nil
}

// firstFound converts the answer of the first member (in order) that has
// the object, marked with that member; nil when none has it. Members that
// failed otherwise than NotFound are named in a warning.
func firstFound[V, I any](ctx context.Context, answers []answer[*V], convert func(*V, *I, conversion.Scope) error, meta func(*I) *metav1.ObjectMeta) (*I, error) {
	failed := map[string]error{}
	defer warnMissing(ctx, failed)
	for _, a := range answers {
		if a.err != nil {
			if !apierrors.IsNotFound(a.err) {
				failed[a.cluster] = a.err
			}
			continue
		}
		item := new(I)
		if err := convert(a.value, item, nil); err != nil {
			return nil, err
		}
		markSource(meta(item), a.cluster)
		return item, nil
	}
	return nil, nil
}
