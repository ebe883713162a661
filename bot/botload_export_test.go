package bot

import (
	"github.com/slack-go/slack"

	"sqlbot/agent"
)

// ReplyOf is the text and blocks the bot posts for res (no CSV), so that the
// load driver's minimal client posts exactly the same reply.
func ReplyOf(res *agent.Result) (string, []slack.Block) {
	r := renderResult(res, DefaultMaxCSVBytes)
	return r.Text, r.Blocks
}
