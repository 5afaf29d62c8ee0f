package chartapply

import (
	"encoding/json"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// InventoryKey is the key of the inventory ConfigMap that holds the list.
const InventoryKey = "inventory.json"

// InventoryName is the name of the ConfigMap, in the release's namespace,
// that records what init created for release.
func InventoryName(release string) string { return release + "-flotillactl-init" }

// Ref names one object init created, with its uid: deinit deletes that
// object and not one created again under its name.
type Ref struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// key identifies an object regardless of its uid.
func (r Ref) key() string { return r.APIVersion + " " + r.String() }

// Inventory is what init created for a release.
type Inventory struct {
	// CreatedNamespace says the release's namespace did not exist before init.
	CreatedNamespace bool  `json:"createdNamespace,omitempty"`
	Objects          []Ref `json:"objects"`
}

// configMap encodes the inventory.
func (inv *Inventory) configMap(release, namespace string, labels map[string]string) (*corev1.ConfigMap, error) {
	data, err := json.Marshal(inv)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: InventoryName(release), Namespace: namespace, Labels: labels},
		Data:       map[string]string{InventoryKey: string(data)},
	}, nil
}

// decodeInventory reads an inventory ConfigMap.
func decodeInventory(cm *corev1.ConfigMap) (*Inventory, error) {
	inv := &Inventory{}
	if err := json.Unmarshal([]byte(cm.Data[InventoryKey]), inv); err != nil {
		return nil, fmt.Errorf("configmap %s/%s: key %s: %w", cm.Namespace, cm.Name, InventoryKey, err)
	}
	return inv, nil
}

// stale returns the objects of old that are not in applied: what a new
// rendering no longer makes.
func stale(old, applied []Ref) []Ref {
	keep := map[string]bool{}
	for _, r := range applied {
		keep[r.key()] = true
	}
	var out []Ref
	for _, r := range old {
		if !keep[r.key()] {
			out = append(out, r)
		}
	}
	return out
}

// uninstallOrder sorts refs in Helm's uninstall order (APIServices and
// workloads before the Services, Secrets and RBAC they use); kinds Helm
// does not list go first, in reverse of their install order.
func uninstallOrder(refs []Ref) []Ref {
	rank := func(kind string) int {
		if i := slices.Index(releaseutil.UninstallOrder, kind); i >= 0 {
			return i + 1
		}
		return 0
	}
	out := slices.Clone(refs)
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b Ref) int { return rank(a.Kind) - rank(b.Kind) })
	return out
}
