package onebot

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cyan-agent/cyan/bridge"
)

// The account's state on a connection (conn.offline).
const (
	accountOK          int32 = iota
	offlineByNotice          // a bot_offline notice
	offlineByHeartbeat       // a heartbeat with status.online false
)

// accountState follows a heartbeat's status.online. NapCat (OB11HeartbeatEvent
// at commit af07479: online is !!selfInfo.online) and LLOneBot
// (src/onebot11/event/meta/OB11HeartbeatEvent.ts at commit c9bd964: online
// is selfInfo.online) say false once the account is kicked offline while
// the WebSocket stays up: the bridge is offline within one heartbeat, and
// back at one that says online. Lagrange.OneBot's heartbeats always say
// online (ReverseWSService.cs at commit e17fe35: new OneBotStatus(true,
// true)), so a heartbeat that says online clears only an offline that a
// heartbeat said: after a bot_offline notice (Lagrange's OneBotBotOffline,
// NapCat's BotOfflineEvent) the account stays offline until a heartbeat
// says otherwise twice — false, then true — or the connection is new.
func (a *Adapter) accountState(c *conn, st *HeartStatus) {
	if st == nil || st.Online == nil {
		return // no word on the account
	}
	w, ok := a.sink.(bridge.AccountWatcher)
	if !ok {
		return
	}
	switch {
	case !*st.Online && c.offline.Swap(offlineByHeartbeat) == accountOK:
		w.AccountOffline("the heartbeat says the account is offline (status.online false)")
	case *st.Online && c.offline.CompareAndSwap(offlineByHeartbeat, accountOK):
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
