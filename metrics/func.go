package metrics

import "github.com/prometheus/client_golang/prometheus"

// Sample is one value of a metric read when scraped, with its label
// values in the order the metric declares them.
type Sample struct {
	Labels []string
	Value  float64
}

// Gauges adds a metric whose values read() gives at each scrape (the
// parts' states, the outboxes' lengths): what other packages hold is read
// through a function, so this package imports none of them.
func (m *Metrics) Gauges(name, help string, labels []string, read func() []Sample) {
	m.funcs(name, help, prometheus.GaugeValue, labels, read)
}

// Counters is Gauges for values that only grow (deliveries, restarts).
func (m *Metrics) Counters(name, help string, labels []string, read func() []Sample) {
	m.funcs(name, help, prometheus.CounterValue, labels, read)
}

func (m *Metrics) funcs(name, help string, kind prometheus.ValueType, labels []string, read func() []Sample) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&funcCollector{desc: prometheus.NewDesc(name, help, labels, nil), kind: kind, read: read})
}

type funcCollector struct {
	desc *prometheus.Desc
	kind prometheus.ValueType
	read func() []Sample
}

func (c *funcCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *funcCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.read() {
		ch <- prometheus.MustNewConstMetric(c.desc, c.kind, s.Value, s.Labels...)
	}
}
