package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"sqlbot/agent"
)

// scriptProvider is the provider name a script reports.
const scriptProvider = "script"

// A script is a behavioural Model for the loop's tests: it replies with the
// replies queued by Push, then with its handler's, and records every
// conversation it is sent. Like a real API it refuses (fails the test on) a
// conversation in which a tool call is not answered by exactly one tool
// message, in order, before the next assistant message. Each reply reports
// usage: a quarter of the bytes sent and of the reply, at least 1 each.
type script struct {
	t testing.TB

	mu      sync.Mutex
	queue   []agent.Reply
	handler func(msgs []agent.Message) agent.Reply
	reqs    [][]agent.Message
	tools   [][]agent.ToolDef
}

func newScript(t testing.TB) *script { return &script{t: t} }

// Push appends replies to the script.
func (s *script) Push(r ...agent.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Handle sets the function that replies once the queue is empty.
func (s *script) Handle(f func(msgs []agent.Message) agent.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

func (s *script) Next(ctx context.Context, msgs []agent.Message, tools []agent.ToolDef) (agent.Reply, error) {
	if err := ctx.Err(); err != nil {
		return agent.Reply{}, err
	}
	if err := wellFormed(msgs); err != nil {
		s.t.Errorf("script: %v", err)
		return agent.Reply{}, err
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, append([]agent.Message(nil), msgs...))
	s.tools = append(s.tools, tools)
	var r agent.Reply
	switch h := s.handler; {
	case len(s.queue) > 0:
		r, s.queue = s.queue[0], s.queue[1:]
	case h != nil:
		s.mu.Unlock()
		r = h(msgs)
		s.mu.Lock()
	default:
		s.mu.Unlock()
		s.t.Errorf("script: ran out at request %d", len(s.reqs))
		return agent.Reply{}, fmt.Errorf("script: ran out")
	}
	s.mu.Unlock()
	sent := 0
	for _, m := range msgs {
		sent += len(m.Content)
	}
	got := len(r.Text)
	for _, c := range r.Calls {
		got += len(c.Name) + len(c.Args)
	}
	r.Usage = agent.Usage{Prompt: max(sent/4, 1), Completion: max(got/4, 1)}
	r.Provider = scriptProvider
	return r, nil
}

// wellFormed checks what a chat-completions API checks of the tool traffic.
func wellFormed(msgs []agent.Message) error {
	var pending []string
	for i, m := range msgs {
		switch m.Role {
		case agent.RoleTool:
			if len(pending) == 0 || pending[0] != m.CallID {
				return fmt.Errorf("message %d: tool message for %q, want one for %v", i, m.CallID, pending)
			}
			pending = pending[1:]
		default:
			if len(pending) > 0 {
				return fmt.Errorf("message %d: calls %v not answered", i, pending)
			}
			for _, c := range m.Calls {
				pending = append(pending, c.ID)
			}
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("calls %v not answered", pending)
	}
	return nil
}

// Requests returns every conversation the script was sent, in order.
func (s *script) Requests() [][]agent.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]agent.Message(nil), s.reqs...)
}

// Count returns how many requests the script got.
func (s *script) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Tools returns the names of the tools offered with request i.
func (s *script) Tools(i int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, d := range s.tools[i] {
		names = append(names, d.Name)
	}
	return names
}

// calls is a reply that calls tools; final one that answers in words.
func calls(cs ...agent.ToolCall) agent.Reply { return agent.Reply{Calls: cs} }
func final(text string) agent.Reply          { return agent.Reply{Text: text} }

func call(id, name, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: name, Args: args}
}

// lastToolResults returns the tool results after the last assistant
// message, by call id.
func lastToolResults(msgs []agent.Message) map[string]string {
	out := map[string]string{}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == agent.RoleTool; i-- {
		out[msgs[i].CallID] = msgs[i].Content
	}
	return out
}

// systemPrompt returns the system message's content.
func systemPrompt(msgs []agent.Message) string {
	for _, m := range msgs {
		if m.Role == agent.RoleSystem {
			return m.Content
		}
	}
	return ""
}

// lastUser returns the last user message's content.
func lastUser(msgs []agent.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}
