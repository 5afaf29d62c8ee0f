package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// audit lists what a page lacks for assistive technology and keyboard
// users: a language, one main landmark and one h1, a name for every
// field, button, link and meter, a caption for every table, a scope for
// every column header, unique ids, and nothing clickable that the
// keyboard cannot reach.
const audit = `(() => {
  const problems = [];
  const name = (el) => (el.innerText || el.getAttribute("aria-label") || el.title || "").trim();
  if (!document.documentElement.lang) problems.push("the page has no lang");
  if (document.querySelectorAll("main").length !== 1) problems.push("not one main landmark");
  if (document.querySelectorAll("h1").length !== 1) problems.push("not one h1");
  for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
    if (!(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby")) problems.push("a field without a label: " + el.outerHTML.slice(0, 100));
  }
  for (const el of document.querySelectorAll("button, a[href]")) {
    if (!name(el)) problems.push("a control without a name: " + el.outerHTML.slice(0, 100));
  }
  for (const el of document.querySelectorAll("meter, progress")) {
    if (!el.title && !el.getAttribute("aria-label")) problems.push("a meter without a name");
  }
  for (const el of document.querySelectorAll("img")) {
    if (!el.hasAttribute("alt")) problems.push("an image without alt");
  }
  for (const el of document.querySelectorAll("table")) {
    if (!el.querySelector("caption") && !el.getAttribute("aria-label")) problems.push("a table without a caption: #" + el.id);
  }
  for (const el of document.querySelectorAll("thead th")) {
    if (!el.getAttribute("scope")) problems.push("a column header without scope: " + el.innerText);
  }
  for (const el of document.querySelectorAll("[onclick], [data-action]")) {
    if (el.tabIndex < 0) problems.push("clickable but not focusable: " + el.outerHTML.slice(0, 100));
  }
  const ids = new Set();
  for (const el of document.querySelectorAll("[id]")) {
    if (ids.has(el.id)) problems.push("a duplicate id: " + el.id);
    ids.add(el.id);
  }
  return problems.join("\n");
})()`

// focused describes the element that has the keyboard focus.
const focused = `(() => { const e = document.activeElement; return e ? (e.getAttribute("href") || e.id || e.tagName) : ""; })()`

// TestPagesAreAccessible: every page passes the audit, and the keyboard
// alone goes from the skip link to the content and through the
// navigation, and runs a search.
func TestPagesAreAccessible(t *testing.T) {
	url := startConsole(t, framework.Env.Host.Kubeconfig)
	ctx := browser(t)
	for _, p := range []string{"", "clusters/member1", "workloads", "policies", "rollouts", "search", "search?q=kind:Pod", "events"} {
		eventually(t, ctx, url+p, 30*time.Second, false, func() string {
			if s, _ := text(ctx, "h1"); s == "" {
				return "no heading yet"
			}
			return ""
		})
		if problems, err := evaluate[string](ctx, audit); err != nil || problems != "" {
			t.Errorf("/%s: %v\n%s", p, err, problems)
		}
	}

	key := func(k string) string {
		t.Helper()
		kctx, cancel := context.WithTimeout(ctx, actionTimeout)
		defer cancel()
		if err := chromedp.Do(kctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
		f, _ := evaluate[string](ctx, focused)
		return f
	}
	eventually(t, ctx, url+"search", 30*time.Second, false, func() string {
		if s, _ := text(ctx, "h1"); s == "" {
			return "no heading yet"
		}
		return ""
	})
	// The first Tab reaches the skip link; Enter goes to the content.
	if f := key(kb.Tab); f != "#main" {
		t.Fatalf("the first Tab focused %q, want the skip link (#main)", f)
	}
	key(kb.Enter)
	if h, _ := evaluate[string](ctx, "location.hash"); h != "#main" {
		t.Errorf("Enter on the skip link: location.hash %q, want #main", h)
	}
	// From the top, Tab goes through every navigation link, then to the
	// search field.
	if _, err := evaluate[bool](ctx, `(() => { window.scrollTo(0, 0); document.querySelector("a.skip").focus(); return true; })()`); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for range 12 {
		f := key(kb.Tab)
		seen = append(seen, f)
		if f == "q" {
			break
		}
	}
	for _, nav := range []string{"/", "/workloads", "/policies", "/rollouts", "/search", "/events", "q"} {
		if !strings.Contains(" "+strings.Join(seen, " ")+" ", " "+nav+" ") {
			t.Errorf("Tab never reached %s: focus went %v", nav, seen)
		}
	}
	// Typed and submitted from the keyboard, the search runs.
	for _, r := range "kind:Pod" {
		key(string(r))
	}
	key(kb.Enter)
	onPage(t, 30*time.Second, func() string {
		if s, _ := text(ctx, "#total"); !strings.Contains(s, "found") {
			return "no search result after Enter in the field"
		}
		return ""
	})
	screenshot(t, ctx, "keyboard-search")
}
