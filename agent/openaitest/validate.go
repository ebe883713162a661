package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// validName reports whether name matches ^[a-zA-Z0-9_-]+$, the pattern the
// real API holds function names to.
func validName(name string) bool {
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return name != ""
}

// validate checks a chat-completions body the way the real API does, before
// any model runs. It returns the names of the tools the request offers, or
// the 400 (or other) error the real API would answer.
func validate(body []byte) (map[string]bool, *apiError) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, &apiError{
			status:  http.StatusBadRequest,
			Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please visit https://platform.openai.com/docs/guides/error-codes/api-errors.)",
			Type:    "invalid_request_error",
		}
	}
	var model string
	if kindOf(top["model"]) != "string" || json.Unmarshal(top["model"], &model) != nil || model == "" {
		return nil, &apiError{status: http.StatusBadRequest, Message: "you must provide a model parameter", Type: "invalid_request_error"}
	}
	if string(bytes.TrimSpace(top["stream"])) == "true" {
		return nil, &apiError{
			status:  http.StatusBadRequest,
			Message: "openaitest: streaming is not supported by this fake; use CreateChatCompletion",
			Type:    "invalid_request_error",
			Param:   param("stream"),
		}
	}
	offered, e := validateTools(top)
	if e != nil {
		return nil, e
	}
	if e := validateMessages(top["messages"]); e != nil {
		return nil, e
	}
	return offered, nil
}

func validateMessages(raw json.RawMessage) *apiError {
	switch k := kindOf(raw); k {
	case "missing":
		return missing("messages")
	case "array":
	default:
		return invalidType("messages", "an array of objects", k)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return invalidType("messages", "an array of objects", "an invalid value")
	}
	if len(msgs) == 0 {
		return emptyArray("messages")
	}

	// pending holds the ids of the last assistant message's tool calls that
	// no tool message has answered yet; from is that message's index.
	var pending []string
	from := -1
	for i, rm := range msgs {
		p := fmt.Sprintf("messages[%d]", i)
		if k := kindOf(rm); k != "object" {
			return invalidType(p, "an object", k)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rm, &m); err != nil {
			return invalidType(p, "an object", "an invalid value")
		}
		role, e := str(m, p+".role")
		if e != nil {
			return e
		}
		if roles := []string{"system", "assistant", "user", "function", "tool", "developer"}; !slices.Contains(roles, role) {
			return invalidValue(p+".role", role, roles)
		}

		var calls []string
		if role == "assistant" {
			if calls, e = validateCalls(m["tool_calls"], p+".tool_calls"); e != nil {
				return e
			}
		}
		optional := role == "assistant" && (len(calls) > 0 || kindOf(m["function_call"]) == "object")
		if e := validateContent(m["content"], i, role, optional); e != nil {
			return e
		}

		if role == "tool" {
			id, e := str(m, p+".tool_call_id")
			if e != nil {
				return e
			}
			at := slices.Index(pending, id)
			if at < 0 {
				return &apiError{
					status:  http.StatusBadRequest,
					Message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
					Type:    "invalid_request_error",
					Param:   param(fmt.Sprintf("messages.[%d].role", i)),
				}
			}
			pending = slices.Delete(pending, at, at+1)
			continue
		}
		if len(pending) > 0 {
			return unanswered(from, pending)
		}
		if role == "function" {
			if _, e := str(m, p+".name"); e != nil {
				return e
			}
		}
		pending, from = calls, i
	}
	if len(pending) > 0 {
		return unanswered(from, pending)
	}
	return nil
}

func unanswered(from int, ids []string) *apiError {
	return &apiError{
		status:  http.StatusBadRequest,
		Message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(ids, ", "),
		Type:    "invalid_request_error",
		Param:   param(fmt.Sprintf("messages.[%d].role", from)),
	}
}

// validateCalls checks an assistant message's tool_calls and returns their ids.
func validateCalls(raw json.RawMessage, p string) ([]string, *apiError) {
	switch k := kindOf(raw); k {
	case "missing", "null":
		return nil, nil
	case "array":
	default:
		return nil, invalidType(p, "an array of objects", k)
	}
	var calls []json.RawMessage
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, invalidType(p, "an array of objects", "an invalid value")
	}
	if len(calls) == 0 {
		return nil, emptyArray(p)
	}
	var ids []string
	for j, rc := range calls {
		cp := fmt.Sprintf("%s[%d]", p, j)
		if k := kindOf(rc); k != "object" {
			return nil, invalidType(cp, "an object", k)
		}
		var c map[string]json.RawMessage
		json.Unmarshal(rc, &c)
		id, e := str(c, cp+".id")
		if e != nil {
			return nil, e
		}
		typ, e := str(c, cp+".type")
		if e != nil {
			return nil, e
		}
		if typ != "function" {
			return nil, invalidValue(cp+".type", typ, []string{"function", "custom"})
		}
		fp := cp + ".function"
		switch k := kindOf(c["function"]); k {
		case "missing":
			return nil, missing(fp)
		case "object":
		default:
			return nil, invalidType(fp, "an object", k)
		}
		var f map[string]json.RawMessage
		json.Unmarshal(c["function"], &f)
		if _, e := str(f, fp+".name"); e != nil {
			return nil, e
		}
		if _, e := str(f, fp+".arguments"); e != nil {
			return nil, e
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// validateContent checks message i's content. optional is true for an
// assistant message that carries tool calls.
func validateContent(raw json.RawMessage, i int, role string, optional bool) *apiError {
	p := fmt.Sprintf("messages[%d].content", i)
	switch k := kindOf(raw); k {
	case "string":
		return nil
	case "missing", "null":
		// The real API reports an omitted content (go-openai omits an empty
		// one) the same way as a null one.
		if optional {
			return nil
		}
		return &apiError{
			status:  http.StatusBadRequest,
			Message: "Invalid value for 'content': expected a string, got null.",
			Type:    "invalid_request_error",
			Param:   param(fmt.Sprintf("messages.[%d].content", i)),
		}
	case "array":
	default:
		return invalidType(p, "one of a string or array of objects", k)
	}
	var parts []json.RawMessage
	json.Unmarshal(raw, &parts)
	allowed := []string{"text"}
	switch role {
	case "user":
		allowed = []string{"text", "image_url", "input_audio", "file"}
	case "assistant":
		allowed = []string{"text", "refusal"}
	}
	for j, rp := range parts {
		pp := fmt.Sprintf("%s[%d]", p, j)
		if k := kindOf(rp); k != "object" {
			return invalidType(pp, "an object", k)
		}
		var part map[string]json.RawMessage
		json.Unmarshal(rp, &part)
		typ, e := str(part, pp+".type")
		if e != nil {
			return e
		}
		if !slices.Contains(allowed, typ) {
			return invalidValue(pp+".type", typ, allowed)
		}
		if typ == "text" {
			if _, e := str(part, pp+".text"); e != nil {
				return e
			}
		}
	}
	return nil
}

// validateTools checks tools, tool_choice and parallel_tool_calls, and
// returns the names of the functions offered.
func validateTools(top map[string]json.RawMessage) (map[string]bool, *apiError) {
	offered := map[string]bool{}
	hasTools := false
	switch k := kindOf(top["tools"]); k {
	case "missing", "null":
	case "array":
		var tools []json.RawMessage
		json.Unmarshal(top["tools"], &tools)
		if len(tools) == 0 {
			return nil, emptyArray("tools")
		}
		hasTools = true
		for i, rt := range tools {
			name, e := validateTool(rt, i)
			if e != nil {
				return nil, e
			}
			offered[name] = true
		}
	default:
		return nil, invalidType("tools", "an array of objects", k)
	}

	if k := kindOf(top["tool_choice"]); k != "missing" && k != "null" {
		if !hasTools {
			return nil, onlyWithTools("tool_choice")
		}
		switch k {
		case "string":
			var c string
			json.Unmarshal(top["tool_choice"], &c)
			if modes := []string{"none", "auto", "required"}; !slices.Contains(modes, c) {
				return nil, invalidValue("tool_choice", c, modes)
			}
		case "object":
			var c struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			json.Unmarshal(top["tool_choice"], &c)
			if c.Type != "function" {
				return nil, invalidValue("tool_choice.type", c.Type, []string{"function"})
			}
			if !offered[c.Function.Name] {
				return nil, &apiError{
					status:  http.StatusBadRequest,
					Message: fmt.Sprintf("Invalid value for 'tool_choice': function '%s' is not one of the functions in 'tools'.", c.Function.Name),
					Type:    "invalid_request_error",
					Param:   param("tool_choice"),
					Code:    "invalid_value",
				}
			}
		default:
			return nil, invalidType("tool_choice", "one of a string or object", k)
		}
	}
	if k := kindOf(top["parallel_tool_calls"]); k != "missing" && k != "null" && !hasTools {
		return nil, onlyWithTools("parallel_tool_calls")
	}
	return offered, nil
}

func onlyWithTools(field string) *apiError {
	return &apiError{
		status:  http.StatusBadRequest,
		Message: fmt.Sprintf("Invalid value for '%s': '%s' is only allowed when 'tools' are specified.", field, field),
		Type:    "invalid_request_error",
		Param:   param(field),
	}
}

// validateTool checks tools[i] and returns its function's name.
func validateTool(raw json.RawMessage, i int) (string, *apiError) {
	p := fmt.Sprintf("tools[%d]", i)
	if k := kindOf(raw); k != "object" {
		return "", invalidType(p, "an object", k)
	}
	var t map[string]json.RawMessage
	json.Unmarshal(raw, &t)
	typ, e := str(t, p+".type")
	if e != nil {
		return "", e
	}
	if typ != "function" {
		return "", invalidValue(p+".type", typ, []string{"function", "custom"})
	}
	fp := p + ".function"
	switch k := kindOf(t["function"]); k {
	case "missing":
		return "", missing(fp)
	case "object":
	default:
		return "", invalidType(fp, "an object", k)
	}
	var f map[string]json.RawMessage
	json.Unmarshal(t["function"], &f)
	name, e := str(f, fp+".name")
	if e != nil {
		return "", e
	}
	np := fp + ".name"
	switch {
	case name == "":
		return "", &apiError{status: http.StatusBadRequest, Message: fmt.Sprintf("Invalid '%s': empty string. Expected a string with minimum length 1, but got an empty string instead.", np), Type: "invalid_request_error", Param: param(np), Code: "empty_string"}
	case len(name) > 64:
		return "", &apiError{status: http.StatusBadRequest, Message: fmt.Sprintf("Invalid '%s': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", np, len(name)), Type: "invalid_request_error", Param: param(np), Code: "string_above_max_length"}
	case !validName(name):
		return "", &apiError{status: http.StatusBadRequest, Message: fmt.Sprintf("Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", np), Type: "invalid_request_error", Param: param(np), Code: "invalid_value"}
	}

	pp := fp + ".parameters"
	switch k := kindOf(f["parameters"]); k {
	case "missing": // a function without parameters
		return name, nil
	case "object":
	default:
		return "", invalidType(pp, "an object", k)
	}
	var schema map[string]any
	json.Unmarshal(f["parameters"], &schema)
	if len(schema) == 0 {
		return name, nil
	}
	if typ, _ := schema["type"].(string); typ != "object" {
		got := "None"
		if v, ok := schema["type"]; ok {
			b, _ := json.Marshal(v)
			got = strings.Trim(string(b), `"`)
		}
		return "", badSchema(name, pp, fmt.Sprintf("schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%s\"'.", got))
	}
	if string(bytes.TrimSpace(f["strict"])) == "true" {
		if msg := strictProblem(schema, nil); msg != "" {
			return "", badSchema(name, pp, msg)
		}
	}
	return name, nil
}

func badSchema(name, p, msg string) *apiError {
	return &apiError{
		status:  http.StatusBadRequest,
		Message: fmt.Sprintf("Invalid schema for function '%s': %s", name, msg),
		Type:    "invalid_request_error",
		Param:   param(p),
		Code:    "invalid_function_parameters",
	}
}

// strictProblem reports the first rule of OpenAI's strict mode that schema
// breaks: every object must set additionalProperties to false and list every
// property in required. ctx is the path inside the root schema.
func strictProblem(schema map[string]any, ctx []string) string {
	if typeIs(schema["type"], "object") {
		if ap, ok := schema["additionalProperties"].(bool); !ok || ap {
			return fmt.Sprintf("In context=%s, 'additionalProperties' is required to be supplied and to be false.", tuple(ctx))
		}
		props, _ := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]any)
		var keys []string
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(req, any(k)) {
				return fmt.Sprintf("In context=%s, 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", tuple(ctx), k)
			}
		}
		for _, k := range keys {
			if sub, ok := props[k].(map[string]any); ok {
				if msg := strictProblem(sub, append(slices.Clip(ctx), "properties", k)); msg != "" {
					return msg
				}
			}
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		return strictProblem(items, append(slices.Clip(ctx), "items"))
	}
	return ""
}

// typeIs reports whether a JSON Schema "type" is want or a list holding it.
func typeIs(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

// tuple formats a schema path as the real API does (a Python tuple).
func tuple(ctx []string) string {
	if len(ctx) == 0 {
		return "()"
	}
	q := make([]string, len(ctx))
	for i, c := range ctx {
		q[i] = "'" + c + "'"
	}
	if len(q) == 1 {
		return "(" + q[0] + ",)"
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// kindOf names the JSON kind of raw: missing, null, string, number, boolean,
// array or object.
func kindOf(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "missing"
	}
	switch t[0] {
	case 'n':
		return "null"
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// str reads the required string field named by the last element of path p.
func str(m map[string]json.RawMessage, p string) (string, *apiError) {
	key := p[strings.LastIndex(p, ".")+1:]
	raw := m[key]
	switch k := kindOf(raw); k {
	case "missing":
		return "", missing(p)
	case "string":
		var s string
		json.Unmarshal(raw, &s)
		return s, nil
	default:
		return "", invalidType(p, "a string", k)
	}
}

func missing(p string) *apiError {
	return &apiError{
		status:  http.StatusBadRequest,
		Message: fmt.Sprintf("Missing required parameter: '%s'.", p),
		Type:    "invalid_request_error",
		Param:   param(p),
		Code:    "missing_required_parameter",
	}
}

func emptyArray(p string) *apiError {
	return &apiError{
		status:  http.StatusBadRequest,
		Message: fmt.Sprintf("Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", p),
		Type:    "invalid_request_error",
		Param:   param(p),
		Code:    "empty_array",
	}
}

func invalidType(p, want, kind string) *apiError {
	got := map[string]string{"null": "null", "string": "a string", "number": "a number", "boolean": "a boolean", "array": "an array", "object": "an object"}[kind]
	if got == "" {
		got = kind
	}
	return &apiError{
		status:  http.StatusBadRequest,
		Message: fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", p, want, got),
		Type:    "invalid_request_error",
		Param:   param(p),
		Code:    "invalid_type",
	}
}

func invalidValue(p, got string, supported []string) *apiError {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = "'" + s + "'"
	}
	list := strings.Join(q, ", ")
	if len(q) > 1 {
		list = strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
		if len(q) > 2 {
			list = strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
		}
	}
	return &apiError{
		status:  http.StatusBadRequest,
		Message: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", got, list),
		Type:    "invalid_request_error",
		Param:   param(p),
		Code:    "invalid_value",
	}
}
