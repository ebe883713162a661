package slacktest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Block Kit limits, from Slack's reference for message blocks.
const (
	maxBlocks          = 50
	maxBlockIDChars    = 255
	maxSectionChars    = 3000
	maxFieldChars      = 2000
	maxFields          = 10
	maxHeaderChars     = 150
	maxContextElements = 10
	maxActionElements  = 25
	maxAltTextChars    = 2000
	maxMarkdownChars   = 12000 // per markdown block, and for all of them together
	// maxBlocksTextChars bounds the text of all blocks together. Slack
	// answers msg_blocks_too_long somewhere above 13,000 characters (the
	// limit is undocumented and varies); the fake refuses above 12,000.
	maxBlocksTextChars = 12000
)

// A BlockError is the Slack error the fake gives for a blocks argument that
// Slack would refuse: Code is "invalid_blocks", "invalid_blocks_format" or
// "msg_blocks_too_long", and Messages are Slack-style explanations ending in
// a JSON pointer, as in response_metadata.messages.
type BlockError struct {
	Code     string
	Messages []string
}

// Error returns the code and the explanations.
func (e *BlockError) Error() string {
	return "slacktest: " + e.Code + ": " + strings.Join(e.Messages, "; ")
}

// CheckBlocks checks a JSON array of Block Kit blocks the way the fake's
// chat.postMessage does, so that a test can check rendered blocks without a
// server. It returns nil or a *BlockError.
func CheckBlocks(blocks []byte) error {
	if _, err := checkBlocks(blocks); err != nil {
		return err
	}
	return nil
}

// checkBlocks validates blocks and returns how many there are.
func checkBlocks(raw []byte) (int, *BlockError) {
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return 0, &BlockError{Code: "invalid_blocks_format",
			Messages: []string{"[ERROR] blocks must be a JSON array [json-pointer:/blocks]"}}
	}
	v := &blockChecker{ids: make(map[string]bool)}
	if len(arr) > maxBlocks {
		v.errorf("/blocks", "no more than %d items allowed", maxBlocks)
	}
	for i, b := range arr {
		v.block(fmt.Sprintf("/blocks/%d", i), b)
	}
	if len(v.msgs) > 0 {
		return 0, &BlockError{Code: "invalid_blocks", Messages: v.msgs}
	}
	if v.markdown > maxMarkdownChars {
		return 0, &BlockError{Code: "invalid_blocks", Messages: []string{fmt.Sprintf(
			"[ERROR] markdown blocks must total no more than %d characters [json-pointer:/blocks]", maxMarkdownChars)}}
	}
	if v.total > maxBlocksTextChars {
		return 0, &BlockError{Code: "msg_blocks_too_long", Messages: []string{fmt.Sprintf(
			"[ERROR] blocks hold %d characters of text, more than %d [json-pointer:/blocks]", v.total, maxBlocksTextChars)}}
	}
	return len(arr), nil
}

type blockChecker struct {
	msgs     []string
	ids      map[string]bool
	markdown int // characters in markdown blocks
	total    int // characters of text in all blocks
}

func (v *blockChecker) errorf(ptr, format string, args ...any) {
	v.msgs = append(v.msgs, fmt.Sprintf("[ERROR] "+format+" [json-pointer:%s]", append(args, ptr)...))
}

func (v *blockChecker) block(ptr string, raw json.RawMessage) {
	var b map[string]any
	if json.Unmarshal(raw, &b) != nil || b == nil {
		v.errorf(ptr, "must be an object")
		return
	}
	v.total += textChars(b)
	typ, _ := b["type"].(string)
	if typ == "" {
		v.errorf(ptr+"/type", "missing required field: type")
		return
	}
	if id, ok := b["block_id"]; ok {
		s, isString := id.(string)
		switch {
		case !isString || s == "":
			v.errorf(ptr+"/block_id", "must be a non-empty string")
		case utf8.RuneCountInString(s) > maxBlockIDChars:
			v.errorf(ptr+"/block_id", "must be less than %d characters", maxBlockIDChars+1)
		case v.ids[s]:
			v.errorf(ptr+"/block_id", "duplicate block_id")
		default:
			v.ids[s] = true
		}
	}
	switch typ {
	case "section":
		text, hasText := b["text"]
		fields, hasFields := b["fields"]
		if !hasText && !hasFields {
			v.errorf(ptr, "must provide either text or fields")
		}
		if hasText {
			v.text(ptr+"/text", text, maxSectionChars, "plain_text", "mrkdwn")
		}
		if hasFields {
			list, ok := fields.([]any)
			switch {
			case !ok || len(list) == 0:
				v.errorf(ptr+"/fields", "must be a non-empty array")
			case len(list) > maxFields:
				v.errorf(ptr+"/fields", "no more than %d items allowed", maxFields)
			}
			for i, f := range list {
				v.text(fmt.Sprintf("%s/fields/%d", ptr, i), f, maxFieldChars, "plain_text", "mrkdwn")
			}
		}
	case "header":
		v.text(ptr+"/text", b["text"], maxHeaderChars, "plain_text")
	case "context":
		list, ok := b["elements"].([]any)
		switch {
		case !ok || len(list) == 0:
			v.errorf(ptr+"/elements", "must be a non-empty array")
		case len(list) > maxContextElements:
			v.errorf(ptr+"/elements", "no more than %d items allowed", maxContextElements)
		}
		for i, e := range list {
			eptr := fmt.Sprintf("%s/elements/%d", ptr, i)
			if m, _ := e.(map[string]any); m != nil && m["type"] == "image" {
				v.image(eptr, m)
				continue
			}
			v.text(eptr, e, maxSectionChars, "plain_text", "mrkdwn")
		}
	case "markdown":
		s, ok := b["text"].(string)
		n := utf8.RuneCountInString(s)
		switch {
		case !ok || s == "":
			v.errorf(ptr+"/text", "must be a non-empty string")
		case n > maxMarkdownChars:
			v.errorf(ptr+"/text", "must be less than %d characters", maxMarkdownChars+1)
		}
		v.markdown += n
	case "image":
		v.image(ptr, b)
	case "actions":
		list, ok := b["elements"].([]any)
		switch {
		case !ok || len(list) == 0:
			v.errorf(ptr+"/elements", "must be a non-empty array")
		case len(list) > maxActionElements:
			v.errorf(ptr+"/elements", "no more than %d items allowed", maxActionElements)
		}
	case "rich_text":
		if list, ok := b["elements"].([]any); !ok || len(list) == 0 {
			v.errorf(ptr+"/elements", "must be a non-empty array")
		}
	case "divider", "file", "input", "video", "table", "context_actions", "call", "data_table",
		"data_visualization", "task_card", "alert", "plan", "card", "carousel", "container", "layout":
		// Known to slack-go; their inner limits are not modelled.
	default:
		v.errorf(ptr+"/type", "unknown block type %q", typ)
	}
}

// text checks a text object of one of the given types.
func (v *blockChecker) text(ptr string, raw any, maxChars int, types ...string) {
	t, _ := raw.(map[string]any)
	if t == nil {
		v.errorf(ptr, "must be a text object")
		return
	}
	typ, _ := t["type"].(string)
	if !slices.Contains(types, typ) {
		v.errorf(ptr+"/type", "must be one of %s", strings.Join(types, ", "))
	}
	s, ok := t["text"].(string)
	switch n := utf8.RuneCountInString(s); {
	case !ok || s == "":
		v.errorf(ptr+"/text", "must be more than 0 characters")
	case n > maxChars:
		v.errorf(ptr+"/text", "must be less than %d characters", maxChars+1)
	}
}

// image checks an image block or element.
func (v *blockChecker) image(ptr string, b map[string]any) {
	_, hasURL := b["image_url"].(string)
	_, hasFile := b["slack_file"].(map[string]any)
	if !hasURL && !hasFile {
		v.errorf(ptr, "must provide either image_url or slack_file")
	}
	alt, _ := b["alt_text"].(string)
	switch n := utf8.RuneCountInString(alt); {
	case alt == "":
		v.errorf(ptr+"/alt_text", "must be more than 0 characters")
	case n > maxAltTextChars:
		v.errorf(ptr+"/alt_text", "must be less than %d characters", maxAltTextChars+1)
	}
}

// textChars counts the characters of every "text" string inside v.
func textChars(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "text" {
				n += utf8.RuneCountInString(s)
			} else {
				n += textChars(e)
			}
		}
	case []any:
		for _, e := range x {
			n += textChars(e)
		}
	}
	return n
}
