package bot_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"strings"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/bot/chart"
	"sqlbot/bot/slacktest"
)

// monthly is an answered monthly-revenue question: 12 months of 2025.
func monthly(q string) *agent.Result {
	rows := make([][]any, 12)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("2025-%02d", i+1), 40000.5 + float64(i*731%9000)}
	}
	return &agent.Result{
		Question: q, Answer: "Revenue by month is in the table.", Outcome: agent.Answered,
		FinalSQL: "SELECT substr(day, 1, 7) AS month, round(sum(line_total), 2) AS revenue FROM sales GROUP BY month",
		Columns:  []string{"month", "revenue"}, Rows: rows, Steps: 2, Provider: "fake:chart", Elapsed: time.Second,
	}
}

// A monthly-revenue answer gets a PNG chart of its 12 points in the
// question's thread, after the reply (and its CSV); a one-row answer gets none.
func TestChartAttachedInThread(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		if strings.Contains(req.Question, "monthly") {
			return monthly(req.Question), nil
		}
		return echo(req.Question, 1), nil
	}
	h := start(t, ans, options{})
	const ts, one = "1700020000.000100", "1700020000.000200"
	h.send(slacktest.MentionEvent(channel, user, "monthly revenue for 2025", ts, ""))
	reply := h.waitMessages(1)[0]
	if err := h.s.Wait(h.ctx(), func() bool { return len(filesNamed(h.s, ".png")) == 1 }); err != nil {
		t.Fatal("no chart uploaded:", err)
	}
	f := filesNamed(h.s, ".png")[0]
	if f.Channel != channel || f.ThreadTS != ts {
		t.Errorf("chart in %s thread %q, want %s thread %s", f.Channel, f.ThreadTS, channel, ts)
	}
	img, err := png.Decode(bytes.NewReader(f.Content))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != chart.Width || b.Dy() != chart.Height {
		t.Errorf("chart is %v, want %dx%d", b, chart.Width, chart.Height)
	}
	res := monthly("monthly revenue for 2025")
	spec, why := chart.Plan(res.Columns, res.Rows, res.Question)
	if why != chart.OK || len(spec.Points) != 12 || spec.Kind != chart.Line {
		t.Fatalf("Plan: %v, %+v", why, spec)
	}
	want, err := chart.Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Content, want) {
		t.Errorf("the chart attached is not the chart of the answer's 12 rows")
	}
	if !strings.Contains(f.AltTxt, "12 points from 2025-01 to 2025-12") {
		t.Errorf("alt text %q does not describe the 12 points", f.AltTxt)
	}
	// The chart comes after the reply, and after the CSV the reply promises.
	csvs := filesNamed(h.s, ".csv")
	files := h.s.Files()
	if len(csvs) != 1 || files[len(files)-1].Name != f.Name {
		t.Errorf("files in order %v: want the CSV, then the chart", files)
	}
	if reply.ThreadTS != ts {
		t.Errorf("reply in thread %q", reply.ThreadTS)
	}

	h.send(slacktest.MentionEvent(channel, user, "how many orders?", one, ""))
	h.waitMessages(2)
	if posted := h.postedAfterStop(); len(posted) != 2 {
		t.Errorf("%d replies, want 2", len(posted))
	}
	for _, f := range h.s.Files() {
		if f.ThreadTS == one {
			t.Errorf("the one-row answer got a file: %s", f.Name)
		}
	}
}

// A chart that cannot be uploaded is said in one line in the thread, and
// the reply stands.
func TestChartUploadFailureSaysSo(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		res := monthly(req.Question)
		res.Rows = res.Rows[:6] // fits the preview: no CSV
		return res, nil
	}
	h := start(t, ans, options{})
	h.s.FailNext("files.getUploadURLExternal", "internal_error")
	const ts = "1700020100.000100"
	h.send(slacktest.MentionEvent(channel, user, "monthly revenue for the first half", ts, ""))
	msgs := h.waitMessages(2)
	if got := text(t, msgs[1]); msgs[1].ThreadTS != ts || !strings.Contains(got, "couldn't attach the chart") || strings.Count(strings.TrimSpace(msgs[1].Text), "\n") != 0 {
		t.Errorf("second message in thread %q: %q; want one line saying the chart is missing", msgs[1].ThreadTS, got)
	}
	if !strings.Contains(text(t, msgs[0]), "Revenue by month") {
		t.Errorf("the reply is not first: %q", text(t, msgs[0]))
	}
	if len(h.s.Files()) != 0 {
		t.Errorf("%d files, want none", len(h.s.Files()))
	}
}
