package web_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium with a profile of its own and returns
// a context to drive one tab of it; the browser ends with the test. The test
// is skipped when Chromium is missing, except in CI (CI=true), where that
// fails it: CI installs Chromium, so a missing one is a broken setup.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if _, serr := os.Stat(chromiumPath); serr == nil {
			path, err = chromiumPath, nil
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (CI installs the Debian package chromium): %v", err)
		}
		t.Skipf("chromium is not installed: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests may run as root, where the sandbox does not start
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), // /dev/shm is small in containers
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first Run starts the browser, which lives as long as ctx: no
	// timeout on this one (see tab for the others).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// tab runs steps in the browser's tab within a minute.
func tab(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// submit runs steps that post a form and waits for the page they load.
func submit(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := chromedp.RunResponse(tctx, steps...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if resp.Status != 200 {
		t.Errorf("%s: HTTP %d", what, resp.Status)
	}
}

// eval evaluates a JavaScript expression in the page through the DevTools
// protocol (which the page's policy does not govern: the page itself runs
// no script).
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// texts returns the text content of every element matching the CSS
// selector, in document order.
func texts(t *testing.T, ctx context.Context, selector string) []string {
	t.Helper()
	return eval[[]string](t, ctx, `Array.from(document.querySelectorAll(`+jsString(selector)+`), e => e.textContent)`)
}

// text returns the text content of the one element matching selector.
func text(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	got := texts(t, ctx, selector)
	if len(got) != 1 {
		t.Fatalf("%d elements match %s, want 1", len(got), selector)
	}
	return got[0]
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// recordedButton is the selector of the page's button for a recorded
// question.
func recordedButton(q string) chromedp.CSS {
	return chromedp.CSS(`button[name="question"][value="` + q + `"]`)
}

// In a real browser: a recorded question picked on the page shows its
// answer, SQL, rows and footer; a DELETE shows as a refusal, with its layer,
// reason and SQL; and data or a question that reads as HTML shows as text,
// with no script element, no element of its markup and no global set.
func TestBrowser(t *testing.T) {
	srv := serve(t, config())
	ctx := browser(t)
	tab(t, ctx, "open the page", chromedp.Navigate(srv.URL+"/"))
	if n := eval[int](t, ctx, `document.querySelectorAll('button[name="question"]').length`); n != 3 {
		t.Errorf("the page offers %d recorded questions, want 3", n)
	}

	submit(t, ctx, "pick "+qShipped, chromedp.Click(recordedButton(qShipped)))
	if class := eval[string](t, ctx, `document.querySelector('#result').className`); !strings.Contains(class, "outcome-answered") {
		t.Errorf("#result has class %q, want outcome-answered", class)
	}
	if got := text(t, ctx, "#answer"); !strings.Contains(got, "2") || !strings.Contains(got, "shipped") {
		t.Errorf("#answer = %q, want the figure", got)
	}
	if got := text(t, ctx, "#sql"); !strings.Contains(got, "SELECT count(*) AS shipped FROM orders WHERE status = 'shipped'") {
		t.Errorf("#sql = %q", got)
	}
	if got := texts(t, ctx, "#rows thead th"); !slices.Equal(got, []string{"shipped"}) {
		t.Errorf("#rows columns %q, want [shipped]", got)
	}
	if got := texts(t, ctx, "#rows tbody td"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("#rows cells %q, want [2]", got)
	}
	footer := map[string]string{}
	for _, part := range []string{"provider", "steps", "time", "tokens"} {
		footer[part] = text(t, ctx, "#footer ."+part)
	}
	if footer["provider"] != "recorded" || footer["steps"] != "2 steps" || !strings.HasSuffix(footer["time"], "s") || !strings.Contains(footer["tokens"], "tokens") {
		t.Errorf("#footer = %v", footer)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#refusal').length`); n != 0 {
		t.Errorf("an answer shows %d refusals", n)
	}

	submit(t, ctx, "pick "+qDelete, chromedp.Click(recordedButton(qDelete)))
	if class := eval[string](t, ctx, `document.querySelector('#result').className`); !strings.Contains(class, "outcome-refused") {
		t.Errorf("#result has class %q, want outcome-refused", class)
	}
	if got := text(t, ctx, "#refusal .layer"); got != "guard" {
		t.Errorf("#refusal .layer = %q, want guard", got)
	}
	if got := text(t, ctx, "#refusal .reason"); !strings.Contains(got, "delete") && !strings.Contains(got, "SELECT") {
		t.Errorf("#refusal .reason = %q, want the guard's reason", got)
	}
	if got := text(t, ctx, "#refusal .refused-sql"); !strings.Contains(got, "DELETE FROM orders WHERE status = 'canceled'") {
		t.Errorf("#refusal .refused-sql = %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#rows').length`); n != 0 {
		t.Error("a refusal shows rows")
	}

	// The notes hold markup, asked through the question box.
	tab(t, ctx, "type "+qNotes, chromedp.SetValue(chromedp.CSS("#question"), qNotes))
	submit(t, ctx, "ask "+qNotes, chromedp.Click(chromedp.CSS(`form.ask button[type="submit"]`)))
	if got := texts(t, ctx, "#rows tbody td"); !slices.Contains(got, scriptValue) || !slices.Contains(got, "plain & simple") {
		t.Errorf("#rows cells %q, want the notes as text, %q among them", got, scriptValue)
	}
	noMarkup(t, ctx, "the page of the notes")

	// A monthly series comes with its chart, which the browser draws under
	// the page's policy (an image it refused would have no width).
	tab(t, ctx, "type "+qMonthly, chromedp.SetValue(chromedp.CSS("#question"), qMonthly))
	submit(t, ctx, "ask "+qMonthly, chromedp.Click(chromedp.CSS(`form.ask button[type="submit"]`)))
	if w := eval[float64](t, ctx, `(() => { const i = document.querySelector('#chart > img'); return i && i.complete ? i.naturalWidth : 0 })()`); w < 200 {
		t.Errorf("the chart of %q is drawn %v pixels wide, want it shown", qMonthly, w)
	}
	if alt := eval[string](t, ctx, `document.querySelector('#chart > img').alt`); !strings.Contains(alt, "6 points") {
		t.Errorf("the chart's alt text is %q", alt)
	}
	// A question that reads as markup is shown as text too (and, not
	// recorded, gets the answer that no model is configured).
	tab(t, ctx, "type markup", chromedp.SetValue(chromedp.CSS("#question"), scriptValue))
	submit(t, ctx, "ask markup", chromedp.Click(chromedp.CSS(`form.ask button[type="submit"]`)))
	if got := text(t, ctx, "#result .question"); got != scriptValue {
		t.Errorf("#result .question = %q, want the question as text", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#question').value`); got != scriptValue {
		t.Errorf("the question box holds %q, want the question as typed", got)
	}
	noMarkup(t, ctx, "the page of a question that reads as markup")
	if n := eval[int](t, ctx, `document.querySelectorAll('#result .question').length`); n != 1 {
		t.Errorf("%d questions shown, want 1", n)
	}
}

// noMarkup fails the test if the page holds a script element or an element
// of the test data's markup, or if a script set the data's global.
func noMarkup(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // time for an image's onerror, had one been made
	for expr, want := range map[string]any{
		`document.querySelectorAll('script').length`:                             0.0,
		`document.querySelectorAll('main img:not(#chart > img), main b').length`: 0.0,
		`typeof window.sqlbotPwned`:                                              "undefined",
	} {
		if got := eval[any](t, ctx, expr); got != want {
			t.Errorf("%s: %s = %v, want %v", where, expr, got, want)
		}
	}
}
