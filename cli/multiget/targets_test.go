package multiget

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func targetsNamed(names ...string) []Target {
	out := make([]Target, len(names))
	for i, n := range names {
		out[i] = Target{Cluster: n}
	}
	return out
}

// TestReadAll: outcomes keep the targets' order whatever order the reads
// end in; a read past the deadline is an error naming the flag, and its
// late value is dropped.
func TestReadAll(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	boom := errors.New("boom")
	start := time.Now()
	out := ReadAll(t.Context(), targetsNamed("slow", "fast", "failing", "stuck"), 300*time.Millisecond, func(ctx context.Context, tg Target) (string, error) {
		switch tg.Cluster {
		case "slow":
			time.Sleep(50 * time.Millisecond)
		case "failing":
			return "partial", boom
		case "stuck":
			<-release
			return "late", nil
		}
		return "rows of " + tg.Cluster, nil
	})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("ReadAll took %s, want about the 300ms deadline", elapsed)
	}
	want := []struct{ cluster, value, err string }{
		{"slow", "rows of slow", ""},
		{"fast", "rows of fast", ""},
		{"failing", "partial", "boom"},
		{"stuck", "", "no answer within 300ms (--member-timeout)"},
	}
	for i, w := range want {
		got := out[i]
		errText := ""
		if got.Err != nil {
			errText = got.Err.Error()
		}
		if got.Target.Cluster != w.cluster || got.Value != w.value || errText != w.err {
			t.Errorf("outcome %d = %s %q %q, want %s %q %q", i, got.Target.Cluster, got.Value, errText, w.cluster, w.value, w.err)
		}
	}
}

func TestReadAllWithoutDeadlineWaits(t *testing.T) {
	t.Parallel()
	out := ReadAll(t.Context(), targetsNamed("a", "b"), 0, func(_ context.Context, tg Target) (int, error) {
		time.Sleep(20 * time.Millisecond)
		return len(tg.Cluster), nil
	})
	if out[0].Err != nil || out[1].Err != nil || out[0].Value != 1 {
		t.Errorf("outcomes %+v, want both read", out)
	}
}

func TestReadAllCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := ReadAll(ctx, targetsNamed("a"), time.Hour, func(ctx context.Context, _ Target) (int, error) {
		<-ctx.Done() // the read sees the cancellation too
		time.Sleep(10 * time.Millisecond)
		return 1, nil
	})
	if !errors.Is(out[0].Err, context.Canceled) {
		t.Errorf("outcome %+v, want context.Canceled", out[0])
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters/proxy"}, "member2", errors.New(`User "u" cannot get resource "clusters/proxy"`))
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{forbidden, `Forbidden: clusters/proxy.cluster.karmada.io "member2" is forbidden: User "u" cannot get resource "clusters/proxy"`},
		{utilerrors.NewAggregate([]error{notFound}), `NotFound: deployments.apps "web" not found`},
		{utilerrors.NewAggregate([]error{notFound, errors.New("x")}), `NotFound: deployments.apps "web" not found; x`},
		{timeoutError{after: time.Second}, "no answer within 1s (--member-timeout)"},
		{errors.New("dial tcp: connection refused"), "dial tcp: connection refused"},
	} {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	var b strings.Builder
	Warn(&b, "member2", forbidden)
	if !strings.HasPrefix(b.String(), "warning: cluster member2 skipped: Forbidden: ") {
		t.Errorf("warning %q", b.String())
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	cp := genericclioptions.NewConfigFlags(false)
	registered := func(context.Context) ([]string, error) { return []string{"member2", "member1"}, nil }
	forbidden := func(context.Context) ([]string, error) {
		return nil, apierrors.NewForbidden(schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters"}, "", errors.New("no"))
	}
	unused := func(context.Context) ([]string, error) {
		return nil, errors.New("the clusters were listed for the control plane alone")
	}
	for _, tc := range []struct {
		name    string
		list    ListClusters
		sel     Selection
		want    []string
		wantErr string
	}{
		{name: "control plane: no listing", list: unused, sel: Selection{Scope: clusterproxy.ScopeKarmada}, want: []string{"Karmada*"}},
		{name: "all", list: registered, sel: Selection{Scope: clusterproxy.ScopeAll, ScopeSet: true}, want: []string{"Karmada*", "member1", "member2"}},
		{name: "not listable, -C given", list: forbidden, sel: Selection{Scope: clusterproxy.ScopeMembers, ScopeSet: true, Clusters: []string{"member2"}}, want: []string{"member2"}},
		{name: "not listable, no -C", list: forbidden, sel: Selection{Scope: clusterproxy.ScopeMembers, ScopeSet: true}, wantErr: "listing the member clusters: clusters.cluster.karmada.io is forbidden"},
	} {
		targets, err := Resolve(t.Context(), cp, tc.list, tc.sel)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		var got []string
		for _, tg := range targets {
			n := tg.Cluster
			if tg.ControlPlane {
				n += "*"
			}
			got = append(got, n)
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: targets %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestTimeoutGetter(t *testing.T) {
	t.Parallel()
	flags := genericclioptions.NewConfigFlags(false)
	host, timeout := "https://cp:6443", ""
	flags.APIServer, flags.Timeout = &host, &timeout
	for _, tc := range []struct {
		flag string
		want time.Duration
	}{
		{"0", 5 * time.Second},  // no --request-timeout: the member timeout
		{"1s", time.Second},     // a shorter --request-timeout stays
		{"1m", 5 * time.Second}, // a longer one is bounded
	} {
		timeout = tc.flag
		cfg, err := timeoutGetter{RESTClientGetter: flags, timeout: 5 * time.Second}.ToRESTConfig()
		if err != nil || cfg.Timeout != tc.want {
			t.Errorf("--request-timeout=%s: %v (%v), want %v", tc.flag, cfg.Timeout, err, tc.want)
		}
	}
}
