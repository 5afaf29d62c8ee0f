// Package soak runs flotilla-apiserver for a long while under a mixed
// workload and faults, and records, every minute, what it holds: `make
// soak` (SOAK=<duration>, 60 minutes by default). It is not part of `make
// test`: without FLOTILLA_SOAK its test skips.
//
// The bed is the HA one (two replicas on a three-member etcd) with three
// members. The workload: Deployments and ConfigMaps created, changed and
// deleted in ten namespaces, each propagated to every member; members'
// pods deleted (their Deployments make them again); lists through
// clusters/{name}/proxy and search, and watches through both. The faults:
// a member's kube-apiserver stopped for 30 s every 5 minutes (in turn),
// and the leader replica killed with SIGKILL every 15 minutes (started
// again 5 s later).
package soak

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// soakFor is how long the soak runs, from FLOTILLA_SOAK; 0 skips it.
var soakFor time.Duration

// skipWhy says why the soak does not run ("" when it does).
var skipWhy string

func TestMain(m *testing.M) {
	v := os.Getenv("FLOTILLA_SOAK")
	d, err := time.ParseDuration(v)
	switch {
	case v == "":
		skipWhy = "FLOTILLA_SOAK is not set: `make soak` (SOAK=<duration>) runs the soak"
	case err != nil || d < 5*time.Minute:
		skipWhy = fmt.Sprintf("FLOTILLA_SOAK=%q: want a duration of at least 5m", v)
	}
	if skipWhy == "" {
		if _, err := env.HostIPv4(); err != nil {
			skipWhy = "the HA bed cannot run here: " + err.Error()
		}
	}
	if skipWhy != "" {
		fmt.Fprintln(os.Stderr, "soak: skipping:", skipWhy)
		os.Exit(m.Run())
	}
	soakFor = d
	framework.Main(m, "soak", env.Options{
		Members: []env.MemberOptions{
			{Name: "member1", Nodes: env.NodeOptions{Count: 1}},
			{Name: "member2", Nodes: env.NodeOptions{Count: 1}},
			{Name: "member3", Nodes: env.NodeOptions{Count: 1}},
		},
		Flotilla: &env.FlotillaOptions{Args: []string{"--cluster-status-update-frequency=5s"}},
		HA:       &env.HAOptions{Replicas: 2, EtcdMembers: 3},
	}, "member1", "member2", "member3")
}
