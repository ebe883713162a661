package chart

import "sqlbot/agent"

// ForAnswer returns the chart of an agent's answer as every surface shows
// it (the Slack thread, the web page): the PNG and a one-sentence
// description for its alt text, titled with the question. It returns nil
// when the answer gets no chart: an answer that is not agent.Answered, rows
// cut at the row cap (a chart of the first rows would mislead), and any
// result Plan declines. err is non-nil only if drawing failed.
func ForAnswer(res *agent.Result) (png []byte, alt string, err error) {
	if res == nil || res.Outcome != agent.Answered || res.Truncated {
		return nil, "", nil
	}
	spec, why := Plan(res.Columns, res.Rows, res.Question)
	if why != OK {
		return nil, "", nil
	}
	png, err = Render(spec)
	if err != nil {
		return nil, "", err
	}
	return png, spec.Describe(), nil
}
