package web

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"

	"sqlbot/agent"
	"sqlbot/agent/present"
	"sqlbot/bot/chart"
)

//go:embed assets/page.html assets/web.css
var assets embed.FS

// A pageRenderer renders the page. Every value it is given is text: the
// template escapes it for where it lands (element text or an attribute),
// and nothing is ever passed as template.HTML. The one value typed for the
// template is a chart's image source, a data: URL of a PNG the page drew
// itself (base64 of its bytes, nothing of the data's text in it).
type pageRenderer struct {
	tmpl *template.Template
}

func newPageRenderer() (*pageRenderer, error) {
	t, err := template.ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, fmt.Errorf("web: parse the page: %w", err)
	}
	return &pageRenderer{tmpl: t}, nil
}

// pageData is what the page shows.
type pageData struct {
	Question  string // in the form: the question asked, if any
	MaxChars  int
	Notice    string // why the question was not asked (a limit, its length)
	Answer    *answerView
	Questions []string // the recorded questions, to pick
}

// answerView is one answer, in text ready to show.
type answerView struct {
	Heading, Question, Outcome string
	Text                       string // the answer in words
	Failure                    string // why there is no answer (a fixed sentence)
	Refusal                    *refusalView
	FinalSQL                   string
	Columns                    []string
	Rows                       [][]string
	RowsNote                   string
	Tried                      []agent.Statement // every statement tried, when more than the final one
	Provider, Steps, Time      string
	Tokens                     string
	Cached                     bool // the answer was reused, not asked again
	// Chart is the answer's chart as a data: URL of its PNG, and ChartAlt
	// its description (chart.ForAnswer); "" when the answer gets none.
	Chart    template.URL
	ChartAlt string
}

// refusalView is a refusal: what was refused, by which layer, and why.
type refusalView struct {
	LayerName, Layer, Reason, SQL string
}

// heading names an outcome for people.
func heading(o agent.Outcome) string {
	switch o {
	case agent.Refused:
		return "Refused"
	case agent.Unanswerable:
		return "Not in the data"
	case agent.Budget:
		return "Stopped at the step limit"
	case agent.Failed:
		return "No answer"
	}
	return "Answer"
}

// viewOf turns what the Answerer returned into the page's view of it.
func viewOf(res *agent.Result, err error) *answerView {
	v := &answerView{
		Heading:  heading(res.Outcome),
		Question: present.Line(res.Question),
		Outcome:  string(res.Outcome),
		Text:     present.Block(res.Answer),
		Provider: cmp.Or(present.Line(agent.ProviderModel(res.Provider)), "no provider"),
		Steps:    present.Plural(res.Steps, "step"),
		Time:     present.Seconds(res.Elapsed),
		Tokens:   fmt.Sprintf("%s+%s tokens", present.Thousands(res.Tokens.Prompt), present.Thousands(res.Tokens.Completion)),
		Cached:   res.Cached,
	}
	if err != nil && v.Text == "" {
		v.Failure = agent.FailureText(err)
	}
	if res.Outcome == agent.Refused {
		r := &refusalView{LayerName: agent.LayerModel.Name(), Layer: string(agent.LayerModel), Reason: "it declined to run SQL for this question"}
		if st := res.Refusal; st != nil {
			r = &refusalView{LayerName: st.Layer.Name(), Layer: string(st.Layer), Reason: present.Line(st.Reason), SQL: present.Block(st.SQL)}
		}
		v.Refusal = r
	}
	if res.FinalSQL != "" {
		v.FinalSQL = present.Block(res.FinalSQL)
		v.Columns = make([]string, len(res.Columns))
		for i, c := range res.Columns {
			v.Columns[i] = present.Line(c)
		}
		v.Rows = make([][]string, len(res.Rows))
		for i, r := range res.Rows {
			cells := make([]string, len(r))
			for j, val := range r {
				cells[j] = present.Value(val)
			}
			v.Rows[i] = cells
		}
		v.RowsNote = present.Plural(len(res.Rows), "row")
		if res.Truncated {
			v.RowsNote += ", cut at the row cap"
		}
	}
	// A chart that cannot be drawn is left out: the rows above say it all.
	if png, alt, err := chart.ForAnswer(res); err == nil && png != nil {
		v.Chart = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
		v.ChartAlt = present.Line(alt)
	}
	if len(res.Statements) > 1 || (len(res.Statements) == 1 && res.Statements[0].Status != agent.StatusOK) {
		v.Tried = make([]agent.Statement, len(res.Statements))
		for i, st := range res.Statements {
			v.Tried[i] = agent.Statement{SQL: present.Block(st.SQL), Status: st.Status, Layer: st.Layer, Reason: present.Line(st.Reason)}
		}
	}
	return v
}

// servePage serves the page: on GET the form and the recorded questions; on
// POST (the form's question) the same with the answer, or with why the
// question was not asked (400, 429 or 503).
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	data := pageData{MaxChars: s.cfg.MaxQuestionChars, Questions: s.cfg.Questions}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if err := r.ParseForm(); err != nil {
			status, data.Notice = http.StatusBadRequest, "The form could not be read; please ask again."
		} else {
			q := r.PostForm.Get("question")
			data.Question = q
			res, err, p := s.ask(r.Context(), s.person(r), q)
			if p != nil {
				status, data.Notice = p.status, p.text
			} else {
				data.Answer = viewOf(res, err)
			}
		}
	}
	var buf bytes.Buffer
	if err := s.page.tmpl.Execute(&buf, data); err != nil {
		s.log.ErrorContext(r.Context(), "web: render the page", "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client may have gone; nothing to do
}

// serveCSS serves the page's stylesheet.
func serveCSS(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/web.css")
	if err != nil { // embedded: cannot happen
		http.Error(w, "no stylesheet", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(b)
}
