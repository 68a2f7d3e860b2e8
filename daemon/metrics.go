package daemon

import (
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/supervise"
)

// watchParts adds the metrics of what the spine holds: the journal's
// newest id, each router component's outbox (pending, delivered, failed,
// attached: the bridges and the voice among them), the event log's
// rollups still due, each bridge's connection, queue and counts, and each
// supervised part's state and restarts.
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
	bridges := func() []bridge.Status {
		if d.bridges == nil {
			return nil
		}
		return d.bridges.Status()
	}
	m.Gauges("cyan_bridge_connected", "1 while a chat-app bridge is connected to its platform.", []string{"bridge", "platform"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, b := range bridges() {
			v := 0.0
			if b.Connected {
				v = 1
			}
			out = append(out, metrics.Sample{Labels: []string{b.Name, b.Platform}, Value: v})
		}
		return out
	})
	m.Gauges("cyan_bridge_offline", "1 while a bridge's connection is up but the platform has logged its account out (NapCat bot_offline, a heartbeat with online false).", []string{"bridge"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, b := range bridges() {
			v := 0.0
			if b.Offline {
				v = 1
			}
			out = append(out, metrics.Sample{Labels: []string{b.Name}, Value: v})
		}
		return out
	})
	m.Gauges("cyan_bridge_silent", "1 while a connected bridge whose chats were busy has heard nothing for bridges.silent_after (it was probed).", []string{"bridge"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, b := range bridges() {
			v := 0.0
			if b.Silent != "" {
				v = 1
			}
			out = append(out, metrics.Sample{Labels: []string{b.Name}, Value: v})
		}
		return out
	})
	m.Gauges("cyan_bridge_queue", "Outgoing messages a bridge has waiting.", []string{"bridge"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, b := range bridges() {
			out = append(out, metrics.Sample{Labels: []string{b.Name}, Value: float64(b.Queue)})
		}
		return out
	})
	m.Counters("cyan_bridge_messages_total", "A bridge's messages: received, stored, skipped (duplicates, the bot's own, denied, malformed), turns, sent, failed.", []string{"bridge", "what"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, b := range bridges() {
			for _, x := range []struct {
				what string
				n    uint64
			}{{"received", b.Received}, {"stored", b.Stored}, {"skipped", b.Skipped}, {"turns", b.Turns}, {"sent", b.Sent}, {"failed", b.Failed}} {
				out = append(out, metrics.Sample{Labels: []string{b.Name, x.what}, Value: float64(x.n)})
			}
		}
		return out
	})
	parts := func() []supervise.State { return partStates{d}.Status() }
	m.Gauges("cyan_part_state", "1 for the state each supervised part is in (starting, running, restarting, stopped, failed).", []string{"part", "state"}, func() []metrics.Sample {
		var out []metrics.Sample
		for _, st := range parts() {
			for _, s := range []string{supervise.Starting, supervise.Running, supervise.Restarting, supervise.Stopped, supervise.Failed} {
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
