package tunnel

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRequestReachesMemberAsAgentWithImpersonation(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })

	req, _ := http.NewRequest(http.MethodGet, "http://member3.tunnel/api/v1/namespaces/default/pods/p?resourceVersion=0", nil)
	req.Header.Set("Authorization", "Bearer control-plane-token")
	req.Header.Set("X-Remote-User", "system:admin")
	req.Header.Set("Impersonate-User", "tom")
	req.Header.Add("Impersonate-Group", "dev")
	req.Header.Add("Impersonate-Group", "ops")
	req.Header.Set("Impersonate-Uid", "uid-tom")
	req.Header.Set("Impersonate-Extra-Scopes", "read")
	resp, err := client(t, cp.tunnels, "member3").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"member":"member3"`) {
		t.Fatalf("response = %s %s", resp.Status, body)
	}

	got := m.last(t)
	if got.URL.Path != "/api/v1/namespaces/default/pods/p" || got.URL.RawQuery != "resourceVersion=0" {
		t.Errorf("member saw %s?%s", got.URL.Path, got.URL.RawQuery)
	}
	for key, want := range map[string][]string{
		"Authorization":            {"Bearer member-token-member3"}, // the agent's, never the control plane's
		"X-Remote-User":            nil,
		"Impersonate-User":         {"tom"},
		"Impersonate-Group":        {"dev", "ops"},
		"Impersonate-Uid":          {"uid-tom"},
		"Impersonate-Extra-Scopes": {"read"},
	} {
		if v := got.Header.Values(key); !slices.Equal(v, want) {
			t.Errorf("member saw %s = %q, want %q", key, v, want)
		}
	}
}

func TestWatchIsFlushedIncrementally(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })

	resp, err := client(t, cp.tunnels, "member3").Get("http://member3.tunnel/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	lines := make(chan string)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	// The member holds the second event back until the first has arrived.
	select {
	case line := <-lines:
		if !strings.Contains(line, "ADDED") {
			t.Fatalf("first event = %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was not flushed through the tunnel")
	}
	close(m.release)
	if line := <-lines; !strings.Contains(line, "MODIFIED") {
		t.Fatalf("second event = %q", line)
	}
}

func TestUpgradeRoundTrip(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	c := client(t, cp.tunnels, "member3")
	// A plain request first, so the agent holds an HTTP/2 connection to the
	// member that an upgrade must not take.
	get(t, c, "member3", "/version")

	for _, protocol := range []string{"SPDY/3.1", "websocket"} {
		req, _ := http.NewRequest(http.MethodPost, "http://member3.tunnel/api/v1/namespaces/default/pods/p/exec?command=sh", nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", protocol)
		req.Header.Set("Impersonate-User", "tom")
		// The transport itself: a client with a timeout hides the
		// upgraded connection.
		resp, err := c.Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s upgrade: %s %s", protocol, resp.Status, body)
		}
		rw, ok := resp.Body.(io.ReadWriteCloser)
		if !ok {
			t.Fatalf("%s upgrade: body %T is not writable", protocol, resp.Body)
		}
		echo(t, rw)
		_ = rw.Close()
		got := m.last(t)
		if got.Header.Get("Impersonate-User") != "tom" || got.Header.Get("Authorization") != "Bearer member-token-member3" || got.ProtoMajor != 1 {
			t.Errorf("%s upgrade: member saw %s with Impersonate-User %q, Authorization %q", protocol, got.Proto, got.Header.Get("Impersonate-User"), got.Header.Get("Authorization"))
		}
	}
}

func TestAgentReconnects(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	c := client(t, cp.tunnels, "member3")
	get(t, c, "member3", "/version")

	// Drop the connection under both sides.
	first := cp.tunnels.live("member3")[0]
	_ = first.mux.Close()
	eventually(t, "the agent reconnected", func() bool {
		live := cp.tunnels.live("member3")
		return len(live) == 1 && live[0] != first
	})
	// The dialer taken before the drop reaches the new tunnel.
	if body := get(t, c, "member3", "/version"); !strings.Contains(body, "member3") {
		t.Fatalf("after reconnecting: %s", body)
	}
}

func TestNewestTunnelServesAndOlderRemains(t *testing.T) {
	t.Parallel()
	cp := newControlPlane(t)
	a, b := newMember(t, "a"), newMember(t, "b")
	startAgent(t, cp, "agent-member3", "member3", a)
	eventually(t, "the first agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	stopB := startAgent(t, cp, "agent-member3", "member3", b)
	eventually(t, "both agents are connected", func() bool { return len(cp.tunnels.live("member3")) == 2 })

	fresh := func() *http.Client { return client(t, cp.tunnels, "member3") }
	if body := get(t, fresh(), "member3", "/"); !strings.Contains(body, `"member":"b"`) {
		t.Fatalf("with two tunnels, the request went to %s; want the newest", body)
	}
	stopB()
	eventually(t, "the second agent is gone", func() bool { return len(cp.tunnels.live("member3")) == 1 })
	if body := get(t, fresh(), "member3", "/"); !strings.Contains(body, `"member":"a"`) {
		t.Fatalf("after the newest tunnel closed, the request went to %s", body)
	}
}

func TestNotConnected(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	dial, ok := cp.tunnels.DialContext("member3")
	if ok || cp.tunnels.Connected("member3") {
		t.Fatal("a cluster without agent is connected")
	}
	var notConnected *NotConnectedError
	if _, err := dial(context.Background(), "tcp", "member3.tunnel:80"); !errors.As(err, &notConnected) {
		t.Fatalf("dial without agent: %v, want a NotConnectedError", err)
	}

	stop := startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	if _, ok := cp.tunnels.DialContext("member3"); !ok {
		t.Error("DialContext of a connected cluster is not ok")
	}
	stop()
	eventually(t, "the stopped agent is disconnected", func() bool { return !cp.tunnels.Connected("member3") })
	if _, err := dial(context.Background(), "tcp", "member3.tunnel:80"); !errors.As(err, &notConnected) {
		t.Fatalf("dial after the agent stopped: %v, want a NotConnectedError", err)
	}
}

func TestTunnelRefused(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	for _, tc := range []struct {
		name, token string
		want        string
	}{
		{"another cluster's agent", "agent-member1", "403 Forbidden"},
		{"an admin", "admin", "403 Forbidden"},
		{"no user", "nobody", "401 Unauthorized"},
	} {
		a, err := newAgent(cp.config(tc.token), "member3", m.config())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = a.dial(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: dial = %v, want %s", tc.name, err, tc.want)
		}
	}
	if cp.tunnels.Connected("member3") {
		t.Error("a refused agent is connected")
	}

	// The agent's own identity without the upgrade.
	req, _ := http.NewRequest(http.MethodPost, cp.URL+"/apis/cluster.karmada.io/v1alpha1/clusters/member3/tunnel", nil)
	req.Header.Set("Authorization", "Bearer agent-member3")
	resp, err := cp.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("tunnel request without upgrade: %s, want 400", resp.Status)
	}
}

func TestRunAgentValidates(t *testing.T) {
	t.Parallel()
	if err := RunAgent(context.Background(), nil, "member3", nil); err == nil {
		t.Error("RunAgent without configurations succeeded")
	}
	cp, m := newControlPlane(t), newMember(t, "member3")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- RunAgent(ctx, cp.config("agent-member3"), "member3", m.config()) }()
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunAgent after ctx ended = %v, want nil", err)
	}
	eventually(t, "the agent is disconnected", func() bool { return !cp.tunnels.Connected("member3") })
}

func TestCloseDisconnectsAndRefuses(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	cp.tunnels.Close()
	if cp.tunnels.Connected("member3") {
		t.Fatal("connected after Close")
	}
	// The agent retries and is refused.
	time.Sleep(300 * time.Millisecond)
	if cp.tunnels.Connected("member3") {
		t.Fatal("an agent connected after Close")
	}
}

// An agent that opens a stream of its own breaks the protocol, and loses
// its tunnel at once (guardedConn); the next agent connects as before.
func TestAgentOpeningAStreamLosesItsTunnel(t *testing.T) {
	t.Parallel()
	cp, m := newControlPlane(t), newMember(t, "member3")
	a, err := newAgent(cp.config("agent-member3"), "member3", m.config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := a.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	eventually(t, "the agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	if _, err := conn.Write(frame(frameWindowUpdate, flagSYN, 2, 0, "")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tunnel of the agent that opened a stream is gone", func() bool { return !cp.tunnels.Connected("member3") })

	startAgent(t, cp, "agent-member3", "member3", m)
	eventually(t, "a well-behaved agent is connected", func() bool { return cp.tunnels.Connected("member3") })
	if body := get(t, client(t, cp.tunnels, "member3"), "member3", "/version"); !strings.Contains(body, "member3") {
		t.Errorf("GET /version through the new tunnel = %s", body)
	}
}
