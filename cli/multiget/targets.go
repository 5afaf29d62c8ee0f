package multiget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
)

// DefaultMemberTimeout bounds the reading of each cluster when the
// command line does not say otherwise: long enough for a list of
// thousands of objects through the proxy, short enough that a member that
// does not answer does not hold the others' output for long.
const DefaultMemberTimeout = 30 * time.Second

// Target is one cluster a command reads: the control plane or a member.
type Target struct {
	// Cluster is the member's name, or ControlPlaneName.
	Cluster      string
	ControlPlane bool
	// Getter reaches the cluster: the control plane's own, or the member's
	// through clusters/{name}/proxy as the caller.
	Getter genericclioptions.RESTClientGetter
}

// ListClusters lists the names of the control plane's member clusters.
type ListClusters func(ctx context.Context) ([]string, error)

// Selection is where a command reads, as the command line says it.
type Selection struct {
	// Scope is --operation-scope and ScopeSet whether it was given.
	Scope    OperationScope
	ScopeSet bool
	// Clusters are the -C member clusters.
	Clusters []string
	// Timeout bounds each cluster's reading (see ReadAll); with
	// RequestTimeout each HTTP request of a cluster is bounded by it too.
	// Watches must not set RequestTimeout: it would end the stream.
	Timeout        time.Duration
	RequestTimeout bool
}

// Resolve lists the member clusters when the selection needs them and
// returns the targets: the control plane first, then the members. A
// caller who may not list clusters can still name them with -C.
func Resolve(ctx context.Context, cp genericclioptions.RESTClientGetter, list ListClusters, sel Selection) ([]Target, error) {
	var registered []string
	known := false
	if sel.Scope != clusterproxy.ScopeKarmada || len(sel.Clusters) > 0 {
		names, err := list(ctx)
		switch {
		case err == nil:
			registered, known = names, true
		case len(sel.Clusters) == 0:
			return nil, fmt.Errorf("listing the member clusters: %w", err)
		}
	}
	plan, err := PlanTargets(sel.Scope, sel.ScopeSet, sel.Clusters, registered, known)
	if err != nil {
		return nil, err
	}
	base := cp
	if sel.RequestTimeout && sel.Timeout > 0 {
		base = timeoutGetter{RESTClientGetter: cp, timeout: sel.Timeout}
	}
	var targets []Target
	if plan.ControlPlane {
		targets = append(targets, Target{Cluster: ControlPlaneName, ControlPlane: true, Getter: base})
	}
	for _, m := range plan.Members {
		targets = append(targets, Target{Cluster: m, Getter: clusterproxy.NewGetter(base, m)})
	}
	return targets, nil
}

// timeoutGetter bounds every request of the clients built from it.
type timeoutGetter struct {
	genericclioptions.RESTClientGetter
	timeout time.Duration
}

func (g timeoutGetter) ToRESTConfig() (*rest.Config, error) {
	c, err := g.RESTClientGetter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	if c.Timeout == 0 || c.Timeout > g.timeout {
		c = rest.CopyConfig(c)
		c.Timeout = g.timeout
	}
	return c, nil
}

// Probe asks a member for its version through the proxy
// (clusterproxy.Reach), so that an unreachable or forbidden member is
// reported with the control plane's own error.
func Probe(ctx context.Context, t Target) error {
	if t.ControlPlane {
		return nil
	}
	cfg, err := t.Getter.ToRESTConfig()
	if err != nil {
		return err
	}
	return clusterproxy.Reach(ctx, cfg)
}

// Outcome is what reading one target gave.
type Outcome[T any] struct {
	Target Target
	Value  T
	Err    error
}

// timeoutError is the error of a target that did not answer in time.
type timeoutError struct{ after time.Duration }

func (e timeoutError) Error() string {
	return fmt.Sprintf("no answer within %s (--member-timeout)", e.after)
}

// ReadAll reads every target concurrently and returns the outcomes in
// the targets' order. A target whose read has not returned when timeout
// (if > 0) has passed, or when ctx ends, gets an error and its late
// result is dropped; its goroutine is left to end with its own request
// timeout or with the process, which a command line tool can afford.
func ReadAll[T any](ctx context.Context, targets []Target, timeout time.Duration, read func(context.Context, Target) (T, error)) []Outcome[T] {
	out := make([]Outcome[T], len(targets))
	done := make([]bool, len(targets))
	var mu sync.Mutex
	finished := make(chan struct{}, len(targets))
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, t := range targets {
		out[i].Target = t
		go func() {
			v, err := read(readCtx, t)
			mu.Lock()
			if !done[i] {
				out[i].Value, out[i].Err, done[i] = v, err, true
			}
			mu.Unlock()
			finished <- struct{}{}
		}()
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	var late error
	for remaining := len(targets); remaining > 0 && late == nil; {
		select {
		case <-finished:
			remaining--
		case <-deadline:
			late = timeoutError{after: timeout}
		case <-ctx.Done():
			late = ctx.Err()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range out {
		if !done[i] {
			out[i].Err, done[i] = late, true
		}
	}
	return out
}

// Reason says why a cluster could not be read, in one line: the API's
// reason and message (Forbidden: ..., NotFound: ...) when the error is an
// API status, each error of an aggregate in turn.
func Reason(err error) string {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) && len(agg.Errors()) > 0 {
		parts := make([]string, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			parts = append(parts, Reason(e))
		}
		return strings.Join(parts, "; ")
	}
	if status, ok := err.(apierrors.APIStatus); ok || errors.As(err, &status) {
		s := status.Status()
		if s.Reason != "" && s.Message != "" {
			return fmt.Sprintf("%s: %s", s.Reason, s.Message)
		}
	}
	return err.Error()
}

// Warn prints karmadactl-style the cluster a command skipped, and why.
func Warn(w io.Writer, cluster string, err error) {
	fmt.Fprintf(w, "warning: cluster %s skipped: %s\n", cluster, Reason(err))
}

// result is a command's outcome over n targets whose reads failed with
// errs: the one target's error, or an error when none of several could be
// read (a member skipped among several was warned about).
func result(n int, errs []error) error {
	switch {
	case n == 1:
		return errors.Join(errs...)
	case len(errs) == n:
		return fmt.Errorf("none of the %d clusters could be read", n)
	}
	return nil
}
