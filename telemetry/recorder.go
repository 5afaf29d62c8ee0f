package telemetry

// The event recorders of Flotilla's controllers, on the control plane and
// in flotilla-agent.

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	karmadascheme "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/scheme"
)

// spamKeyByReason is client-go's event spam key with the reason added.
func spamKeyByReason(e *corev1.Event) string {
	return strings.Join([]string{e.Source.Component, e.Source.Host, e.InvolvedObject.Kind, e.InvolvedObject.Namespace,
		e.InvolvedObject.Name, string(e.InvolvedObject.UID), e.InvolvedObject.APIVersion, e.Type, e.Reason}, "/")
}

// eventCacheSize bounds each of the recorder's three caches (the spam
// filter's, the aggregator's and the repeat counter's), by objects and
// reasons seen lately. With client-go's 4,096 entries they were the
// largest grower of the leader's heap in the soak (7 MiB twelve minutes
// after a takeover, +6.5 MiB in ten minutes, still filling); 1,024 keeps
// the repeats of the last several minutes counted on one Event.
const eventCacheSize = 1024

// NewEventRecorder returns a recorder of events on templates (any kind:
// the reference is built from the binding) and Karmada objects, written to
// sink, and the shutdown of its broadcaster. Its spam filter (a burst of
// 25 events per object, then one per five minutes) keys on the reason
// too: a template's frequent status events must not starve its rare ones
// (PreemptPolicySucceed...).
func NewEventRecorder(sink typedcorev1.EventInterface, source corev1.EventSource) (record.EventRecorder, func(), error) {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		return nil, nil, err
	}
	if err := karmadascheme.AddToScheme(s); err != nil {
		return nil, nil, err
	}
	b := record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{SpamKeyFunc: spamKeyByReason, LRUCacheSize: eventCacheSize}))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: sink})
	return b.NewRecorder(s, source), b.Shutdown, nil
}
