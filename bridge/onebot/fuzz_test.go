package onebot

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
)

// nopNoticer takes what the adapter reports and checks nothing but that
// the chats it names are whole.
type nopNoticer struct{}

func (nopNoticer) Inbound(context.Context, *bridge.Message) {}
func (nopNoticer) Connected(bridge.User)                    {}
func (nopNoticer) Disconnected(error)                       {}
func (nopNoticer) Problem(error)                            {}
func (nopNoticer) Recalled(_ context.Context, c bridge.Chat, id string) {
	if c.ID == "" || id == "" {
		panic("a recall without chat or message id")
	}
}
func (nopNoticer) Poked(_ context.Context, c bridge.Chat, from bridge.User, _ time.Time) {
	if c.ID == "" || from.ID == "" {
		panic("a poke without chat or sender")
	}
}

// FuzzReversePath: any path reads as a name or none, never a panic; a
// name never keeps a slash at either end.
func FuzzReversePath(f *testing.F) {
	for _, s := range []string{ReversePath, ReversePath + "/", ReversePath + "/api", ReversePath + "/event", ReversePath + "/qq",
		ReversePath + "/qq/", ReversePath + "/qq/api", ReversePath + "//", ReversePath + "/a/b/c/api", "/other", ""} {
		f.Add(s)
	}
	m := NewReverseMux(nil, map[string]*Adapter{"qq": {}, "api": {}})
	f.Fuzz(func(t *testing.T, path string) {
		name, ok := m.nameOf(path)
		if ok && (name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/")) {
			t.Fatalf("%q read as name %q", path, name)
		}
	})
}

// FuzzParseFrame: no frame crashes the parser; an event that parses turns
// into a bridge message without panicking.
func FuzzParseFrame(f *testing.F) {
	f.Add([]byte(`{"time":1,"self_id":10001,"post_type":"message","message_type":"group","sub_type":"normal","message_id":5,"group_id":7,"user_id":1,"message":[{"type":"at","data":{"qq":"10001"}},{"type":"text","data":{"text":" hi"}}],"raw_message":"[CQ:at,qq=10001] hi","font":0,"sender":{"user_id":1,"nickname":"a","card":"A"}}`))
	f.Add([]byte(`{"post_type":"message","message_type":"private","message_id":"6","user_id":"2","message":"[CQ:face,id=178]看看[CQ:image,file=1.jpg,url=http://x/1.jpg]&#91;x&#93;"}`))
	f.Add([]byte(`{"post_type":"meta_event","meta_event_type":"heartbeat","interval":15000,"status":{}}`))
	f.Add([]byte(`{"status":"ok","retcode":0,"data":{"message_id":1},"echo":"cyan-1"}`))
	f.Add([]byte(`{"post_type":"message","message_type":"group","group_id":1,"user_id":1,"message":{"type":"text","data":{"text":"x","n":3}}}`))
	f.Add([]byte(`{"time":1,"self_id":10001,"post_type":"notice","notice_type":"group_recall","group_id":555,"user_id":1,"operator_id":1,"message_id":4242}`))
	f.Add([]byte(`{"post_type":"notice","notice_type":"friend_recall","user_id":"7","message_id":"99"}`))
	f.Add([]byte(`{"self_id":10001,"post_type":"notice","notice_type":"notify","sub_type":"poke","group_id":555,"user_id":2,"target_id":10001,"raw_info":[]}`))
	f.Add([]byte(`{"post_type":"notice","notice_type":"notify","sub_type":"poke","user_id":7,"sender_id":7,"target_id":10001}`))
	f.Add([]byte(`{"status":"failed","retcode":1403,"data":null,"message":"token验证失败","wording":"token验证失败","echo":null,"stream":"normal-action"}`))
	f.Add([]byte(`{"post_type":"meta_event","meta_event_type":"lifecycle","sub_type":"connect","self_id":10001,"time":1}`))
	f.Add([]byte(`{"time":1,"self_id":10001,"post_type":"notice","notice_type":"bot_offline","user_id":10001,"tag":"下线通知","message":"你的账号在另一台设备登录"}`))
	f.Add([]byte(`{"post_type":"meta_event","meta_event_type":"heartbeat","interval":30000,"status":{"online":false,"good":true}}`))
	f.Add([]byte(`{"post_type":"notice","notice_type":"group_decrease","sub_type":"kick","group_id":555,"user_id":4,"operator_id":1,"time":2}`))
	f.Add([]byte(`{"post_type":"notice","notice_type":"notify","sub_type":"group_name","group_id":555,"user_id":1,"name_new":"cats"}`))
	f.Add([]byte(`{"post_type":"message","message_type":"group","group_id":1,"user_id":1,"message":[{"type":"json","data":{"data":"{"prompt":"[QQ小程序]x","meta":{"detail_1":{"title":"x","qqdocurl":"https://x.y"}}}"}},{"type":"forward","data":{"id":"9","content":[{"sender":{"nickname":"B"},"message":[{"type":"text","data":{"text":"hi"}}]}]}},{"type":"onlinefile","data":{"fileName":"a","fileSize":"12","isDir":true}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFrame(b)
		if err != nil {
			return
		}
		if fr.Event != nil && fr.Event.PostType == "notice" {
			a := &Adapter{o: Options{Clock: clock.Real{}}, sink: nopNoticer{}}
			a.notice(context.Background(), fr.Event, "10001")
		}
		if fr.Event != nil && fr.Event.PostType == "message" {
			m := toMessage(fr.Event, nil)
			if m.Chat.ID == "" || m.From.ID == "" {
				t.Fatalf("a parsed message event without chat or sender: %q", b)
			}
		}
	})
}

// FuzzCQ: parsing never panics, and what RenderCQ writes parses back to
// the same segments.
func FuzzCQ(f *testing.F) {
	for _, s := range []string{"[CQ:face,id=178]看看我刚拍的照片[CQ:image,file=123.jpg]", "&#91;第一部分&#93;[CQ:image,file=123.jpg]图片之后",
		"[CQ:share,title=标题中有=等号,url=http://baidu.com]", "[CQ:share,title=震惊&#44;小伙,url=http://x/?a=1&amp;b=2]",
		"[CQ:", "[CQ:]", "a]b[", "[CQ:at,qq=all] x &amp;&#44;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs := ParseCQ(s)
		again := ParseCQ(RenderCQ(segs))
		if len(segs) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(merge(segs), merge(again)) {
			t.Fatalf("%q: %v → %q → %v", s, segs, RenderCQ(segs), again)
		}
	})
}

// merge joins neighbouring text segments (rendering may merge them).
func merge(segs []Segment) []Segment {
	var out []Segment
	for _, s := range segs {
		if s.Type == "text" && len(out) > 0 && out[len(out)-1].Type == "text" {
			out[len(out)-1] = Segment{Type: "text", Data: map[string]string{"text": out[len(out)-1].Data["text"] + s.Data["text"]}}
			continue
		}
		if s.Type == "text" && s.Data["text"] == "" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// FuzzMatchSent feeds history answers (an implementation's text) to the
// search for an unconfirmed send: it never panics, and what it finds is
// the bot's own message with the text sought.
func FuzzMatchSent(f *testing.F) {
	f.Add([]byte(`{"messages":[{"message_id":5,"user_id":10001,"time":100,"message":[{"type":"text","data":{"text":"hi"}}]}]}`), "hi")
	f.Add([]byte(`{"messages":[{"message_id":"6","sender":{"user_id":"10001"},"message":"hi [CQ:at,qq=1]"}]}`), "hi @1")
	f.Add([]byte(`{"messages":null}`), "")
	f.Add([]byte(`{"messages":[{"message_id":1e99,"user_id":10001}]}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, want string) {
		p, err := matchSent(data, "10001", want, 50)
		if err != nil && p.found {
			t.Fatal("found with an error")
		}
		if p.found && p.id == "" {
			t.Fatal("found without an id")
		}
	})
}

// FuzzCard: any json segment data reads as a card or none, never a panic;
// what it gives is bounded.
func FuzzCard(f *testing.F) {
	for _, s := range []string{
		`{"app":"com.tencent.miniapp_01","prompt":"[QQ小程序]哔哩哔哩","meta":{"detail_1":{"title":"哔哩哔哩","desc":"猫","qqdocurl":"https://b23.tv/x"}}}`,
		`{"app":"com.tencent.structmsg","prompt":"[分享]t","meta":{"news":{"title":"t","desc":"d","jumpUrl":"https://x.y"}}}`,
		`"{\"prompt\":\"p\"}"`, `{"meta":{"x":{"url":"javascript:alert(1)"}}}`, `{"meta":null}`, `[]`, ``, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		title, desc, link, ok := card(data)
		if len(title) > cardField+4 || len(desc) > cardField+4 || len(link) > 304 {
			t.Fatalf("unbounded card from %q: %q %q %q", data, title, desc, link)
		}
		if link != "" && !strings.HasPrefix(link, "http://") && !strings.HasPrefix(link, "https://") {
			t.Fatalf("link %q is not http(s)", link)
		}
		if !ok && (title != "" || link != "") {
			t.Fatalf("not ok but %q %q", title, link)
		}
		_ = cardText("card", data)
	})
}

// FuzzForward: any forward content (NapCat's messages, node segments,
// nested forwards) renders within its bounds, never a panic.
func FuzzForward(f *testing.F) {
	for _, s := range []string{
		`[{"user_id":2,"sender":{"nickname":"Bob"},"message":[{"type":"text","data":{"text":"hi"}}]}]`,
		`[{"type":"node","data":{"nickname":"A","content":[{"type":"text","data":{"text":"x"}},{"type":"forward","data":{"id":"1","content":[{"sender":{"nickname":"B"},"message":"deep"}]}}]}}]`,
		`{"messages":[{"sender":{"nickname":"C"},"message":"[CQ:face,id=1]"}]}`,
		`[{"type":"node","data":{"name":"n","uin":"5","message":"plain"}}]`, `null`, `[1,2]`, `{"messages":7}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		nodes := forwardNodes([]byte(raw))
		calls := 0
		fetch := func(string) []node {
			calls++
			return nodes
		}
		out := forwardText(nodes, fetch)
		if len(out) > forwardBytes+400 {
			t.Fatalf("forward text of %d bytes from %q", len(out), raw)
		}
		if calls > forwardMax {
			t.Fatalf("%d fetches for one forward", calls)
		}
	})
}

// FuzzHistoryEvents: no history answer crashes its reader; every event it
// yields is a message of the chat asked about, and turns into a bridge
// message without panicking.
func FuzzHistoryEvents(f *testing.F) {
	f.Add([]byte(`{"messages":[{"self_id":10001,"user_id":1,"time":1764000000,"message_id":7,"message_seq":7,"real_id":7,"message_type":"group","sender":{"user_id":1,"nickname":"amy","card":""},"raw_message":"hi","font":14,"sub_type":"normal","message":[{"type":"text","data":{"text":"hi"}}],"message_format":"array","post_type":"message","group_id":555}]}`))
	f.Add([]byte(`{"messages":[{"user_id":2,"message_id":"8","message":"[CQ:at,qq=10001] lunch?"}]}`))
	f.Add([]byte(`{"messages":[{"message_type":"private","user_id":3,"message_id":9,"message":[]},null,{"group_id":556,"user_id":1,"message_id":1,"message":"x"}]}`))
	f.Add([]byte(`{"messages":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		chat := bridge.Chat{Kind: bridge.Group, ID: "555"}
		evs, err := historyEvents(raw, chat)
		if err != nil {
			return
		}
		for _, ev := range evs {
			if ev.MessageType != "group" || string(ev.GroupID) != "555" {
				t.Fatalf("an event of another chat: %+v", ev)
			}
			_ = toMessage(ev, nil)
		}
	})
}
