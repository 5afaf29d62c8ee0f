package app

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

func TestTunnelRelayAddress(t *testing.T) {
	for _, tc := range []struct {
		name, flag, bind string
		port             int
		want, wantErr    string
	}{
		{name: "derived from one bind address", bind: "192.0.2.2", port: 6443, want: "192.0.2.2:6443"},
		{name: "IPv6 bind address", bind: "fd00::2", port: 6443, want: "[fd00::2]:6443"},
		{name: "wildcard bind address: none", bind: "0.0.0.0", port: 6443},
		{name: "explicit", flag: "10.1.2.3:6443", bind: "0.0.0.0", port: 6443, want: "10.1.2.3:6443"},
		{name: "off", flag: "none", bind: "192.0.2.2", port: 6443},
		{name: "an IP takes the secure port", flag: "10.1.2.3", bind: "0.0.0.0", port: 6443, want: "10.1.2.3:6443"},
		{name: "a pod's IPv6 address", flag: "fd00::7", bind: "::", port: 6443, want: "[fd00::7]:6443"},
		{name: "not host:port", flag: "relay.example", bind: "0.0.0.0", port: 6443, want: "relay.example", wantErr: "--tunnel-relay-address must be host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.TunnelRelay.Address = tc.flag
			o.Server.SecureServing.BindAddress = net.ParseIP(tc.bind)
			o.Server.SecureServing.BindPort = tc.port
			o.completeRelay()
			if o.TunnelRelay.Address != tc.want {
				t.Errorf("address %q, want %q", o.TunnelRelay.Address, tc.want)
			}
			o.EmbeddedEtcdDir = t.TempDir()
			o.APIService.Register = false
			err := o.Validate()
			if tc.wantErr == "" && err != nil && strings.Contains(err.Error(), "tunnel-relay") {
				t.Errorf("Validate: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestLeaderElectionTimingValidated(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		lease, renew, retry  time.Duration
		leaderElect, wantErr bool
	}{
		{name: "Karmada's defaults", lease: 15 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second, leaderElect: true},
		{name: "renew deadline beyond the lease", lease: 5 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second, leaderElect: true, wantErr: true},
		{name: "retry beyond the renew deadline", lease: 15 * time.Second, renew: 10 * time.Second, retry: 10 * time.Second, leaderElect: true, wantErr: true},
		{name: "no retry period", lease: 15 * time.Second, renew: 10 * time.Second, leaderElect: true, wantErr: true},
		{name: "not electing: not checked", lease: 1, renew: 2, retry: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.EmbeddedEtcdDir, o.APIService.Register = t.TempDir(), false
			o.Controllers.LeaderElect = tc.leaderElect
			o.Controllers.LeaseDuration, o.Controllers.RenewDeadline, o.Controllers.RetryPeriod = tc.lease, tc.renew, tc.retry
			err := o.Validate()
			got := err != nil && strings.Contains(err.Error(), "leader election needs")
			if got != tc.wantErr {
				t.Errorf("Validate: %v, want an election error %v", err, tc.wantErr)
			}
		})
	}
}

func TestDeschedulerFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{name: "Karmada's defaults"},
		{name: "short, for tests", args: []string{"--descheduling-interval=5s", "--unschedulable-threshold=0s"}},
		{name: "no interval", args: []string{"--descheduling-interval=0s"}, wantErr: true},
		{name: "a negative threshold", args: []string{"--unschedulable-threshold=-1s"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			fss := cliflag.NamedFlagSets{}
			o.AddFlags(&fss)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			for _, f := range fss.FlagSets {
				fs.AddFlagSet(f)
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if len(tc.args) == 0 && (o.Controllers.Descheduler.DeschedulingInterval != 2*time.Minute || o.Controllers.Descheduler.UnschedulableThreshold != 5*time.Minute) {
				t.Errorf("defaults %+v, want 2m and 5m", o.Controllers.Descheduler)
			}
			o.EmbeddedEtcdDir, o.APIService.Register = t.TempDir(), false
			err := o.Validate()
			got := err != nil && strings.Contains(err.Error(), "--descheduling-interval")
			if got != tc.wantErr {
				t.Errorf("Validate: %v, want a descheduler error %v", err, tc.wantErr)
			}
		})
	}
}
