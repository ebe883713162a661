package bot

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"sqlbot/agent"
	"sqlbot/bot/state"
)

// metrics are one Bot's Prometheus metrics, in a registry of its own (no
// global registry, so two bots, or two tests, never share counters).
type metrics struct {
	reg           *prometheus.Registry
	questions     prometheus.Counter
	answers       *prometheus.CounterVec // by outcome
	refusals      *prometheus.CounterVec // by layer
	answerSeconds prometheus.Histogram
	rateLimited   *prometheus.CounterVec // by limit
	inFlight      prometheus.Gauge
	verifications *prometheus.CounterVec // by change: added or withdrawn
}

func newMetrics(b *Bot) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		questions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sqlbot_questions_total",
			Help: "Questions received (after de-duplication), including those turned away by a limit.",
		}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sqlbot_answers_total",
			Help: "Replies to questions, by outcome.",
		}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sqlbot_refusals_total",
			Help: "Refused statements, by the layer that refused them (model: declined without SQL).",
		}, []string{"layer"}),
		answerSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sqlbot_answer_seconds",
			Help:    "Time to answer a question, from the start of work to the result (queueing excluded).",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300},
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sqlbot_rate_limited_total",
			Help: "Questions turned away, by limit.",
		}, []string{"limit"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sqlbot_questions_in_flight",
			Help: "Questions being answered now.",
		}),
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sqlbot_verifications_total",
			Help: "Verifiers' marks on answers, by change: added (a ✅) or withdrawn (its removal).",
		}, []string{"change"}),
	}
	failovers := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "sqlbot_provider_failovers_total",
		Help: "Times a model call moved on from a failing provider to the next.",
	}, func() float64 {
		if b.cfg.Failovers == nil {
			return 0
		}
		return float64(b.cfg.Failovers())
	})
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sqlbot_questions_queued",
		Help: "Questions waiting for a free slot (MaxConcurrent are worked on at once).",
	}, func() float64 { return float64(b.slots.queued()) })
	connected := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sqlbot_slack_connected",
		Help: "1 while the Socket Mode connection is up.",
	}, func() float64 {
		if b.connected.Load() {
			return 1
		}
		return 0
	})
	guardRules := ruleCounts{
		desc: prometheus.NewDesc("sqlbot_guard_refusals_total",
			"Statements the guard refused, by rule (forbidden_keyword, multiple_statements, …).", []string{"rule"}, nil),
		counts: b.cfg.GuardRefusals,
	}
	m.reg.MustRegister(m.questions, m.answers, m.refusals, m.answerSeconds, m.rateLimited, m.inFlight, m.verifications,
		failovers, queued, connected, guardRules,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Known label values start at 0, so that rates and alerts work from the start.
	for _, o := range []agent.Outcome{agent.Answered, agent.Refused, agent.Unanswerable, agent.Budget, agent.Failed} {
		m.answers.WithLabelValues(string(o))
	}
	for _, l := range append(agent.Layers(), agent.LayerModel) {
		m.refusals.WithLabelValues(string(l))
	}
	for _, c := range []string{"added", "withdrawn"} {
		m.verifications.WithLabelValues(c)
	}
	for _, l := range []string{string(state.RuleUserMinute), string(state.RuleUserDay), string(state.RuleGlobalDay), limitLength} {
		m.rateLimited.WithLabelValues(l)
	}
	if b.cfg.StateHealth != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sqlbot_state_shared",
			Help: "1 while the state is shared with the other replicas (Redis answers), 0 while each replica keeps its own.",
		}, func() float64 {
			if b.cfg.StateHealth().OK {
				return 1
			}
			return 0
		}))
	}
	return m
}

// ruleCounts exports counts kept elsewhere (the guard's, by rule) as a
// counter with a label per key.
type ruleCounts struct {
	desc   *prometheus.Desc
	counts func() map[string]int64
}

func (c ruleCounts) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c ruleCounts) Collect(ch chan<- prometheus.Metric) {
	if c.counts == nil {
		return
	}
	for rule, n := range c.counts() {
		if m, err := prometheus.NewConstMetric(c.desc, prometheus.CounterValue, float64(n), rule); err == nil {
			ch <- m
		}
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// layerLabel keeps the refusals metric's label set small and known: a
// layer's own name, "model", or "other".
func layerLabel(l agent.Layer) string {
	if l == agent.LayerModel || slices.Contains(agent.Layers(), l) {
		return string(l)
	}
	return "other"
}
