package bot

import (
	"bytes"
	"context"
	"log/slog"

	"github.com/slack-go/slack"

	"sqlbot/agent"
	"sqlbot/bot/chart"
)

// chartFileName is the name of the file a result's chart is attached as.
const chartFileName = "sqlbot-chart.png"

// chartFailedText says in a thread that a chart could not be attached.
const chartFailedText = ":warning: I couldn't attach the chart of these rows; the reply above has them."

// attachChart uploads the chart of res, if it gets one (chart.ForAnswer:
// drawn in Go from the values alone, no code the model wrote is run), into
// the thread of
// the reply to q (posted as ts), after the reply and its CSV. A chart that
// cannot be drawn is only logged (the reply is whole without it); one that
// cannot be uploaded is said in one line in the thread. It returns what
// became of it, for the log: "none", "attached" or "failed".
func (b *Bot) attachChart(ctx context.Context, q question, res *agent.Result, ts string, attrs []slog.Attr) string {
	png, alt, err := chart.ForAnswer(res)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: drawing the chart failed", append(attrs, slog.Any("err", err))...)
		return "failed"
	}
	if png == nil {
		return "none"
	}
	err = b.call(ctx, func(ctx context.Context) error {
		_, err := b.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader:          bytes.NewReader(png),
			FileSize:        len(png),
			Filename:        chartFileName,
			Title:           "Chart",
			AltTxt:          alt,
			Channel:         q.Channel,
			ThreadTimestamp: q.ThreadTS,
		})
		return err
	})
	if err == nil {
		return "attached"
	}
	b.log.LogAttrs(ctx, slog.LevelWarn, "bot: chart upload failed; saying it in the thread", append(attrs, slog.Any("err", err))...)
	thread := q.ThreadTS
	if thread == "" {
		thread = ts // a DM's reply at the top level: say it under the reply
	}
	if _, err := b.post(ctx, q.Channel, thread, renderNotice(chartFailedText)); err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: post failed", append(attrs, slog.Any("err", err))...)
	}
	return "failed"
}
