package ha

import (
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// leaderFailure is the message of etcd's rpctypes.ErrTimeoutDueToLeaderFail:
// a proposal the killed leader accepted and could not commit.
const leaderFailure = "request timed out, possibly due to previous leader failure"

// Issue 23: an etcd member of flotilla-apiserver's three is killed with
// SIGKILL while a client writes and reads karmada.io objects through the
// host, and rejoins when it is started again. With a follower killed no
// request fails (the etcd client of each replica fails over to the other
// members). With the leader killed, the one write in flight may fail with
// etcd's leader-failure timeout, which kube-apiserver's storage does not
// retry (a write is not idempotent) and passes on: the client sees an
// error, not a lost write, and every later request succeeds.
func TestEtcdMemberKilled(t *testing.T) {
	requireHA(t)
	tests := []struct {
		name string
		// victim picks the member to kill from the leader's index.
		victim func(leader, members int) int
		// inFlightMayFail allows the request in flight at the kill to fail
		// with leaderFailure.
		inFlightMayFail bool
	}{
		{"follower", func(leader, members int) int { return (leader + 1) % members }, false},
		{"leader", func(leader, _ int) int { return leader }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := framework.Env
			ns := framework.Namespace(t, "ha-etcd-"+tc.name)
			l := startLoad(t, 2*time.Minute, policyRoundTrip(karmada(t), ns))
			time.Sleep(3 * time.Second) // the load runs before the kill
			etcdLeader, err := e.EtcdLeader(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			victim := tc.victim(etcdLeader, len(e.HA.Etcd))
			p := e.EtcdMember(victim)
			t.Cleanup(func() {
				ctx, cancel := framework.CommandContext(t)
				defer cancel()
				if err := e.RestartEtcdMember(ctx, victim); err != nil {
					t.Errorf("restarting etcd member %d: %v", victim, err)
				}
			})
			before, _ := l.result()
			killed := time.Now()
			p.Kill()
			time.Sleep(10 * time.Second) // the load runs on two members
			during, _ := l.result()
			if err := e.RestartEtcdMember(t.Context(), victim); err != nil {
				t.Fatal(err)
			}
			rejoined := time.Since(killed)
			time.Sleep(3 * time.Second) // and on three again
			l.end()
			requests, failures := l.result()
			t.Logf("etcd %s (member %d) killed: %d client requests (%d while it was down), %d failed, slowest %.1f s; healthy again %.1f s after the kill",
				tc.name, victim, requests, during-before, len(failures), l.slowestRequest().Seconds(), rejoined.Seconds())
			if during-before < 10 {
				t.Errorf("only %d requests while the member was down: the load did not run", during-before)
			}
			for i, f := range failures {
				if tc.inFlightMayFail && i == 0 && f.started.Before(killed) && strings.Contains(f.err.Error(), leaderFailure) {
					t.Logf("the request in flight at the kill failed %.1f s after it, as etcd fails it: %v", f.at.Sub(killed).Seconds(), f.err)
					continue
				}
				t.Errorf("request started %.1f s after the kill failed %.1f s after it: %v", f.started.Sub(killed).Seconds(), f.at.Sub(killed).Seconds(), f.err)
			}
		})
	}
}
