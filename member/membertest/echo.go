// Package membertest holds what the tests of packages reaching members
// share: a stand-in member handler.
package membertest

import (
	"io"
	"net/http"
	"strings"
)

// UpgradeEcho is a member handler that upgrades requests asking for the
// "echo-test" protocol and echoes what it reads; other requests get JSON.
func UpgradeEcho(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "echo-test") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"Echo"}`)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer func() { _ = conn.Close() }()
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo-test\r\n\r\n")
	_ = brw.Flush()
	_, _ = io.Copy(conn, brw)
}
