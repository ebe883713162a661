package bot

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Block Kit limits (https://api.slack.com/reference/block-kit/blocks).
const (
	maxSectionChars = 3000 // a section's text
	maxBlocks       = 50   // blocks in one message
	maxContextChars = 600  // one context line
	// maxMessageChars bounds the size of all blocks of one message, counted
	// as Slack counts it: their JSON, structure included, each string by its
	// characters (blockSize). Slack refuses more than about 13,000
	// (msg_blocks_too_long; undocumented): an answer (3000) + SQL (3000) +
	// preview (3000) + two context lines fit, with room to spare.
	maxMessageChars  = 12000
	maxFallbackChars = 400 // the notification text; the blocks carry the rest
)

// blockList collects blocks within Slack's limits: at most maxBlocks, each
// section at most maxSectionChars, all of them at most maxMessageChars by
// blockSize. What does not fit is cut with … or left out, with a note.
type blockList struct {
	list  []slack.Block
	total int  // blockSize of the blocks so far
	cut   bool // something was left out
}

const cutNote = "_(cut here: the rest did not fit in one Slack message)_"

// room is how much may still be added, keeping room for the cut note.
func (b *blockList) room() int {
	return maxMessageChars - b.total - (contextSize("") + utf8.RuneCountInString(cutNote)) - 4 // the array's brackets and commas
}

func (b *blockList) add(block slack.Block, size int) {
	b.list = append(b.list, block)
	b.total += size + 1 // and a comma
}

func sectionBlock(mrkdwn string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, false), nil, nil)
}

func contextBlock(mrkdwn string) slack.Block {
	return slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, false))
}

// sectionSize and contextSize are blockSize of a section or a context block
// holding mrkdwn.
func sectionSize(mrkdwn string) int { return blockSize(sectionBlock(mrkdwn)) }

func contextSize(mrkdwn string) int { return blockSize(contextBlock(mrkdwn)) }

func (b *blockList) section(mrkdwn string) {
	if strings.TrimSpace(mrkdwn) == "" {
		return
	}
	limit := min(maxSectionChars, b.room()-sectionSize(""))
	if len(b.list) >= maxBlocks-1 || limit < 200 {
		b.cut = true
		return
	}
	if utf8.RuneCountInString(mrkdwn) > limit {
		mrkdwn = cutEscaped(mrkdwn, limit)
	}
	b.add(sectionBlock(mrkdwn), sectionSize(mrkdwn))
}

// sections adds mrkdwn as sections, split at line ends where it can, as far
// as the message has room.
func (b *blockList) sections(mrkdwn string) {
	for _, part := range splitMrkdwn(mrkdwn, maxSectionChars) {
		b.section(part)
	}
}

func (b *blockList) context(mrkdwn string) {
	if strings.TrimSpace(mrkdwn) == "" || len(b.list) >= maxBlocks-1 {
		return
	}
	limit := min(maxContextChars, b.room()-contextSize(""))
	if limit < 20 {
		b.cut = true
		return
	}
	if utf8.RuneCountInString(mrkdwn) > limit {
		mrkdwn = cutEscaped(mrkdwn, limit)
	}
	b.add(contextBlock(mrkdwn), contextSize(mrkdwn))
}

// blocks returns the blocks, ending with a note if something was cut.
func (b *blockList) blocks() []slack.Block {
	if b.cut {
		b.list = append(b.list, contextBlock(cutNote))
		b.cut = false
	}
	return b.list
}

// blockSize is the size Slack counts against its limit for a message's
// blocks: the length of the block's compact JSON with each string counted by
// its characters (not its JSON escapes).
func blockSize(block slack.Block) int {
	raw, err := json.Marshal(block)
	if err != nil {
		return maxMessageChars // cannot happen for the blocks built here; count it as full
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return maxMessageChars
	}
	return jsonChars(v)
}

// jsonChars is the length of v's compact JSON, each string (and key)
// counted as its characters plus two quotes.
func jsonChars(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 2 + max(len(x)-1, 0)
		for k, e := range x {
			n += utf8.RuneCountInString(k) + 3 + jsonChars(e)
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
	}
	raw, _ := json.Marshal(v)
	return len(raw)
}
