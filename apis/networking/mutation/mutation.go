// Package mutation applies the write-time defaults of the
// networking.karmada.io kinds, as Karmada's mutating webhooks do.
package mutation

import (
	"github.com/google/uuid"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
)

// MutateMultiClusterService mutates mcs in place. On create (only), it
// gets its permanent id, a new UUID, unless it has one already: the Works
// and binding made for its Service are labelled with it.
func MutateMultiClusterService(mcs *networkingv1alpha1.MultiClusterService, create bool) {
	if !create || mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] != "" {
		return
	}
	if mcs.Labels == nil {
		mcs.Labels = map[string]string{}
	}
	mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] = uuid.NewString()
}
