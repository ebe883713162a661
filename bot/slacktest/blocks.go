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
	// maxBlocksChars bounds the size of all blocks together. Slack's limit
	// (msg_blocks_too_long) is undocumented, and it counts more than the
	// text: blocks whose texts add up to 11,341 characters have been
	// refused, markdown blocks alone are refused above about 13,300
	// characters of text, and each block added lowers that. So the fake
	// counts what the blocks are made of, their structure included: the
	// length of their compact JSON with every string counted by its
	// characters (not by its JSON escapes), and refuses above 13,000.
	maxBlocksChars = 13000
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
// server: each block against its own limits, and all of them together
// against the markdown total (12,000 characters) and the message's size
// (BlocksSize, at most 13,000). It returns nil or a *BlockError.
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
	v.total += 2 + max(len(arr)-1, 0) // the array's brackets and commas
	if len(v.msgs) > 0 {
		return 0, &BlockError{Code: "invalid_blocks", Messages: v.msgs}
	}
	if v.markdown > maxMarkdownChars {
		return 0, &BlockError{Code: "invalid_blocks", Messages: []string{fmt.Sprintf(
			"[ERROR] markdown blocks must total no more than %d characters [json-pointer:/blocks]", maxMarkdownChars)}}
	}
	if v.total > maxBlocksChars {
		return 0, &BlockError{Code: "msg_blocks_too_long", Messages: []string{fmt.Sprintf(
			"[ERROR] blocks are %d characters long, more than %d [json-pointer:/blocks]", v.total, maxBlocksChars)}}
	}
	return len(arr), nil
}

type blockChecker struct {
	msgs     []string
	ids      map[string]bool
	markdown int // characters in markdown blocks
	total    int // size of all blocks (BlocksSize)
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
	v.total += jsonChars(b)
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

// BlocksSize returns the size of a JSON array of blocks as the fake counts
// it against Slack's limit of about 13,000 for one message (see CheckBlocks):
// the length of the compact JSON, each string counted by its characters.
// It returns -1 if blocks is not a JSON array.
func BlocksSize(blocks []byte) int {
	var arr []any
	if json.Unmarshal(blocks, &arr) != nil {
		return -1
	}
	return jsonChars(arr)
}

// jsonChars is the length of v's compact JSON, each string (and key)
// counted as its characters plus two quotes.
func jsonChars(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 2 + max(len(x)-1, 0) // braces and commas
		for k, e := range x {
			n += utf8.RuneCountInString(k) + 3 + jsonChars(e) // "k":
		}
		return n
	case []any:
		n := 2 + max(len(x)-1, 0)
		for _, e := range x {
			n += jsonChars(e)
		}
		return n
	case string:
		return utf8.RuneCountInString(x) + 2
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	case float64:
		b, _ := json.Marshal(x)
		return len(b)
	}
	b, _ := json.Marshal(v)
	return len(b)
}
