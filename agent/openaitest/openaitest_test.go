package openaitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent/openaitest"
)

// client returns a real go-openai client for s, with key as its API key.
func client(s *openaitest.Server, key string, hc *http.Client) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return openai.NewClientWithConfig(cfg)
}

// sqlTools are the tools offered in these tests, declared as the agent would.
func sqlTools() []openai.Tool {
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":` + props + `,"required":` + string(req) + `,"additionalProperties":false}`)
	}
	return []openai.Tool{
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "list_tables", Parameters: obj(`{}`)}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "run_sql", Strict: true, Parameters: obj(`{"sql":{"type":"string"}}`, "sql")}},
	}
}

func question(q string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You answer questions about a SQLite database."},
		{Role: openai.ChatMessageRoleUser, Content: q},
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Push(
		openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT count(*) FROM orders"}`)),
		openaitest.Reply{Content: "There are 42 orders.", PromptTokens: 120, CompletionTokens: 9},
	)
	c := client(s, openaitest.DefaultAPIKey, nil)
	ctx := t.Context()

	msgs := question("How many orders?")
	req := openai.ChatCompletionRequest{Model: "gpt-test", Messages: msgs, Tools: sqlTools()}
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish_reason = %q, want tool_calls", ch.FinishReason)
	}
	if len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("got %d tool calls, want 1", len(ch.Message.ToolCalls))
	}
	call := ch.Message.ToolCalls[0]
	if call.ID == "" || call.Type != openai.ToolTypeFunction || call.Function.Name != "run_sql" ||
		call.Function.Arguments != `{"sql":"SELECT count(*) FROM orders"}` {
		t.Errorf("tool call = %+v", call)
	}
	if ch.Message.Role != openai.ChatMessageRoleAssistant || ch.Message.Content != "" {
		t.Errorf("message role %q content %q, want assistant and no content", ch.Message.Role, ch.Message.Content)
	}
	if resp.Usage.PromptTokens < 1 || resp.Usage.CompletionTokens < 1 ||
		resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage = %+v, want positive counts that add up", resp.Usage)
	}
	if !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Object != "chat.completion" || resp.Model != "gpt-test" {
		t.Errorf("envelope = id %q object %q model %q", resp.ID, resp.Object, resp.Model)
	}

	msgs = append(msgs, ch.Message, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: `{"columns":["count(*)"],"rows":[[42]]}`,
	})
	req.Messages = msgs
	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if got := resp.Choices[0]; got.Message.Content != "There are 42 orders." || got.FinishReason != openai.FinishReasonStop || len(got.Message.ToolCalls) != 0 {
		t.Errorf("final choice = %+v", got)
	}
	if resp.Usage.PromptTokens != 120 || resp.Usage.CompletionTokens != 9 || resp.Usage.TotalTokens != 129 {
		t.Errorf("usage = %+v, want 120+9=129", resp.Usage)
	}

	reqs := s.Requests()
	if len(reqs) != 2 || s.Count() != 2 || s.Pending() != 0 {
		t.Fatalf("requests %d, count %d, pending %d; want 2, 2, 0", len(reqs), s.Count(), s.Pending())
	}
	if got := openaitest.LastToolResults(reqs[1]); len(got) != 1 || got[call.ID] != `{"columns":["count(*)"],"rows":[[42]]}` {
		t.Errorf("LastToolResults = %v", got)
	}
	if got := openaitest.LastToolResults(reqs[0]); len(got) != 0 {
		t.Errorf("LastToolResults(first request) = %v, want none", got)
	}
	if got := openaitest.Tools(reqs[0]); strings.Join(got, ",") != "list_tables,run_sql" {
		t.Errorf("Tools = %v", got)
	}
	if got := openaitest.SystemPrompt(reqs[0]); got != "You answer questions about a SQLite database." {
		t.Errorf("SystemPrompt = %q", got)
	}
	if got := openaitest.LastUser(reqs[1]); got != "How many orders?" {
		t.Errorf("LastUser = %q", got)
	}
	ex := s.Exchanges()[0]
	if ex.Method != http.MethodPost || ex.Path != "/v1/chat/completions" ||
		ex.Header.Get("Authorization") != "Bearer "+openaitest.DefaultAPIKey || ex.Status != http.StatusOK || !ex.Scripted {
		t.Errorf("exchange = %s %s auth %q status %d scripted %v", ex.Method, ex.Path, ex.Header.Get("Authorization"), ex.Status, ex.Scripted)
	}
	var raw map[string]any
	if err := json.Unmarshal(ex.Body, &raw); err != nil || raw["model"] != "gpt-test" {
		t.Errorf("raw body = %s (%v)", ex.Body, err)
	}
}

// TestWireShape checks the response bytes themselves, which go-openai would
// accept even if they were not what the real API sends.
func TestWireShape(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Push(openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT 1"}`)), openaitest.Final("done"))
	body := `{"model":"m","messages":[{"role":"user","content":"q"}]}`
	for _, want := range []struct {
		content any
		finish  string
	}{{nil, "tool_calls"}, {"done", "stop"}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-test")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Object  string `json:"object"`
			Choices []struct {
				Message      map[string]any `json:"message"`
				FinishReason string         `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		err = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		if err != nil || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("decode: %v, content-type %q", err, res.Header.Get("Content-Type"))
		}
		msg := got.Choices[0].Message
		content, present := msg["content"]
		if !present || content != want.content || got.Choices[0].FinishReason != want.finish {
			t.Errorf("message = %v, finish %q; want content %v (present), finish %q", msg, got.Choices[0].FinishReason, want.content, want.finish)
		}
		if want.finish == "tool_calls" {
			calls, _ := msg["tool_calls"].([]any)
			fn, _ := calls[0].(map[string]any)["function"].(map[string]any)
			if _, isString := fn["arguments"].(string); !isString {
				t.Errorf("arguments = %T, want a JSON string", fn["arguments"])
			}
		}
		for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
			if _, ok := got.Usage[k].(float64); !ok {
				t.Errorf("usage lacks %s: %v", k, got.Usage)
			}
		}
	}
}

// TestValidation sends requests through the real client and checks which the
// server refuses as the real API would, without consuming the script.
func TestValidation(t *testing.T) {
	call := func(id, name, args string) openai.ToolCall {
		return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
	}
	asst := func(calls ...openai.ToolCall) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: calls}
	}
	tool := func(id, content string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: content}
	}
	user := func(q string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: q}
	}
	fn := func(name string, params any, strict bool) openai.Tool {
		return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name, Parameters: params, Strict: strict}}
	}
	a1, a2 := call("call_a", "run_sql", `{"sql":"SELECT 1"}`), call("call_b", "list_tables", `{}`)

	tests := []struct {
		name   string
		req    openai.ChatCompletionRequest
		status int // 200 or the refusal's status
	}{
		{"round trip", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), tool("call_a", "[]")}}, 200},
		{"parallel calls answered out of order", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1, a2), tool("call_b", "[]"), tool("call_a", "[]"), user("more")}}, 200},
		{"assistant with text and calls", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), {Role: "assistant", Content: "Let me look.", ToolCalls: []openai.ToolCall{a1}}, tool("call_a", "x")}}, 200},
		{"user parts", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "q"}}}}}, 200},
		{"developer role", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "developer", Content: "rules"}, user("q")}}, 200},
		{"offered tools", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: sqlTools(), ToolChoice: "auto"}, 200},
		{"tool without parameters key", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("x", json.RawMessage(`{}`), false)}}, 200},
		{"tool choice by name", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: sqlTools(), ToolChoice: openai.ToolChoice{Type: "function", Function: openai.ToolFunction{Name: "run_sql"}}}, 200},

		{"user message after unanswered call", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), user("again")}}, 400},
		{"conversation ends on unanswered call", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1)}}, 400},
		{"one of two calls answered", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1, a2), tool("call_a", "[]")}}, 400},
		{"tool message without call", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), tool("call_a", "[]")}}, 400},
		{"tool message with the wrong id", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), tool("call_zzz", "[]")}}, 400},
		{"tool message answered twice", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), tool("call_a", "[]"), tool("call_a", "[]")}}, 400},
		{"tool message after an intervening user", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), tool("call_a", "[]"), user("u"), tool("call_a", "[]")}}, 400},
		{"tool message with empty content (go-openai omits it)", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), tool("call_a", "")}}, 400},
		{"tool message without id", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(a1), tool("", "x")}}, 400},
		{"history call without type", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(openai.ToolCall{ID: "c", Function: openai.FunctionCall{Name: "run_sql", Arguments: "{}"}}), tool("c", "x")}}, 400},
		{"history call with empty arguments", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(call("c", "run_sql", "")), tool("c", "x")}}, 400},
		{"history call without id", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), asst(call("", "run_sql", "{}"))}}, 400},
		{"user message with empty content", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("")}}, 400},
		{"assistant with neither content nor calls", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q"), {Role: "assistant"}, user("q")}}, 400},
		{"unknown role", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "bot", Content: "q"}}}, 400},
		{"no messages", openai.ChatCompletionRequest{}, 400},
		{"tool name with a space", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("run sql", json.RawMessage(`{"type":"object"}`), false)}}, 400},
		{"tool name of 65 characters", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn(strings.Repeat("a", 65), json.RawMessage(`{"type":"object"}`), false)}}, 400},
		{"empty tool name", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("", json.RawMessage(`{"type":"object"}`), false)}}, 400},
		{"tool with nil parameters (sent as null)", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("x", nil, false)}}, 400},
		{"tool parameters not an object schema", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("x", json.RawMessage(`{"type":"string"}`), false)}}, 400},
		{"strict schema without additionalProperties", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("x", json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"]}`), true)}}, 400},
		{"strict schema with an optional property", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{fn("x", json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"additionalProperties":false}`), true)}}, 400},
		{"tool of another type", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: []openai.Tool{{Type: "web_search"}}}, 400},
		{"tool_choice without tools", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, ToolChoice: "auto"}, 400},
		{"tool_choice naming a tool not offered", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, Tools: sqlTools(), ToolChoice: openai.ToolChoice{Type: "function", Function: openai.ToolFunction{Name: "drop_table"}}}, 400},
		{"parallel_tool_calls without tools", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{user("q")}, ParallelToolCalls: false}, 400},
	}

	s := openaitest.NewServer(t)
	s.Handle(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Final("ok") })
	c := client(s, openaitest.DefaultAPIKey, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Model = "gpt-test"
			before := s.Count()
			_, err := c.CreateChatCompletion(t.Context(), tt.req)
			exs := s.Exchanges()
			if len(exs) != before+1 {
				t.Fatalf("server saw %d requests, want 1", len(exs)-before)
			}
			ex := exs[before]
			if tt.status == 200 {
				if err != nil || !ex.Scripted {
					t.Errorf("CreateChatCompletion: %v (scripted %v), want success; body %s", err, ex.Scripted, ex.Body)
				}
				return
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.status || apiErr.Type != "invalid_request_error" {
				t.Fatalf("CreateChatCompletion: %#v, want *openai.APIError %d invalid_request_error; body %s", err, tt.status, ex.Body)
			}
			if ex.Scripted || ex.Status != tt.status {
				t.Errorf("exchange scripted %v status %d; a refused request must not reach the script", ex.Scripted, ex.Status)
			}
		})
	}
}

// TestParallelToolCallsFalseSent checks the case above sends the field at
// all: go-openai's ParallelToolCalls is an any, so false is sent.
func TestParallelToolCallsFalseSent(t *testing.T) {
	s := openaitest.NewServer(t)
	c := client(s, openaitest.DefaultAPIKey, nil)
	c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q"), ParallelToolCalls: false})
	if ex := s.Exchanges(); len(ex) != 1 || !strings.Contains(string(ex[0].Body), `"parallel_tool_calls":false`) {
		t.Fatalf("body %s", ex[0].Body)
	}
}

func TestRawValidation(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Handle(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Final("ok") })
	tests := []struct {
		method, path, auth, body string
		status                   int
	}{
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":"q"}]}`, 200},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":"q"}`, 400},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"messages":[{"role":"user","content":"q"}]}`, 400},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":null}]}`, 400},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":"q"}],"stream":true}`, 400},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":"q"}],"tools":[]}`, 400},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[]}]}`, 400},
		{"POST", "/v1/chat/completions", "Bearer sk-test", `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`, 200},
		{"GET", "/v1/chat/completions", "Bearer sk-test", "", 405},
		{"POST", "/v1/completions", "Bearer sk-test", `{}`, 404},
		{"POST", "/v1/chat/completions", "Basic c2stdGVzdA==", `{}`, 401},
		{"POST", "/v1/chat/completions", "", `{}`, 401},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, strings.TrimSuffix(s.URL, "/v1")+tt.path, strings.NewReader(tt.body))
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error *struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		decErr := json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("%s %s %s: status %d, want %d", tt.method, tt.path, tt.body, res.StatusCode, tt.status)
			continue
		}
		if tt.status != 200 && (decErr != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "") {
			t.Errorf("%s %s %s: error body does not have OpenAI's shape (%v)", tt.method, tt.path, tt.body, decErr)
		}
	}
}

// TestFailures records which go-openai error each failure produces; the
// agent's fail-over branches on these.
func TestFailures(t *testing.T) {
	tests := []struct {
		name      string
		reply     openaitest.Reply
		status    int
		code      any // APIError.Code; nil means a *openai.RequestError is expected
		retryHdr  string
		errorType string
	}{
		{"429", openaitest.Reply{Status: 429, RetryAfter: "7"}, 429, "rate_limit_exceeded", "7", "requests"},
		{"429 default Retry-After", openaitest.Reply{Status: 429}, 429, "rate_limit_exceeded", "1", "requests"},
		{"500", openaitest.Reply{Status: 500}, 500, 0, "", "server_error"},
		{"502", openaitest.Reply{Status: 502}, 502, 502, "", "cf_bad_gateway"},
		{"503", openaitest.Reply{Status: 503, RetryAfter: "2"}, 503, 0, "2", "server_error"},
		{"502 HTML from the gateway", openaitest.Reply{Status: 502, Body: "<html><title>502: Bad gateway</title></html>"}, 502, nil, "", ""},
	}
	s := openaitest.NewServer(t)
	c := client(s, openaitest.DefaultAPIKey, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Push(tt.reply)
			resp, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
			if tt.code == nil {
				var reqErr *openai.RequestError
				if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != tt.status {
					t.Fatalf("err = %#v, want *openai.RequestError %d", err, tt.status)
				}
				return
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %#v, want *openai.APIError", err)
			}
			if apiErr.HTTPStatusCode != tt.status || apiErr.Code != tt.code || apiErr.Type != tt.errorType || apiErr.Message == "" {
				t.Errorf("APIError = status %d code %#v type %q message %q; want %d %#v %q",
					apiErr.HTTPStatusCode, apiErr.Code, apiErr.Type, apiErr.Message, tt.status, tt.code, tt.errorType)
			}
			// go-openai keeps the response headers even when it returns an error.
			if got := resp.Header().Get("Retry-After"); got != tt.retryHdr {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryHdr)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	s := openaitest.NewServer(t, openaitest.WithAPIKey("sk-right-key-123"))
	s.Push(openaitest.Final("ok"))
	for _, key := range []string{"sk-wrong-key-456", ""} {
		_, err := client(s, key, nil).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusUnauthorized {
			t.Fatalf("key %q: err = %#v, want *openai.APIError 401", key, err)
		}
		if key != "" && apiErr.Code != "invalid_api_key" {
			t.Errorf("key %q: code %#v, want invalid_api_key", key, apiErr.Code)
		}
		if key != "" && strings.Contains(apiErr.Message, key) {
			t.Errorf("key %q: the error echoes the whole key: %q", key, apiErr.Message)
		}
	}
	if s.Pending() != 1 {
		t.Errorf("pending = %d: a refused request consumed the script", s.Pending())
	}
	if _, err := client(s, "sk-right-key-123", nil).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")}); err != nil {
		t.Errorf("right key: %v", err)
	}
}

func TestModels(t *testing.T) {
	s := openaitest.NewServer(t, openaitest.WithModels("gpt-a"))
	s.Handle(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Final("ok") })
	c := client(s, openaitest.DefaultAPIKey, nil)
	if _, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "gpt-a", Messages: question("q")}); err != nil {
		t.Errorf("gpt-a: %v", err)
	}
	_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "gpt-b", Messages: question("q")})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("gpt-b: err = %#v, want 404 model_not_found", err)
	}
}

func TestHangClientTimeout(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Hang: true})
	c := client(s, openaitest.DefaultAPIKey, &http.Client{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
	elapsed := time.Since(start)
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("err = %#v, want a net.Error that is a timeout", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v: errors.Is(err, context.DeadlineExceeded) is false", err)
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	if errors.As(err, &apiErr) || errors.As(err, &reqErr) {
		t.Errorf("err = %#v: a timeout is neither APIError nor RequestError", err)
	}
	if elapsed > time.Second {
		t.Errorf("client returned after %v, want about 200ms", elapsed)
	}
	waitIdle(t, s)
	if ex := s.Exchanges()[0]; !ex.ClientGone || ex.Status != 0 {
		t.Errorf("exchange client gone %v status %d; want true, 0", ex.ClientGone, ex.Status)
	}
}

func TestHangContextDeadline(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Hang: true})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client(s, openaitest.DefaultAPIKey, nil).CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("err = %#v after %v, want context.DeadlineExceeded within 1s", err, time.Since(start))
	}
	waitIdle(t, s)
}

func TestHangServerClose(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Hang: true})
	errc := make(chan error, 1)
	go func() {
		_, err := client(s, openaitest.DefaultAPIKey, nil).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
		errc <- err
	}()
	for s.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with a hanging request", d)
	}
	select {
	case err := <-errc:
		if err == nil || !errors.Is(err, io.EOF) {
			t.Errorf("err = %#v, want a dropped connection (io.EOF)", err)
		}
	case <-time.After(time.Second):
		t.Fatal("client still waiting 1s after Close")
	}
	if n := s.InFlight(); n != 0 {
		t.Errorf("%d handlers still running after Close", n)
	}
}

func TestHangLimit(t *testing.T) {
	s := openaitest.NewServer(t, openaitest.WithHangLimit(100*time.Millisecond))
	s.Push(openaitest.Reply{Hang: true}, openaitest.Reply{Drop: true})
	c := client(s, openaitest.DefaultAPIKey, nil)
	for range 2 {
		start := time.Now()
		_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
		if !errors.Is(err, io.EOF) || time.Since(start) > time.Second {
			t.Errorf("err = %#v after %v, want the connection dropped", err, time.Since(start))
		}
	}
}

func TestDelay(t *testing.T) {
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Content: "slow", Delay: 50 * time.Millisecond})
	start := time.Now()
	resp, err := client(s, openaitest.DefaultAPIKey, nil).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q")})
	if err != nil || resp.Choices[0].Message.Content != "slow" || time.Since(start) < 50*time.Millisecond {
		t.Errorf("got %v, %v after %v; want \"slow\" after 50ms", resp.Choices, err, time.Since(start))
	}
}

func TestArgumentsDeliveredAsIs(t *testing.T) {
	s := openaitest.NewServer(t)
	args := []string{`{"sql": "SELECT * FROM orders`, `not json at all`, `{"sql":"SELECT 1"} trailing`}
	s.Push(openaitest.Calls(
		openaitest.Call("run_sql", args[0]),
		openaitest.Call("run_sql", args[1]),
		openaitest.Call("drop_database", args[2]),
	))
	resp, err := client(s, openaitest.DefaultAPIKey, nil).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("q"), Tools: sqlTools()})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 3 {
		t.Fatalf("got %d calls, want 3", len(calls))
	}
	ids := map[string]bool{}
	for i, c := range calls {
		if c.Function.Arguments != args[i] {
			t.Errorf("call %d arguments = %q, want %q", i, c.Function.Arguments, args[i])
		}
		ids[c.ID] = true
	}
	if len(ids) != 3 {
		t.Errorf("call ids %v are not distinct", ids)
	}
	if got := s.Exchanges()[0].Unoffered; len(got) != 1 || got[0] != "drop_database" {
		t.Errorf("Unoffered = %v, want [drop_database]", got)
	}
}

// recordingTB is a testing.TB whose Errorf is recorded instead of failing.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func TestScriptRunsOut(t *testing.T) {
	rec := &recordingTB{TB: t}
	s := openaitest.NewServer(rec)
	s.Push(openaitest.Final("only one"))
	c := client(s, openaitest.DefaultAPIKey, nil)
	req := openai.ChatCompletionRequest{Model: "m", Messages: question("q")}
	if _, err := c.CreateChatCompletion(t.Context(), req); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if n := len(rec.errors()); n != 0 {
		t.Fatalf("%d test errors before the script ran out", n)
	}
	_, err := c.CreateChatCompletion(t.Context(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Type != "server_error" {
		t.Errorf("second call: err = %#v, want *openai.APIError 500 server_error", err)
	}
	if n := len(rec.errors()); n != 1 {
		t.Errorf("got %d test errors, want 1 for the over-call", n)
	}
}

func TestPushBeforeHandle(t *testing.T) {
	rec := &recordingTB{TB: t}
	s := openaitest.NewServer(rec)
	s.Push(openaitest.Reply{Status: 503})
	s.Handle(func(req openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Final("answer to " + openaitest.LastUser(req))
	})
	c := client(s, openaitest.DefaultAPIKey, nil)

	// Concurrent callers: the handler answers each by its own question.
	_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question("first")})
	if !errors.As(err, new(*openai.APIError)) {
		t.Fatalf("queued reply not used first: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			q := fmt.Sprintf("q%d", i)
			resp, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "m", Messages: question(q)})
			if err != nil || resp.Choices[0].Message.Content != "answer to "+q {
				t.Errorf("%s: %v %v", q, resp.Choices, err)
			}
		})
	}
	wg.Wait()
	if s.Count() != 9 || len(rec.errors()) != 0 {
		t.Errorf("count %d, test errors %v", s.Count(), rec.errors())
	}
}

// waitIdle waits up to a second for s to have no request in flight.
func waitIdle(t *testing.T, s *openaitest.Server) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for s.InFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still held by the server 1s after the client gave up", s.InFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
