package proxy

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// statusError returns an API status error about one cluster, so that kubectl
// prints the message as the server wrote it.
func statusError(code int32, reason metav1.StatusReason, cluster, format string, args ...any) *apierrors.StatusError {
	status := metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: fmt.Sprintf(format, args...),
	}
	if cluster != "" {
		status.Details = &metav1.StatusDetails{
			Group: clusterv1alpha1.GroupName,
			Kind:  "clusters",
			Name:  cluster,
		}
	}
	return &apierrors.StatusError{ErrStatus: status}
}

func errClusterNotFound(cluster string) error {
	return statusError(http.StatusNotFound, metav1.StatusReasonNotFound, cluster, "cluster %q not found", cluster)
}

func errClusterNotReady(cluster string) error {
	return statusError(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, cluster,
		"cluster %q is not ready", cluster)
}

// errClusterUnusable reports a cluster whose settings or secrets do not allow
// proxying to it (no endpoint, no impersonator token, bad CA bundle...).
func errClusterUnusable(cluster, format string, args ...any) error {
	return statusError(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, cluster,
		"cluster %q cannot be proxied: %s", cluster, fmt.Sprintf(format, args...))
}

// errAgentNotConnected reports a Pull cluster whose agent has no tunnel open.
func errAgentNotConnected(cluster string) error {
	return statusError(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, cluster,
		"cluster %q is in Pull mode and its agent is not connected", cluster)
}
