package ha

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// leaderFailure starts the messages of etcd's rpctypes.ErrTimeout and
// ErrTimeoutDueToLeaderFail ("..., possibly due to previous leader
// failure"): a proposal that went to the killed leader and was never
// committed, failed after etcd's request timeout (7 s here).
const leaderFailure = "etcdserver: request timed out"

// inFlightGrace bounds how soon after the kill a request must have started
// to count as in flight on the killed member's connection.
const inFlightGrace = 500 * time.Millisecond

// connectionLost says err is an etcd client's connection to the killed
// member breaking under a request already sent (gRPC Unavailable): its
// outcome is unknown to kube-apiserver, which does not retry a write.
func connectionLost(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "code = Unavailable") && (strings.Contains(msg, "connection reset by peer") || strings.Contains(msg, "error reading from server") || strings.Contains(msg, "EOF"))
}

// TestEtcdMemberKilled: an etcd member of flotilla-apiserver's three is
// killed with SIGKILL while a client writes and reads karmada.io objects
// through the host, and rejoins when it is started again. The etcd client
// of each replica fails over to the other members, so no request fails but,
// at most, the one in flight on the killed member's connection at the kill
// (gRPC Unavailable: kube-apiserver's storage does not retry a write whose
// outcome it cannot know). With the leader killed, a write made before the
// others elect a new leader may also fail with etcd's leader-failure
// timeout (the follower forwarded its proposal to the dead leader). The
// client sees an error, not a lost write, and every later request succeeds.
func TestEtcdMemberKilled(t *testing.T) {
	requireHA(t)
	tests := []struct {
		name string
		// victim picks the member to kill from the leader's index.
		victim func(leader, members int) int
		// leaderlessMayFail allows a write made before the members elected
		// a new leader to fail with leaderFailure.
		leaderlessMayFail bool
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
			elected := killed
			framework.Eventually(t, time.Minute, func(ctx context.Context) string {
				if _, err := e.EtcdLeader(ctx); err != nil {
					return err.Error()
				}
				elected = time.Now()
				return ""
			})
			time.Sleep(10 * time.Second) // the load runs on two members
			during, _ := l.result()
			if err := e.RestartEtcdMember(t.Context(), victim); err != nil {
				t.Fatal(err)
			}
			rejoined := time.Since(killed)
			time.Sleep(3 * time.Second) // and on three again
			l.end()
			requests, failures := l.result()
			t.Logf("etcd %s (member %d) killed: a leader %.1f s after the kill; %d client requests (%d while it was down), %d failed, slowest %.1f s; healthy again %.1f s after the kill",
				tc.name, victim, elected.Sub(killed).Seconds(), requests, during-before, len(failures), l.slowestRequest().Seconds(), rejoined.Seconds())
			if during-before < 10 {
				t.Errorf("only %d requests while the member was down: the load did not run", during-before)
			}
			inFlight := 0
			for _, f := range failures {
				if inFlight == 0 && f.started.Before(killed.Add(inFlightGrace)) && connectionLost(f.err) {
					inFlight++
					t.Logf("the request in flight at the kill (started %.1f s after it) failed with the connection: %v", f.started.Sub(killed).Seconds(), f.err)
					continue
				}
				if tc.leaderlessMayFail && f.started.Before(elected) && strings.Contains(f.err.Error(), leaderFailure) {
					t.Logf("a write made %.1f s after the kill, before a new leader, failed %.1f s after it, as etcd fails it: %v", f.started.Sub(killed).Seconds(), f.at.Sub(killed).Seconds(), f.err)
					continue
				}
				t.Errorf("request started %.1f s after the kill failed %.1f s after it: %v", f.started.Sub(killed).Seconds(), f.at.Sub(killed).Seconds(), f.err)
			}
		})
	}
}
