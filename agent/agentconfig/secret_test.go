package agentconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/flotilla-io/flotilla/names"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	const ns = "karmada-system"
	labels := map[string]string{"cluster.karmada.io/managed-by": "flotillactl"}
	for _, tc := range []struct {
		name    string
		objs    []runtime.Object
		want    Outcome
		wantObj *corev1.Secret
	}{
		{
			name: "absent: created with labels and the cluster annotation",
			want: Created,
			wantObj: &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.AgentConfigSecret, Labels: labels,
					Annotations: map[string]string{names.AgentClusterAnnotation: "member3"}},
				Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{names.AgentConfigKey: []byte("new")},
			},
		},
		{
			name: "present: kubeconfig and annotation replaced, the rest kept",
			objs: []runtime.Object{&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.AgentConfigSecret, Labels: map[string]string{"mine": "x"},
					Annotations: map[string]string{names.AgentClusterAnnotation: "old-name", "note": "kept"}},
				Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{names.AgentConfigKey: []byte("old"), "stale": []byte("dropped")},
			}},
			want: Replaced,
			wantObj: &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.AgentConfigSecret, Labels: map[string]string{"mine": "x"},
					Annotations: map[string]string{names.AgentClusterAnnotation: "member3", "note": "kept"}},
				Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{names.AgentConfigKey: []byte("new")},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			member := kubefake.NewClientset(tc.objs...)
			got, err := Write(t.Context(), member, ns, "member3", []byte("new"), labels)
			if err != nil || got != tc.want {
				t.Fatalf("Write = %q, %v; want %q", got, err, tc.want)
			}
			s, err := member.CoreV1().Secrets(ns).Get(t.Context(), names.AgentConfigSecret, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.ResourceVersion, s.ManagedFields, s.TypeMeta = "", nil, metav1.TypeMeta{}
			if diff := cmp.Diff(tc.wantObj, s); diff != "" {
				t.Errorf("secret (-want +got):\n%s", diff)
			}
			cluster, exists, err := Registered(t.Context(), member, ns)
			if err != nil || !exists || cluster != "member3" {
				t.Errorf("Registered = %q, %v, %v; want member3", cluster, exists, err)
			}
		})
	}
}

func TestRegisteredAbsent(t *testing.T) {
	t.Parallel()
	cluster, exists, err := Registered(t.Context(), kubefake.NewClientset(), "karmada-system")
	if err != nil || exists || cluster != "" {
		t.Errorf("Registered = %q, %v, %v; want absent", cluster, exists, err)
	}
}
