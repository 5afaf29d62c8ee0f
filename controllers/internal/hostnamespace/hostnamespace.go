// Package hostnamespace creates the control plane's own namespaces on the
// host (the inventory namespace), labelled so Karmada's namespace sync
// never propagates them to the members.
package hostnamespace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Ensure creates namespace on the host when it is missing, labelled
// namespace.karmada.io/skip-auto-propagation=true.
func Ensure(ctx context.Context, host kubernetes.Interface, namespace, fieldManager string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace,
		Labels: map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}}}
	if _, err := host.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the namespace %s: %w", namespace, err)
	}
	return nil
}
