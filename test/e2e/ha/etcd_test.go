package ha

import (
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// Issue 23: an etcd member of flotilla-apiserver's three is killed with
// SIGKILL while a client writes and reads karmada.io objects through the
// host; no request fails (the etcd client of each replica fails over to
// the other members), and the member rejoins when it is started again.
func TestEtcdMemberKilled(t *testing.T) {
	requireHA(t)
	tests := []struct {
		name string
		// victim picks the member to kill from the leader's index.
		victim func(leader, members int) int
	}{
		{"follower", func(leader, members int) int { return (leader + 1) % members }},
		{"leader", func(leader, _ int) int { return leader }},
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
			p.Kill()
			killed := time.Now()
			time.Sleep(10 * time.Second) // the load runs on two members
			during, _ := l.result()
			if err := e.RestartEtcdMember(t.Context(), victim); err != nil {
				t.Fatal(err)
			}
			rejoined := time.Since(killed)
			time.Sleep(3 * time.Second) // and on three again
			l.end()
			requests, failures := l.result()
			t.Logf("etcd %s (member %d) killed: %d client requests (%d while it was down), %d failed; healthy again %.1f s after the kill",
				tc.name, victim, requests, during-before, len(failures), rejoined.Seconds())
			if during-before < 10 {
				t.Errorf("only %d requests while the member was down: the load did not run", during-before)
			}
			for _, f := range failures {
				t.Errorf("request failed %.1f s after the kill: %v", f.at.Sub(killed).Seconds(), f.err)
			}
		})
	}
}
