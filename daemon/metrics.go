package daemon

import (
	"time"

	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/supervise"
)

// watchParts adds the metrics of what the spine holds: the journal's
// newest id, each router component's outbox (pending, delivered, failed,
// attached: the bridges and the voice among them), the event log's
// rollups still due, and each supervised part's state and restarts.
func (d *Daemon) watchParts(m *metrics.Metrics, now func() time.Time) {
	m.Counters("cyan_journal_events_total", "Events posted on the journal (its newest id).", nil, func() []metrics.Sample {
		return []metrics.Sample{{Value: float64(d.store.Journal().Last())}}
	})
	m.Gauges("cyan_outbox_pending", "Deliveries waiting in a component's outbox (a bridge, the voice, the page).", []string{"component"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, s := range d.router.Status() {
			out = append(out, metrics.Sample{Labels: []string{s.Name}, Value: float64(s.Pending)})
		}
		return out
	})
	m.Counters("cyan_outbox_deliveries_total", "Deliveries a component took (delivered) or refused for good (failed).", []string{"component", "outcome"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, s := range d.router.Status() {
			out = append(out, metrics.Sample{Labels: []string{s.Name, "delivered"}, Value: float64(s.Delivered)},
				metrics.Sample{Labels: []string{s.Name, "failed"}, Value: float64(s.Failed)})
		}
		return out
	})
	m.Gauges("cyan_component_attached", "1 while a component (a bridge, the voice) is attached and taking deliveries.", []string{"component"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, s := range d.router.Status() {
			v := 0.0
			if s.Attached {
				v = 1
			}
			out = append(out, metrics.Sample{Labels: []string{s.Name}, Value: v})
		}
		return out
	})
	m.Gauges("cyan_events_rollups_due", "Day, week, month and year summaries of the event log still due.", nil, func() []metrics.Sample {
		due, err := d.events.PendingRollups(now())
		if err != nil {
			return nil
		}
		return []metrics.Sample{{Value: float64(len(due))}}
	})
	parts := func() []supervise.State { return partStates{d}.Status() }
	m.Gauges("cyan_part_state", "1 for the state each supervised part is in (running, restarting, stopped, failed).", []string{"part", "state"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, st := range parts() {
			for _, s := range []string{supervise.Running, supervise.Restarting, supervise.Stopped, supervise.Failed} {
				v := 0.0
				if st.State == s {
					v = 1
				}
				out = append(out, metrics.Sample{Labels: []string{st.Name, s}, Value: v})
			}
		}
		return out
	})
	m.Counters("cyan_part_restarts_total", "Restarts of each supervised part since the daemon started.", []string{"part"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, st := range parts() {
			out = append(out, metrics.Sample{Labels: []string{st.Name}, Value: float64(st.Restarts)})
		}
		return out
	})
}
