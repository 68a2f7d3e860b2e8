package onebot

import (
	"unicode/utf8"

	"github.com/cyan-agent/cyan/bridge"
)

// MaxText is the most characters (runes) cyan puts in one QQ message.
//
// Neither NapCat nor LLOneBot limits a message's text: NapCat hands the
// elements to the QQ NT kernel's sendMsg and waits for the sent record
// (NapNeko/NapCatQQ packages/napcat-core/apis/msg.ts sendMsg and
// packages/napcat-onebot/api/msg.ts sendMsgWithOb11UniqueId, commit
// af07479), LLOneBot the same (LLOneBot/LLOneBot src/ntqqapi/api/msg.ts,
// commit c9bd964). What QQ refuses comes back as a failed action —
// NapCat's OneBotAction.ts answers a thrown "发送消息失败" or a kernel
// timeout with retcode 1200 — never as a length error. So the limit is a
// practical one, well under the lengths QQ clients accept in one message,
// and a failed send of a long message is taken as "too long": the bridge
// splits it again (longFailure).
const MaxText = 3000

// longFailure is the length from which a refused send counts as too long.
const longFailure = 1000

var _ bridge.Limited = (*Adapter)(nil)

// Limit implements bridge.Limited.
func (a *Adapter) Limit() bridge.Limit { return bridge.Limit{Max: MaxText} }

// refusedLong reports whether a failed send of m may have failed for its
// length.
func refusedLong(m bridge.Outgoing, r *Response) bool {
	return !rateLimited(r) && utf8.RuneCountInString(m.Text()) >= longFailure
}
