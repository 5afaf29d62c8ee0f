package console

import (
	"context"
	"net/http"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// tokenCookie holds, in the user's browser, the bearer token the user
// logged in with (login mode); the console keeps no copy.
const tokenCookie = "flotilla-console-token"

// userClients are the clients a request reads with.
type userClients struct {
	kube    kubernetes.Interface
	karmada versioned.Interface
}

type userKey struct{}

// kubeOf and karmadaOf are the clients of the request's user.
func (s *Server) kubeOf(r *http.Request) kubernetes.Interface { return s.userOf(r).kube }

func (s *Server) karmadaOf(r *http.Request) versioned.Interface { return s.userOf(r).karmada }

func (s *Server) userOf(r *http.Request) userClients {
	if u, ok := r.Context().Value(userKey{}).(userClients); ok {
		return u
	}
	return userClients{kube: s.kube, karmada: s.karmada}
}

// NewLogin returns the console in login mode, as the chart runs it in the
// host cluster: it reaches the control plane at cfg's server (and CA)
// only, never with cfg's credentials; each user logs in with a bearer
// token of their own (a service account's, an OIDC ID token), which the
// browser keeps in an HttpOnly cookie and sends with every request.
func NewLogin(cfg *rest.Config) (*Server, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	base := rest.AnonymousClientConfig(cfg)
	base = rest.AddUserAgent(base, "flotillactl-console")
	return &Server{pages: pages, now: time.Now, token: newToken(), login: base}, nil
}

// clientsFor builds the clients of a bearer token.
func (s *Server) clientsFor(token string) (userClients, error) {
	cfg := rest.CopyConfig(s.login)
	cfg.BearerToken = token
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return userClients{}, err
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return userClients{}, err
	}
	return userClients{kube: kube, karmada: karmada}, nil
}

// requireLogin sends a request without a token to the login page, and
// reads every other one with the clients of its token.
func (s *Server) requireLogin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.login == nil || r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		c, err := r.Cookie(tokenCookie)
		if err != nil || c.Value == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		u, err := s.clientsFor(c.Value)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// loginData is the login page.
type loginData struct {
	Token string
}

func (s *Server) loginPage(w http.ResponseWriter, _ *http.Request) {
	s.render(w, "login", page{Title: "Log in", Data: loginData{Token: s.token}})
}

// loginPost checks the token with the control plane (who it is) and, when
// it authenticates, gives it to the browser to keep.
func (s *Server) loginPost(w http.ResponseWriter, r *http.Request) {
	if s.login == nil {
		http.NotFound(w, r)
		return
	}
	if !s.sameOrigin(r) {
		http.Error(w, "refused: the request did not come from the console's own page", http.StatusForbidden)
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("bearer"))
	u, err := s.clientsFor(token)
	if err == nil {
		_, err = u.kube.AuthenticationV1().SelfSubjectReviews().Create(r.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	}
	if token == "" || err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		msg := "the control plane does not accept this token"
		if err != nil {
			msg += ": " + problem(err)
		}
		s.render(w, "login", page{Title: "Log in", Error: msg, Data: loginData{Token: s.token}})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout forgets the token in the browser.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if !s.sameOrigin(r) {
		http.Error(w, "refused: the request did not come from the console's own page", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
