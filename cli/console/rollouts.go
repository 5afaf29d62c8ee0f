package console

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/rollout"
)

// fieldManager is the console's name in the runs' managed fields: its
// changes are flotillactl's, made from the console.
const fieldManager = "flotillactl-console"

// RunRow is one rollout run: its stages, each with its clusters.
type RunRow struct {
	Namespace, Name string
	Template        string
	Strategy        string
	Phase           string
	Current         string
	Stages          []flotillav1alpha1.StageStatus
	// Live: the run is not over, so it can be paused, resumed, aborted.
	Live   bool
	Paused bool
	// Approve is the stage and gate waiting for an approval ("" if none).
	Approve string
}

func runRow(r *flotillav1alpha1.RolloutRun) RunRow {
	row := RunRow{Namespace: r.Namespace, Name: r.Name, Strategy: r.Spec.Strategy, Phase: string(r.Status.Phase),
		Current: r.Status.CurrentStage, Stages: r.Status.Stages, Live: !r.Status.Phase.Terminal(), Paused: r.Spec.Paused,
		Template: r.Spec.Resource.Kind + " " + r.Spec.Resource.Name}
	if row.Phase == "" {
		row.Phase = "Pending"
	}
	if a, err := rollout.ChooseApproval(r, rollout.ApproveOptions{}); err == nil && row.Live {
		row.Approve = fmt.Sprintf("%s (%s)", a.Stage, a.Gate)
	}
	return row
}

// rolloutsData is the rollout runs of a namespace (or all).
type rolloutsData struct {
	Namespace string
	Runs      []RunRow
	// Live is the page's stream of changes to the runs listed
	// (liveRollouts), from the list's resourceVersion.
	Live string
	// Done says what the last action did; Token guards the actions.
	Done  string
	Token string
}

func (s *Server) rollouts(w http.ResponseWriter, r *http.Request) {
	s.renderRollouts(w, r, r.URL.Query().Get("namespace"), r.URL.Query().Get("done"), "")
}

func (s *Server) renderRollouts(w http.ResponseWriter, r *http.Request, ns, done, refused string) {
	d := rolloutsData{Namespace: ns, Done: done, Token: s.token}
	list, err := s.karmadaOf(r).FlotillaV1alpha1().RolloutRuns(ns).List(r.Context(), metav1.ListOptions{})
	if err == nil {
		d.Live = "/live/rollouts?" + url.Values{"namespace": {ns}, "rv": {list.ResourceVersion}}.Encode()
		for i := range list.Items {
			d.Runs = append(d.Runs, runRow(&list.Items[i]))
		}
		slices.SortFunc(d.Runs, func(a, b RunRow) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	}
	msg := problem(err)
	if refused != "" {
		msg = refused
	}
	s.render(w, "rollouts", page{Title: "Rollouts", Nav: "rollouts", Error: msg, Data: d})
}

// liveRollouts streams the rollouts page's changes: each run changed,
// rendered as its section ("run" events).
func (s *Server) liveRollouts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	wt, err := s.karmadaOf(r).FlotillaV1alpha1().RolloutRuns(q.Get("namespace")).Watch(r.Context(), metav1.ListOptions{ResourceVersion: q.Get("rv")})
	s.live(w, r, wt, err, "run", func(obj runtime.Object) (string, string, bool) {
		run, ok := obj.(*flotillav1alpha1.RolloutRun)
		if !ok {
			return "", "", false
		}
		return run.Namespace + "/" + run.Name, "run", true
	}, func(obj runtime.Object, buf *bytes.Buffer) error {
		return s.pages["rollouts"].ExecuteTemplate(buf, "run", map[string]any{"Run": runRow(obj.(*flotillav1alpha1.RolloutRun)), "Token": s.token})
	})
}

// rolloutAction performs an action on a run, with the same API calls as
// flotillactl rollout pause, resume, abort and approve, as the user; a
// refusal is shown with the server's message.
func (s *Server) rolloutAction(w http.ResponseWriter, r *http.Request) {
	if !s.sameOrigin(r) {
		http.Error(w, "refused: the request did not come from the console's own page", http.StatusForbidden)
		return
	}
	ns, name, action := r.PathValue("namespace"), r.PathValue("name"), r.PathValue("action")
	ctx := r.Context()
	runs := s.karmadaOf(r).FlotillaV1alpha1().RolloutRuns(ns)
	run, err := runs.Get(ctx, name, metav1.GetOptions{})
	var patch []byte
	if err == nil {
		switch action {
		case "pause", "resume", "abort":
			spec := map[string]any{"paused": action == "pause"}
			if action == "abort" {
				spec = map[string]any{"abort": true}
			}
			patch, err = json.Marshal(map[string]any{"spec": spec})
		case "approve":
			var a flotillav1alpha1.RolloutApproval
			if a, err = rollout.ChooseApproval(run, rollout.ApproveOptions{}); err == nil {
				a.Approver, a.Time = s.whoAmI(r), &metav1.Time{Time: s.now()}
				patch, err = rollout.ApprovalPatch(run, a)
			}
		default:
			http.Error(w, "unknown action "+action, http.StatusNotFound)
			return
		}
	}
	if err == nil && run.Status.Phase.Terminal() {
		err = fmt.Errorf("rolloutrun %q is over (%s): there is nothing to change", name, run.Status.Phase)
	}
	if err == nil {
		_, err = runs.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	}
	if err != nil {
		w.WriteHeader(http.StatusForbidden)
		s.renderRollouts(w, r, ns, "", fmt.Sprintf("%s of rolloutrun %s/%s refused: %s", action, ns, name, problem(err)))
		return
	}
	done := fmt.Sprintf("rolloutrun %s/%s: %s done", ns, name, action)
	http.Redirect(w, r, "/rollouts?namespace="+url.QueryEscape(ns)+"&done="+url.QueryEscape(done), http.StatusSeeOther)
}

// whoAmI is the user's name as the control plane authenticates it.
func (s *Server) whoAmI(r *http.Request) string {
	review, err := s.kubeOf(r).AuthenticationV1().SelfSubjectReviews().Create(r.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return review.Status.UserInfo.Username
}

// newToken is the console's secret for its forms: a page of another site
// the user visits cannot post to the console without it.
func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// sameOrigin tells whether a form post came from the console's own page:
// its token, and an Origin (when the browser sends one) of this host.
func (s *Server) sameOrigin(r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(s.token)) != 1 {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	return true
}
