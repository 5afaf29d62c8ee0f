package multiget

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"

	"github.com/google/go-cmp/cmp"
)

func TestPlanTargets(t *testing.T) {
	t.Parallel()
	registered := []string{"member2", "member1", "member3"}
	for _, tc := range []struct {
		name      string
		scope     OperationScope
		scopeSet  bool
		requested []string
		known     bool
		want      Plan
		wantErr   string
	}{
		{name: "default: the control plane", scope: clusterproxy.ScopeKarmada, known: true, want: Plan{ControlPlane: true}},
		{name: "members: every registered cluster, sorted", scope: clusterproxy.ScopeMembers, scopeSet: true, known: true,
			want: Plan{Members: []string{"member1", "member2", "member3"}}},
		{name: "all: the control plane and every member", scope: clusterproxy.ScopeAll, scopeSet: true, known: true,
			want: Plan{ControlPlane: true, Members: []string{"member1", "member2", "member3"}}},
		{name: "members with -C: those, in the given order, once", scope: clusterproxy.ScopeMembers, scopeSet: true, known: true,
			requested: []string{"member3", "member1", "member3", " "}, want: Plan{Members: []string{"member3", "member1"}}},
		{name: "all with -C", scope: clusterproxy.ScopeAll, scopeSet: true, known: true, requested: []string{"member2"},
			want: Plan{ControlPlane: true, Members: []string{"member2"}}},
		{name: "-C alone implies members", scope: clusterproxy.ScopeKarmada, known: true, requested: []string{"member1"},
			want: Plan{Members: []string{"member1"}}},
		{name: "-C with an explicit karmada scope", scope: clusterproxy.ScopeKarmada, scopeSet: true, known: true, requested: []string{"member1"},
			wantErr: "--clusters member1: clusters are read with --operation-scope=members or all, not karmada"},
		{name: "an unknown cluster is named", scope: clusterproxy.ScopeMembers, scopeSet: true, known: true, requested: []string{"member1", "member9"},
			wantErr: `cluster "member9" not found in the control plane (registered: member1, member2, member3)`},
		{name: "unknown clusters are all named", scope: clusterproxy.ScopeAll, scopeSet: true, known: true, requested: []string{"x", "member1", "y"},
			wantErr: `clusters "x", "y" not found`},
		{name: "clusters not listable: -C is taken as given", scope: clusterproxy.ScopeMembers, scopeSet: true, requested: []string{"member9"},
			want: Plan{Members: []string{"member9"}}},
		{name: "clusters not listable and no -C", scope: clusterproxy.ScopeMembers, scopeSet: true,
			wantErr: "the member clusters could not be listed: name them with --clusters"},
		{name: "no scope value", scope: OperationScope("everything"), scopeSet: true, known: true, wantErr: `operation scope "everything"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := registered
			if !tc.known {
				reg = nil
			}
			got, err := PlanTargets(tc.scope, tc.scopeSet, tc.requested, reg, tc.known)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanTargetsNoMembers(t *testing.T) {
	t.Parallel()
	if _, err := PlanTargets(clusterproxy.ScopeMembers, true, nil, nil, true); err != ErrNoMembers {
		t.Errorf("members with none registered: %v, want ErrNoMembers", err)
	}
	got, err := PlanTargets(clusterproxy.ScopeAll, true, nil, nil, true)
	if err != nil || !got.ControlPlane || len(got.Members) != 0 {
		t.Errorf("all with none registered: %+v %v, want the control plane alone", got, err)
	}
}

func TestOperationScopeSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want OperationScope
		ok   bool
	}{
		{"karmada", clusterproxy.ScopeKarmada, true},
		{"members", clusterproxy.ScopeMembers, true},
		{"all", clusterproxy.ScopeAll, true},
		{"Members", clusterproxy.ScopeKarmada, false},
		{"", clusterproxy.ScopeKarmada, false},
	} {
		s := clusterproxy.ScopeKarmada
		err := s.Set(tc.in)
		if (err == nil) != tc.ok || s != tc.want {
			t.Errorf("Set(%q) = %q, %v; want %q, ok %v", tc.in, s, err, tc.want, tc.ok)
		}
	}
}
