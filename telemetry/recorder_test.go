package telemetry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSpamKeyByReason(t *testing.T) {
	ev := func(reason, msg string) *corev1.Event {
		return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: "default", Name: "web", UID: "u"},
			Reason: reason, Message: msg, Type: corev1.EventTypeNormal}
	}
	if spamKeyByReason(ev("AggregateStatusSucceed", "a")) == spamKeyByReason(ev("PreemptPolicySucceed", "a")) {
		t.Error("events of different reasons share a spam bucket")
	}
	if spamKeyByReason(ev("SyncSucceed", "a")) != spamKeyByReason(ev("SyncSucceed", "b")) {
		t.Error("events of one reason on one object have different spam buckets")
	}
}
