package bot

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"github.com/slack-go/slack"

	"sqlbot/agent"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// regionRows are 12 rows, more than the preview shows, with values that try
// to ping, link, break the code block and overflow a cell.
func regionRows() [][]any {
	rows := [][]any{
		{"west", int64(412), 10234.5},
		{"mountain", int64(305), 8120.25},
		{"midwest", int64(298), 7999.0},
		{"<!channel> & <https://evil.example|click>", int64(12), sum(0.1, 0.2)},
		{"south", int64(251), nil},
		{"northeast", int64(240), 6011.75},
		{"a very long region name that goes on and on and on", int64(3), 12.5},
		{"```oops```", int64(2), -4.0},
		{"tab\there\nnewline", int64(1), 1e-9},
		{"東京都", int64(1), 3.0},
		{"=HYPERLINK(\"http://x\")", int64(1), 1.0},
		{"last", int64(0), 0.0},
	}
	return rows
}

// sum adds at run time (constants would be exact).
func sum(a, b float64) float64 { return a + b }

func answerResult() *agent.Result {
	return &agent.Result{
		Question:   "Which regions had the most shipped orders in June 2025?",
		Answer:     "The west had the most shipped orders in June 2025: 412, ahead of the mountain region (305). <@U123> asked & I answered.",
		FinalSQL:   "SELECT c.region, COUNT(*) AS orders, SUM(o.qty * p.price) AS revenue\nFROM orders o\nJOIN customer_regions c ON c.id = o.customer_id\nJOIN products p ON p.id = o.product_id\nWHERE o.status = 'shipped' AND o.day >= '2025-06-01' AND o.day < '2025-07-01' AND o.note <> '<b>'\nGROUP BY c.region\nORDER BY orders DESC",
		Columns:    []string{"region", "orders", "revenue"},
		Rows:       regionRows(),
		Statements: []agent.Statement{{SQL: "DELETE FROM orders", Status: "refused", Layer: "guard", Reason: "forbidden keyword: delete"}, {SQL: "SELECT …", Status: "ok"}},
		Steps:      3,
		Provider:   "openai:gpt-4o-mini@https://internal.example/v1",
		Elapsed:    2100 * time.Millisecond,
		Outcome:    agent.Answered,
	}
}

func goldenResults() map[string]reply {
	refused := &agent.Statement{SQL: "DELETE FROM orders WHERE status = 'canceled'", Status: "refused", Layer: "guard", Reason: "forbidden keyword: delete"}
	small := &agent.Result{
		Answer:   "There were 1,204 shipped orders in June 2025.",
		FinalSQL: "SELECT COUNT(*) AS shipped FROM orders WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01'",
		Columns:  []string{"shipped"},
		Rows:     [][]any{{int64(1204)}},
		Steps:    2, Provider: "recorded", Elapsed: 400 * time.Millisecond, Outcome: agent.Answered,
	}
	longSQL := "SELECT " + strings.Repeat("amount + ", 600) + "1 AS total FROM orders WHERE note < 'x'"
	var wideCols []string
	var wideRow []any
	for i := range 45 {
		wideCols = append(wideCols, fmt.Sprintf("column_%02d", i))
		wideRow = append(wideRow, strings.Repeat("&", 40))
	}
	return map[string]reply{
		"answer":       renderResult(answerResult(), DefaultMaxCSVBytes),
		"answer_small": renderResult(small, DefaultMaxCSVBytes),
		"refusal": renderResult(&agent.Result{
			Answer:     "I can only read data, so I won't delete the canceled orders.",
			Statements: []agent.Statement{*refused},
			Refusal:    refused,
			Steps:      2, Provider: "openai:gpt-4o-mini", Elapsed: 1300 * time.Millisecond, Outcome: agent.Refused,
		}, DefaultMaxCSVBytes),
		"refusal_words": renderResult(&agent.Result{
			Answer: "I can't change data: I only answer questions by reading it.",
			Steps:  1, Provider: "openai:gpt-4o-mini", Elapsed: 700 * time.Millisecond, Outcome: agent.Refused,
		}, DefaultMaxCSVBytes),
		"budget": renderResult(&agent.Result{
			Answer: "I stopped after 6 steps without a final answer. The last SQL I tried was: SELECT …",
			Statements: []agent.Statement{
				{SQL: "SELECT * FROM orders", Status: "ok"},
				{SQL: "SELECT day, COUNT(*) FROM orders GROUP BY day HAVING COUNT(*) > 3", Status: "error", Reason: "no such column: dya"},
			},
			Steps: 6, Provider: "openai:gpt-4o-mini", Elapsed: 14200 * time.Millisecond, Outcome: agent.Budget,
		}, DefaultMaxCSVBytes),
		"unanswerable": renderResult(&agent.Result{
			Answer: "The data doesn't record customer satisfaction, so I can't tell which region is happiest.",
			Steps:  2, Provider: "openai:gpt-4o-mini", Elapsed: 900 * time.Millisecond, Outcome: agent.Unanswerable,
		}, DefaultMaxCSVBytes),
		"unanswerable_tried": renderResult(&agent.Result{
			Answer:     "Done.", // a model's claim, shown next to the statement that failed
			Statements: []agent.Statement{{SQL: "SELECT * FROM sqlite_sequence", Status: "error", Reason: "no such table: sqlite_sequence"}},
			Steps:      2, Provider: "openai:gpt-4o-mini", Elapsed: 700 * time.Millisecond, Outcome: agent.Unanswerable,
		}, DefaultMaxCSVBytes),
		"budget_refused": renderResult(&agent.Result{
			Answer: "I stopped after 6 model calls, the step limit, without reaching an answer.",
			Statements: []agent.Statement{
				{SQL: "DELETE FROM orders", Status: "refused", Layer: "guard", Reason: "forbidden keyword: delete"},
				{SQL: "SELECT * FROM orders", Status: "ok"},
				{SQL: "SELECT email FROM customers", Status: "refused", Layer: "authorizer", Reason: "not allowed to read customers.email <b>."},
			},
			Steps: 6, Provider: "openai:gpt-4o-mini", Elapsed: 9800 * time.Millisecond, Outcome: agent.Budget,
		}, DefaultMaxCSVBytes),
		"unanswerable_refused": renderResult(&agent.Result{
			Answer:     "Not in the data: the email addresses are private.",
			Statements: []agent.Statement{{SQL: "SELECT email FROM customers", Status: "refused", Layer: "authorizer", Reason: "not allowed to read customers.email"}},
			Steps:      2, Provider: "openai:gpt-4o-mini", Elapsed: 800 * time.Millisecond, Outcome: agent.Unanswerable,
		}, DefaultMaxCSVBytes),
		"error": renderFailure(failProvider),
		// What a question gets with no model: the recorded model's how-to
		// text with examples (agent.NoModelHelp, then the recorded questions).
		"no_model": noModelReply(&agent.Result{
			Answer:  agent.NoModelHelp + " Questions I can answer now, for example:\n• How many orders were shipped?\n• Which region has the most customers?",
			Outcome: agent.Failed, Provider: agent.RecordedProvider,
		}),
		"no_model_bare": noModelReply(nil),
		"long": renderResult(&agent.Result{
			Answer:   strings.Repeat("A long answer. ", 300),
			FinalSQL: longSQL,
			Columns:  wideCols,
			Rows:     [][]any{wideRow, wideRow},
			Steps:    4, Provider: "p", Elapsed: 65 * time.Second, Outcome: agent.Answered, Truncated: true,
		}, DefaultMaxCSVBytes),
		"limit_minute": renderNotice(limitText(state.Verdict{Rule: state.RuleUserMinute, Count: 6, Wait: 42 * time.Second})),
		"limit_length": renderNotice(lengthText(10000, 500)),
		"tables": renderNotice(tablesText([]Table{
			{Name: "orders", About: "One row per order line.\nStatus is <shipped> & co.", Rows: 12345},
			{Name: "odd`name", Rows: 1},
			{Name: "events", Rows: -1},
		})),
	}
}

func TestRenderGolden(t *testing.T) {
	for name, r := range goldenResults() {
		t.Run(name, func(t *testing.T) {
			checkLimits(t, r)
			got := golden(r)
			file := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(file, got, 0o666); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./bot -run TestRenderGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: rendering changed (go test ./bot -run TestRenderGolden -update to accept):\n%s", file, got)
			}
		})
	}
}

// golden renders r as the JSON Slack receives (text and blocks, as Block Kit
// Builder accepts them), followed by the CSV if any, for golden files.
func golden(r reply) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	msg := struct {
		Text   string        `json:"text"`
		Blocks []slack.Block `json:"blocks"`
	}{r.Text, r.Blocks}
	if err := enc.Encode(msg); err != nil {
		fmt.Fprintf(&buf, "encode: %v\n", err)
	}
	if r.CSV != nil {
		fmt.Fprintf(&buf, "-- %s (%s) --\n%s", csvFileName, r.CSVTitle, r.CSV)
	}
	return buf.Bytes()
}

// checkLimits asserts Slack's Block Kit limits on r.
func checkLimits(t *testing.T, r reply) {
	t.Helper()
	if r.Text == "" || utf8.RuneCountInString(r.Text) > maxFallbackChars+20 {
		t.Errorf("fallback text has %d characters", utf8.RuneCountInString(r.Text))
	}
	if len(r.Blocks) == 0 || len(r.Blocks) > maxBlocks {
		t.Errorf("%d blocks, want 1..%d", len(r.Blocks), maxBlocks)
	}
	total := 0
	for i, text := range blockTexts(t, r) {
		total += utf8.RuneCountInString(text)
		if n := utf8.RuneCountInString(text); n > maxSectionChars {
			t.Errorf("block %d: %d characters, want <= %d", i, n, maxSectionChars)
		}
		if strings.Count(text, "```")%2 != 0 {
			t.Errorf("block %d: unbalanced ``` in %q", i, text)
		}
	}
	if total > maxMessageChars {
		t.Errorf("blocks hold %d characters of text, want <= %d", total, maxMessageChars)
	}
	raw, err := json.Marshal(r.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	if err := slacktest.CheckBlocks(raw); err != nil {
		t.Errorf("Slack would refuse the blocks: %v", err)
	}
}

// blockTexts returns the mrkdwn of every section and context block, as sent.
func blockTexts(t *testing.T, r reply) []string {
	t.Helper()
	raw, err := json.Marshal(r.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Type, Text string
		} `json:"text"`
		Elements []struct {
			Type, Text string
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range blocks {
		if b.Text != nil {
			out = append(out, b.Text.Text)
		}
		for _, e := range b.Elements {
			out = append(out, e.Text)
		}
	}
	return out
}

func TestRenderEscapesData(t *testing.T) {
	r := renderResult(answerResult(), DefaultMaxCSVBytes)
	all := r.Text + strings.Join(blockTexts(t, r), "\n")
	for _, bad := range []string{"<!channel>", "<https://", "<@U123>", "<b>", " & "} {
		if strings.Contains(all, bad) {
			t.Errorf("rendered reply contains %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;!channel&gt;", "&lt;@U123&gt; asked &amp; I answered", "o.note &lt;&gt; '&lt;b&gt;'"} {
		if !strings.Contains(all, want) {
			t.Errorf("rendered reply lacks %q", want)
		}
	}
	if strings.Contains(all, "internal.example") {
		t.Error("the provider's endpoint is shown to users")
	}
}

func TestPreviewAligned(t *testing.T) {
	text, rows, cols := preview([]string{"region", "orders", "revenue"}, regionRows())
	if rows != previewRows || cols != 3 {
		t.Fatalf("preview shows %d rows and %d columns, want %d and 3", rows, cols, previewRows)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(text, "```"), "```")
	body = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", zeroWidthSpace, "").Replace(body)
	lines := strings.Split(body, "\n")
	if len(lines) != previewRows+2 {
		t.Fatalf("preview has %d lines, want header, rule and %d rows:\n%s", len(lines), previewRows, body)
	}
	// Every line has its numeric "orders" column ending at the same display column.
	header := lines[0]
	end := runewidth.StringWidth(header[:strings.Index(header, "orders")+len("orders")])
	for _, ln := range lines[2:] {
		// The prefix of ln that is end display columns wide ends in a digit.
		var prefix []rune
		for _, r := range ln {
			if runewidth.StringWidth(string(prefix)) >= end {
				break
			}
			prefix = append(prefix, r)
		}
		if runewidth.StringWidth(string(prefix)) != end || prefix[len(prefix)-1] < '0' || prefix[len(prefix)-1] > '9' {
			t.Errorf("row %q: orders column does not end at display column %d", ln, end)
		}
	}
	if !strings.Contains(body, "a very long region name that…  ") {
		t.Errorf("long value not cut with …:\n%s", body)
	}
	if strings.Contains(body, "\t") || strings.Count(body, "\n") != previewRows+1 {
		t.Errorf("control characters leaked into the preview:\n%s", body)
	}
}

func TestPreviewKeepsOneSection(t *testing.T) {
	// Values that escape to five times their length must still fit one section.
	row := []any{strings.Repeat("&", 30), strings.Repeat("<", 30), strings.Repeat(">", 30)}
	rows := make([][]any, 10)
	for i := range rows {
		rows[i] = row
	}
	text, shown, _ := preview([]string{"a", "b", "c"}, rows)
	if n := utf8.RuneCountInString(text); n > maxSectionChars {
		t.Fatalf("preview has %d characters", n)
	}
	if shown == 0 || shown == 10 {
		t.Errorf("shown = %d, want some rows dropped but not all", shown)
	}
}

func TestCSV(t *testing.T) {
	r := renderResult(answerResult(), DefaultMaxCSVBytes)
	if r.CSV == nil {
		t.Fatal("no CSV although the preview cut rows")
	}
	recs, err := csv.NewReader(bytes.NewReader(r.CSV)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(regionRows()) {
		t.Fatalf("CSV has %d records, want header + %d", len(recs), len(regionRows()))
	}
	if got := recs[11][0]; got != `'=HYPERLINK("http://x")` {
		t.Errorf("formula cell = %q, want it defused with '", got)
	}
	if got := recs[8][2]; got != "-4" {
		t.Errorf("negative number = %q, want -4 (numbers are not defused)", got)
	}
	if got := recs[4][2]; got != "0.30000000000000004" {
		t.Errorf("float = %q, want the exact value", got)
	}
	if got := recs[5][2]; got != "" {
		t.Errorf("NULL = %q, want empty", got)
	}
	small := renderResult(&agent.Result{FinalSQL: "SELECT 1", Columns: []string{"x"}, Rows: [][]any{{int64(1)}}, Outcome: agent.Answered}, DefaultMaxCSVBytes)
	if small.CSV != nil {
		t.Error("CSV for a result that fits the preview")
	}
}

func TestCodeBlockCannotBeClosed(t *testing.T) {
	for _, sql := range []string{"SELECT '```' AS x", "`a`", "SELECT 1 -- ```\n<!here>", strings.Repeat("`", 7000)} {
		got := codeBlock(sql)
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "```"), "```")
		if strings.Contains(inner, "``") || strings.Contains(got, "<") {
			t.Errorf("codeBlock(%.40q) = %.80q: can end early or holds a raw <", sql, got)
		}
		if utf8.RuneCountInString(got) > maxSectionChars {
			t.Errorf("codeBlock(%.40q) has %d characters", sql, utf8.RuneCountInString(got))
		}
	}
}

func TestSplitMrkdwn(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("*Report*\n```\n")
	for i := range 400 {
		fmt.Fprintf(&sb, "| q%03d | PASS | 0.%02d |\n", i, i%100)
	}
	sb.WriteString("```\nDone.")
	parts := splitMrkdwn(sb.String(), maxSectionChars)
	if len(parts) < 3 {
		t.Fatalf("%d parts, want the report split", len(parts))
	}
	joined := strings.Join(parts, "")
	for i, p := range parts {
		if n := utf8.RuneCountInString(p); n > maxSectionChars {
			t.Errorf("part %d has %d characters", i, n)
		}
		if strings.Count(p, "```")%2 != 0 {
			t.Errorf("part %d has unbalanced ```", i)
		}
	}
	for _, want := range []string{"| q000 |", "| q399 |", "Done."} {
		if !strings.Contains(joined, want) {
			t.Errorf("split lost %q", want)
		}
	}
	many := renderNotice(strings.Repeat(strings.Repeat("x", 2999)+"\n", 80))
	checkLimits(t, many)
	texts := blockTexts(t, many)
	if last := texts[len(texts)-1]; last != cutNote {
		t.Errorf("a report too long for one message ends with %q, want the cut note", last)
	}
}

// TestPreviewNoBidiControls: a value with a right-to-left override (or any
// other bidi control) cannot reorder the preview that people read.
func TestPreviewNoBidiControls(t *testing.T) {
	text, _, _ := preview([]string{"name", "n"}, [][]any{{"evil\u202eusers", int64(1)}, {"\u2066isolate\u2069", int64(2)}})
	for _, r := range text {
		if unicode.Is(unicode.Bidi_Control, r) {
			t.Fatalf("preview contains bidi control %U:\n%s", r, text)
		}
	}
	if !strings.Contains(text, "evil\uFFFDusers") {
		t.Errorf("the value is lost rather than shown with its control replaced:\n%s", text)
	}
}
