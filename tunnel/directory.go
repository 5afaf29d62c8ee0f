package tunnel

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// LeasePrefix starts the name of the host Lease recording which replica
// holds a cluster's tunnel: <LeasePrefix><cluster>.
const LeasePrefix = "flotilla-tunnel-"

// LeaseDirectory is the Directory of the replicas kept in host Leases,
// one per Pull cluster, whose holderIdentity is the holder's address.
type LeaseDirectory struct {
	Leases    coordinationclient.LeasesGetter
	Namespace string
	// Self is this replica's address, recorded as the holder.
	Self string
	now  func() time.Time
}

var _ Directory = &LeaseDirectory{}

func (d *LeaseDirectory) time() metav1.MicroTime {
	if d.now != nil {
		return metav1.NewMicroTime(d.now())
	}
	return metav1.NowMicro()
}

// Claim records this replica as the holder of cluster's tunnel; it writes
// nothing when it is already.
func (d *LeaseDirectory) Claim(ctx context.Context, cluster string) error {
	leases := d.Leases.Leases(d.Namespace)
	name := LeasePrefix + cluster
	cur, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		now := d.time()
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(d.Self), AcquireTime: &now, RenewTime: &now},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if ptr.Deref(cur.Spec.HolderIdentity, "") == d.Self {
		return nil
	}
	now := d.time()
	cur.Spec.HolderIdentity, cur.Spec.AcquireTime, cur.Spec.RenewTime = ptr.To(d.Self), &now, &now
	cur.Spec.LeaseTransitions = ptr.To(ptr.Deref(cur.Spec.LeaseTransitions, 0) + 1)
	_, err = leases.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// Release deletes the record of cluster's tunnel if this replica is its
// holder; another replica's claim is left alone.
func (d *LeaseDirectory) Release(ctx context.Context, cluster string) error {
	leases := d.Leases.Leases(d.Namespace)
	cur, err := leases.Get(ctx, LeasePrefix+cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ptr.Deref(cur.Spec.HolderIdentity, "") != d.Self {
		return nil
	}
	err = leases.Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if apierrors.IsConflict(err) {
		return fmt.Errorf("lease %s/%s changed while releasing it: %w", d.Namespace, cur.Name, err)
	}
	return err
}

// Holder returns the address of the replica holding cluster's tunnel, ""
// when none does.
func (d *LeaseDirectory) Holder(ctx context.Context, cluster string) (string, error) {
	cur, err := d.Leases.Leases(d.Namespace).Get(ctx, LeasePrefix+cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ptr.Deref(cur.Spec.HolderIdentity, ""), nil
}
