package onebot

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cyan-agent/cyan/bridge"
)

// accountState follows a heartbeat's status.online (NapCat
// OB11HeartbeatEvent at commit af07479: online is !!selfInfo.online, false
// once the account is kicked offline while the WebSocket stays up): a
// heartbeat that says offline makes the bridge offline within one
// heartbeat; one that says online again brings it back.
func (a *Adapter) accountState(c *conn, st *HeartStatus) {
	if st == nil || st.Online == nil {
		return // Lagrange and older implementations: no word on the account
	}
	w, ok := a.sink.(bridge.AccountWatcher)
	if !ok {
		return
	}
	switch {
	case !*st.Online && c.offline.CompareAndSwap(false, true):
		w.AccountOffline("the heartbeat says the account is offline (status.online false)")
	case *st.Online && c.offline.CompareAndSwap(true, false):
		w.AccountOnline()
	}
}

// Probe implements bridge.Prober with get_status (NapCat GetStatus.ts at
// commit af07479: {"online": !!selfInfo.online, "good": true, "stat": {}}).
func (a *Adapter) Probe(ctx context.Context) error {
	c := a.current()
	if c == nil {
		return bridge.ErrOffline
	}
	resp, err := c.call(ctx, "get_status", nil, a.o.Timeout)
	if err != nil {
		return fmt.Errorf("get_status: %w", err)
	}
	if resp.Status != "ok" {
		return fmt.Errorf("%s", failure("get_status", resp))
	}
	var st HeartStatus
	if err := json.Unmarshal(resp.Data, &st); err != nil {
		return fmt.Errorf("get_status: unreadable answer: %w", err)
	}
	if st.Online != nil && !*st.Online {
		return fmt.Errorf("get_status: %w", bridge.ErrAccountOffline)
	}
	return nil
}

var _ bridge.Prober = (*Adapter)(nil)

// forwardTimeout bounds get_forward_msg: the event queue waits for it.
const forwardTimeout = 5 * time.Second

// forward fetches a forward's messages by id (get_forward_msg; NapCat
// GetForwardMsg.ts at commit af07479 answers {"messages": [OB11Message…]},
// go-cqhttp and Lagrange node segments), nil when it cannot.
func (a *Adapter) forward(ctx context.Context, c *conn, id string) []node {
	if !c.canCall() {
		if c = a.current(); c == nil {
			return nil
		}
	}
	resp, err := c.call(ctx, "get_forward_msg", map[string]any{"message_id": id, "id": id}, forwardTimeout)
	if err != nil || resp.Status != "ok" {
		a.log.Debug("onebot: get_forward_msg failed; the forward is named, not read", "id", id, "err", err)
		return nil
	}
	return forwardNodes(resp.Data)
}
