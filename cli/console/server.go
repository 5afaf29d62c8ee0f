package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/cli/explain"
	"github.com/flotilla-io/flotilla/cli/search"
	"github.com/flotilla-io/flotilla/names"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pageSize is how many workloads a page of the workloads list holds.
const pageSize = 100

// memberTimeout bounds a read from a member (through clusters/{name}/proxy):
// a member that is down shows as unreachable, it does not hold the page.
const memberTimeout = 5 * time.Second

// Server serves the console's pages, reading the control plane (and the
// members, through it) as one user: every read is that user's, so a page
// shows exactly what the user may see. It stores nothing.
type Server struct {
	kube    kubernetes.Interface
	karmada versioned.Interface
	pages   map[string]*template.Template
	now     func() time.Time
	// token guards the forms that change something (see sameOrigin).
	token string
	// login, in login mode, is the control plane's address without
	// credentials: each user logs in with a token (login.go).
	login *rest.Config
	// explain reads a ResourceBinding's explain subresource as the user
	// of karmada (explain.Read).
	explain func(ctx context.Context, karmada versioned.Interface, namespace, name string) (*flotillav1alpha1.PlacementExplanation, error)
	// discovery keeps the members' discovery the object page reads
	// (memberResources).
	discovery sync.Map
}

// New returns the console of the control plane cfg reaches, as cfg's user.
func New(cfg *rest.Config) (*Server, error) {
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "flotillactl-console")
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return newServer(kube, karmada)
}

func newServer(kube kubernetes.Interface, karmada versioned.Interface) (*Server, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Server{kube: kube, karmada: karmada, pages: pages, now: time.Now, token: newToken(), explain: explain.Read}, nil
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"join": strings.Join,
	// dict passes several values to a fragment: dict "Key" value ...
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, errors.New("dict wants key-value pairs")
		}
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, fmt.Errorf("dict key %v is not a string", kv[i])
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
	"ago": func(t metav1.Time, now time.Time) string {
		if t.IsZero() {
			return ""
		}
		return now.Sub(t.Time).Round(time.Second).String()
	},
}

// parsePages parses each page with the layout and the shared fragments.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || strings.HasPrefix(base, "_") {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/_*.html", n)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", n, err)
		}
		pages[base] = t
	}
	return pages, nil
}

// Handler routes the console's pages.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /clusters/{name}", s.cluster)
	mux.HandleFunc("GET /workloads", s.workloads)
	mux.HandleFunc("GET /workloads/{namespace}/{name}", s.workload)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /object", s.object)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /rollouts", s.rollouts)
	mux.HandleFunc("GET /policies", s.policies)
	mux.HandleFunc("POST /rollouts/{namespace}/{name}/{action}", s.rolloutAction)
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.loginPost)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /live/clusters", s.liveClusters)
	mux.HandleFunc("GET /live/rollouts", s.liveRollouts)
	mux.HandleFunc("GET /live/workloads", s.liveWorkloads)
	return securityHeaders(s.requireLogin(mux))
}

// securityHeaders keeps the pages to themselves: no framing, no content
// from elsewhere (everything is served from here).
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// same-origin: no referrer leaves the console, and its own form posts
		// carry their Origin (no-referrer would make it "null").
		w.Header().Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// page is what every page's layout reads.
type page struct {
	Title string
	// LoggedIn: a login-mode page offers to log out (with Token).
	LoggedIn bool
	Token    string
	// Nav is the page's entry in the navigation.
	Nav string
	Now time.Time
	// Error is what the control plane answered when the page could not
	// be read (a 403 says the user may not).
	Error string
	Data  any
}

func (s *Server) render(w http.ResponseWriter, name string, p page) {
	p.Now = s.now()
	p.LoggedIn, p.Token = s.login != nil && name != "login", s.token
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

// problem is how a page says what the control plane refused.
func problem(err error) string {
	if err == nil {
		return ""
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code == http.StatusForbidden {
		msg := st.Status().Message
		if msg == "" || msg == "unknown" {
			msg = err.Error()
		}
		return "Not allowed: " + msg
	}
	return err.Error()
}

// overviewData is the fleet overview.
type overviewData struct {
	Clusters []ClusterRow
	Ready    int
	// RV is the list's resourceVersion, which the live updates watch from.
	RV string
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	list, err := s.karmadaOf(r).ClusterV1alpha1().Clusters().List(r.Context(), metav1.ListOptions{})
	d := overviewData{}
	if err == nil {
		d.RV = list.ResourceVersion
		for i := range list.Items {
			row := clusterRow(&list.Items[i])
			if row.Health == healthy {
				d.Ready++
			}
			d.Clusters = append(d.Clusters, row)
		}
		slices.SortFunc(d.Clusters, func(a, b ClusterRow) int { return strings.Compare(a.Name, b.Name) })
	}
	s.render(w, "overview", page{Title: "Fleet", Nav: "fleet", Error: problem(err), Data: d})
}

// clusterData is one cluster's page: the cluster and the member's events.
type clusterData struct {
	Cluster ClusterRow
	Events  []eventRow
	// Unreachable says why the member's events could not be read.
	Unreachable string
}

type eventRow struct {
	Type, Reason, Object, Message string
	Count                         int32
	Last                          metav1.Time
}

func (s *Server) cluster(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	c, err := s.karmadaOf(r).ClusterV1alpha1().Clusters().Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		s.render(w, "cluster", page{Title: name, Nav: "fleet", Error: problem(err)})
		return
	}
	d := clusterData{Cluster: clusterRow(c)}
	// The member's events, through clusters/{name}/proxy as this user.
	ctx, cancel := context.WithTimeout(r.Context(), memberTimeout)
	defer cancel()
	raw, err := s.kubeOf(r).CoreV1().RESTClient().Get().
		AbsPath(proxyPrefix+name, "proxy/api/v1/events").Param("limit", "200").DoRaw(ctx)
	if err == nil {
		var evs corev1.EventList
		if err = json.Unmarshal(raw, &evs); err == nil {
			d.Events = eventRows(evs.Items)
		}
	}
	if err != nil {
		d.Unreachable = fmt.Sprintf("member %s is unreachable or refuses: %s", name, problem(err))
	}
	s.render(w, "cluster", page{Title: name, Nav: "fleet", Data: d})
}

func eventRows(items []corev1.Event) []eventRow {
	out := make([]eventRow, 0, len(items))
	for _, e := range items {
		last := e.LastTimestamp
		if last.IsZero() {
			last = metav1.NewTime(e.EventTime.Time)
		}
		obj := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
		if e.InvolvedObject.Namespace != "" {
			obj = e.InvolvedObject.Namespace + "/" + obj
		}
		out = append(out, eventRow{Type: e.Type, Reason: e.Reason, Object: obj, Message: e.Message, Count: e.Count, Last: last})
	}
	slices.SortStableFunc(out, func(a, b eventRow) int { return b.Last.Compare(a.Last.Time) })
	return out
}

// workloadsData is a page of workloads, as a list and as a matrix.
type workloadsData struct {
	Namespace string
	Matrix    Matrix
	// Continue is the next page's token ("" on the last page).
	Continue string
	// Live is the page's stream of changes to its workloads
	// (liveWorkloads), from the list's resourceVersion.
	Live string
}

func (s *Server) workloads(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	d := workloadsData{Namespace: ns}
	list, err := s.karmadaOf(r).WorkV1alpha2().ResourceBindings(ns).List(r.Context(), metav1.ListOptions{Limit: pageSize, Continue: r.URL.Query().Get("continue")})
	var rows []WorkloadRow
	if err == nil {
		d.Continue = list.Continue
		for i := range list.Items {
			b := &list.Items[i]
			rows = append(rows, workloadRow(b.ObjectMeta, &b.Spec, &b.Status))
		}
	}
	var clusters []string
	if cl, cerr := s.karmadaOf(r).ClusterV1alpha1().Clusters().List(r.Context(), metav1.ListOptions{}); cerr == nil {
		for _, c := range cl.Items {
			clusters = append(clusters, c.Name)
		}
	}
	d.Matrix = matrix(clusters, rows)
	if err == nil {
		q := url.Values{"namespace": {ns}, "rv": {list.ResourceVersion}, "clusters": {strings.Join(d.Matrix.Clusters, ",")}}
		if d.Continue == "" {
			q.Set("last", "1") // new workloads join the last page
		}
		d.Live = "/live/workloads?" + q.Encode()
	}
	s.render(w, "workloads", page{Title: "Workloads", Nav: "workloads", Error: problem(err), Data: d})
}

// liveWorkloads streams the workloads page's changes: each binding
// changed, rendered as its matrix row over the page's clusters
// ("workload" events); a binding placed on a cluster the page has no
// column for has the page list again.
func (s *Server) liveWorkloads(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var cols []string
	if c := q.Get("clusters"); c != "" {
		cols = strings.Split(c, ",")
	}
	wt, err := s.karmadaOf(r).WorkV1alpha2().ResourceBindings(q.Get("namespace")).Watch(r.Context(), metav1.ListOptions{ResourceVersion: q.Get("rv")})
	s.live(w, r, wt, err, "workload", func(obj runtime.Object) (string, string, bool) {
		b, ok := obj.(*workv1alpha2.ResourceBinding)
		if !ok {
			return "", "", false
		}
		return b.Namespace + "/" + b.Name, "workloadRow", true
	}, func(obj runtime.Object, buf *bytes.Buffer) error {
		b := obj.(*workv1alpha2.ResourceBinding)
		m := matrix(cols, []WorkloadRow{workloadRow(b.ObjectMeta, &b.Spec, &b.Status)})
		if len(m.Clusters) != len(cols) {
			return errRelist
		}
		return s.pages["workloads"].ExecuteTemplate(buf, "workloadRow", m.Rows[0])
	})
}

// workloadData is one workload: its binding, Works, why it runs where it
// does, what drifted, and its events.
type workloadData struct {
	Row     WorkloadRow
	Binding *workv1alpha2.ResourceBinding
	Works   []workRow
	// Explanation is the binding's explain subresource; ExplainError why
	// it could not be read (the user may not, or the server has none).
	Explanation  *flotillav1alpha1.PlacementExplanation
	ExplainError string
	// Drifts are the owned fields of its member objects that last
	// differed from what was applied, by Work.
	Drifts []driftRow
	Events []eventRow
}

type workRow struct {
	Cluster, Name    string
	Applied, Healthy string
	// Drifted is the Work's Drifted condition: its status, reason and
	// message ("" when it has none).
	Drifted, DriftReason, DriftMessage string
}

// driftRow is one drifted field of a member object.
type driftRow struct {
	Cluster, Object, Path, InMember, Applied string
}

// workRowOf is a Work's row on its workload's page, with the fields that
// drifted in its member objects.
func workRowOf(wk *workv1alpha1.Work) (workRow, []driftRow) {
	cluster, _ := names.ClusterOf(wk.Namespace)
	row := workRow{Cluster: cluster, Name: wk.Name, Applied: "Unknown", Healthy: "Unknown"}
	if c := meta.FindStatusCondition(wk.Status.Conditions, workv1alpha1.WorkApplied); c != nil {
		row.Applied = string(c.Status)
	}
	if c := meta.FindStatusCondition(wk.Status.Conditions, workv1alpha1.WorkDrifted); c != nil {
		row.Drifted, row.DriftReason, row.DriftMessage = string(c.Status), c.Reason, c.Message
	}
	// Health is per manifest; a Work's is its first manifest's.
	if len(wk.Status.ManifestStatuses) > 0 && wk.Status.ManifestStatuses[0].Health != "" {
		row.Healthy = string(wk.Status.ManifestStatuses[0].Health)
	}
	var drifts []driftRow
	for _, ms := range wk.Status.ManifestStatuses {
		object := ms.Identifier.Kind + " " + ms.Identifier.Name
		if ms.Identifier.Namespace != "" {
			object = ms.Identifier.Kind + " " + ms.Identifier.Namespace + "/" + ms.Identifier.Name
		}
		for _, f := range ms.Drift {
			drifts = append(drifts, driftRow{Cluster: cluster, Object: object, Path: f.Path, InMember: f.ValueInMember, Applied: f.ValueApplied})
		}
	}
	return row, drifts
}

func (s *Server) workload(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	b, err := s.karmadaOf(r).WorkV1alpha2().ResourceBindings(ns).Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		s.render(w, "workload", page{Title: ns + "/" + name, Nav: "workloads", Error: problem(err)})
		return
	}
	d := workloadData{Row: workloadRow(b.ObjectMeta, &b.Spec, &b.Status), Binding: b}
	// Its Works, by the binding's permanent id, across the execution
	// namespaces the user may list.
	if id := b.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]; id != "" {
		works, werr := s.karmadaOf(r).WorkV1alpha1().Works("").List(r.Context(), metav1.ListOptions{LabelSelector: workv1alpha2.ResourceBindingPermanentIDLabel + "=" + id})
		if werr == nil {
			for i := range works.Items {
				row, drifts := workRowOf(&works.Items[i])
				d.Works = append(d.Works, row)
				d.Drifts = append(d.Drifts, drifts...)
			}
		}
	}
	// Why it runs where it does: the binding's explain subresource,
	// computed by the scheduler's algorithm as the user asks.
	var xerr error
	d.Explanation, xerr = s.explain(r.Context(), s.karmadaOf(r), ns, name)
	d.ExplainError = problem(xerr)
	if evs, eerr := s.kubeOf(r).CoreV1().Events(ns).List(r.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name}); eerr == nil {
		d.Events = eventRows(evs.Items)
	}
	s.render(w, "workload", page{Title: ns + "/" + name, Nav: "workloads", Data: d})
}

// searchData is a full-text query and what it found.
type searchData struct {
	Query string
	Total uint64
	Hits  []searchHit
}

type searchHit struct {
	Cluster, Kind, Namespace, Name string
	// Path is the console's page of the object (objectLink).
	Path string
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	d := searchData{Query: q}
	var err error
	if q != "" {
		var raw []byte
		raw, err = s.kubeOf(r).CoreV1().RESTClient().Get().AbsPath(search.FullTextPath).Param("q", q).Param("size", "100").DoRaw(r.Context())
		if err == nil {
			d.Total, d.Hits, err = parseHits(raw)
		}
	}
	s.render(w, "search", page{Title: "Search", Nav: "search", Error: problem(err), Data: d})
}

// parseHits reads the search endpoint's answer.
func parseHits(raw []byte) (uint64, []searchHit, error) {
	var res struct {
		Total uint64 `json:"total"`
		Items []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name        string            `json:"name"`
				Namespace   string            `json:"namespace"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return 0, nil, err
	}
	var hits []searchHit
	for _, it := range res.Items {
		h := searchHit{Cluster: it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation], Kind: it.Kind,
			Namespace: it.Metadata.Namespace, Name: it.Metadata.Name}
		h.Path = objectLink(h.Cluster, it.APIVersion, it.Kind, h.Namespace, h.Name)
		hits = append(hits, h)
	}
	return res.Total, hits, nil
}

// objectLink is the console's page of a member object: the object read
// through clusters/{name}/proxy, its resource found in the member's
// discovery.
func objectLink(cluster, apiVersion, kind, ns, name string) string {
	q := url.Values{"cluster": {cluster}, "apiVersion": {apiVersion}, "kind": {kind}, "name": {name}}
	if ns != "" {
		q.Set("namespace", ns)
	}
	return "/object?" + q.Encode()
}

// proxyPrefix is where every member object the console shows is read.
const proxyPrefix = "/apis/cluster.karmada.io/v1alpha1/clusters/"

// groupVersionPath is apiVersion's path in a Kubernetes API: /api/v1 for
// the core group, /apis/<group>/<version> for the others.
func groupVersionPath(apiVersion string) string {
	if strings.Contains(apiVersion, "/") {
		return "/apis/" + apiVersion
	}
	return "/api/" + apiVersion
}

// resourceOf finds kind's resource in a discovery answer: its name and
// whether it is namespaced (subresources left out).
func resourceOf(list *metav1.APIResourceList, kind string) (resource string, namespaced, ok bool) {
	for _, r := range list.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return r.Name, r.Namespaced, true
		}
	}
	return "", false, false
}

// discoveryTTL is how long the console keeps a member's discovery of a
// group version (the resources of the kinds it links to).
const discoveryTTL = 5 * time.Minute

type discovered struct {
	list *metav1.APIResourceList
	at   time.Time
}

// memberResources is cluster's discovery of apiVersion, read through
// clusters/{name}/proxy as the user, kept discoveryTTL (discovery is the
// same for every user; the object itself is read as each user).
func (s *Server) memberResources(ctx context.Context, kube kubernetes.Interface, cluster, apiVersion string) (*metav1.APIResourceList, error) {
	key := cluster + " " + apiVersion
	if d, ok := s.discovery.Load(key); ok && s.now().Sub(d.(discovered).at) < discoveryTTL {
		return d.(discovered).list, nil
	}
	raw, err := kube.CoreV1().RESTClient().Get().AbsPath(proxyPrefix + cluster + "/proxy" + groupVersionPath(apiVersion)).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, fmt.Errorf("the discovery of %s in %s: %w", apiVersion, cluster, err)
	}
	s.discovery.Store(key, discovered{list: list, at: s.now()})
	return list, nil
}

// objectData is one member object, as YAML.
type objectData struct {
	Path, YAML string
}

// validSegment tells a value that may stand as one segment of an API path.
func validSegment(v string) bool {
	return v != "" && v != "." && v != ".." && !strings.ContainsAny(v, "/?#%")
}

// object shows a member object read through clusters/{name}/proxy as the
// user (a link from the search results): its resource is looked up in the
// member's discovery, not guessed from its kind.
func (s *Server) object(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cluster, apiVersion, kind, ns, name := q.Get("cluster"), q.Get("apiVersion"), q.Get("kind"), q.Get("namespace"), q.Get("name")
	gv := strings.Split(apiVersion, "/")
	if !validSegment(cluster) || !validSegment(kind) || !validSegment(name) || ns != "" && !validSegment(ns) ||
		len(gv) > 2 || slices.ContainsFunc(gv, func(p string) bool { return !validSegment(p) }) {
		http.Error(w, "an object is named by cluster, apiVersion, kind, name and, when namespaced, namespace", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberTimeout)
	defer cancel()
	kube := s.kubeOf(r)
	d := objectData{}
	list, err := s.memberResources(ctx, kube, cluster, apiVersion)
	if err == nil {
		resource, namespaced, ok := resourceOf(list, kind)
		switch {
		case !ok:
			err = fmt.Errorf("%s does not serve %s in %s", cluster, kind, apiVersion)
		case namespaced && ns == "":
			err = fmt.Errorf("%s %s is namespaced: the link names no namespace", apiVersion, kind)
		default:
			d.Path = proxyPrefix + cluster + "/proxy" + groupVersionPath(apiVersion)
			if namespaced {
				d.Path += "/namespaces/" + ns
			}
			d.Path += "/" + resource + "/" + name
			var raw []byte
			if raw, err = kube.CoreV1().RESTClient().Get().AbsPath(d.Path).DoRaw(ctx); err == nil {
				var y []byte
				if y, err = yaml.JSONToYAML(raw); err == nil {
					d.YAML = string(y)
				}
			}
		}
	}
	s.render(w, "object", page{Title: kind + " " + name + " in " + cluster, Nav: "search", Error: problem(err), Data: d})
}

// eventsData is the control plane's events.
type eventsData struct {
	Namespace string
	Events    []eventRow
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	evs, err := s.kubeOf(r).CoreV1().Events(ns).List(r.Context(), metav1.ListOptions{Limit: 500})
	d := eventsData{Namespace: ns}
	if err == nil {
		d.Events = eventRows(evs.Items)
	}
	s.render(w, "events", page{Title: "Events", Nav: "events", Error: problem(err), Data: d})
}

// liveClusters streams the overview's changes as server-sent events: each
// a cluster's row, rendered, or its removal. The page's script swaps the
// row in; nothing is listed again.
func (s *Server) liveClusters(w http.ResponseWriter, r *http.Request) {
	wt, err := s.karmadaOf(r).ClusterV1alpha1().Clusters().Watch(r.Context(), metav1.ListOptions{ResourceVersion: r.URL.Query().Get("rv")})
	s.live(w, r, wt, err, "cluster", func(obj runtime.Object) (string, string, bool) {
		c, ok := obj.(*clusterv1alpha1.Cluster)
		if !ok {
			return "", "", false
		}
		return c.Name, "clusterRow", true
	}, func(obj runtime.Object, buf *bytes.Buffer) error {
		return s.pages["overview"].ExecuteTemplate(buf, "clusterRow", clusterRow(obj.(*clusterv1alpha1.Cluster)))
	})
}

// errRelist is a live update the page cannot take in place: it lists
// again.
var errRelist = errors.New("the page must list again")

// live streams a watch's changes to a page as server-sent events of type
// event, each {"name": key, "html": the item rendered} or {"name": key,
// "deleted": "true"}; a watch that ends with an error (the page's list
// too old, 410), or an item render cannot fit in the page (errRelist),
// tells the page to reload. keyOf names an object (false:
// not one of the page's); render renders it. No change relists anything.
func (s *Server) live(w http.ResponseWriter, r *http.Request, wt watch.Interface, err error, event string,
	keyOf func(runtime.Object) (key, fragment string, ok bool), render func(runtime.Object, *bytes.Buffer) error) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	if err != nil {
		http.Error(w, problem(err), http.StatusForbidden)
		return
	}
	defer wt.Stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	ping := time.NewTicker(30 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			_, _ = io.WriteString(w, ": ping\n\n")
			flusher.Flush()
		case ev, ok := <-wt.ResultChan():
			if !ok {
				return // the page reconnects
			}
			if ev.Type == watch.Error {
				// The page's list is too old to watch from (410): it
				// lists again.
				_, _ = io.WriteString(w, "event: reload\ndata: {}\n\n")
				flusher.Flush()
				return
			}
			key, fragment, mine := keyOf(ev.Object)
			if !mine {
				continue
			}
			msg := map[string]string{"name": key}
			if ev.Type == watch.Deleted {
				msg["deleted"] = "true"
			} else {
				var buf bytes.Buffer
				if err := render(ev.Object, &buf); errors.Is(err, errRelist) {
					_, _ = io.WriteString(w, "event: reload\ndata: {}\n\n")
					flusher.Flush()
					return
				} else if err != nil {
					klog.V(2).InfoS("Rendering a live update", "fragment", fragment, "err", err)
					continue
				}
				msg["html"] = buf.String()
			}
			data, _ := json.Marshal(msg)
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// Run serves the console on addr (127.0.0.1:port) until ctx ends, and
// prints its URL on out once it listens.
func (s *Server) Run(ctx context.Context, addr string, out io.Writer, listening func(url string)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + l.Addr().String() + "/"
	_, _ = fmt.Fprintf(out, "Flotilla console: %s (Ctrl-C stops it)\n", url)
	if listening != nil {
		listening(url)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
