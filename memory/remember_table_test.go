package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/store"
)

// rememberPair is one row of the remember table: an item held, a text
// remembered after it, and whether the text truly says the same thing
// (then the item is strengthened; otherwise both are kept).
type rememberPair struct {
	name       string
	held, text string
	same       bool
	// oneWay: text is one sentence of held, so it is the same only in
	// that order; held remembered after text adds the other sentences.
	oneWay bool
}

// rememberPairs are the table's rows, in English, Chinese and Japanese.
// The "differs" rows are the ways a fact was lost: a one-character term,
// a digit between CJK characters, another name, another number, a
// negation, the order of the words, a word more or less.
var rememberPairs = []rememberPair{
	// English, the same fact.
	{"en case and stop", "Bob's number is 555-0000", "bob's number is 555-0000.", true, false},
	{"en case and bang", "Dentist appointment on Friday at 4 pm", "dentist appointment on friday at 4 PM!", true, false},
	{"en one sentence of the item", "Alice's cat is named Nyalia. She is 3 years old.", "alice's cat is named nyalia", true, true},
	{"en spacing", "  the wifi password is   hunter2 ", "The WiFi password is hunter2", true, false},
	{"en full width", "the code is １２３４", "The code is 1234", true, false},
	// English, another fact.
	{"en 3 pm vs 4 pm", "dentist appointment on friday at 3 pm", "dentist appointment on friday at 4 pm", false, false},
	{"en codename 1 vs 2", "codename 1", "codename 2", false, false},
	{"en codename 1 vs 6", "codename 1", "codename 6", false, false},
	{"en bob vs carol same number", "bob's phone number is 555-1234", "carol's phone number is 555-1234", false, false},
	{"en bob vs carol other number", "bob's number is 555-0000", "carol's number is 555-1234", false, false},
	{"en negation", "I like tea", "I don't like tea", false, false},
	{"en not allergic", "alice is allergic to nuts", "alice is not allergic to nuts", false, false},
	{"en who owes whom", "bob owes alice 20 dollars", "alice owes bob 20 dollars", false, false},
	{"en who met whom", "tom met jerry on monday", "jerry met tom on monday", false, false},
	{"en room a vs b", "the meeting is in room a", "the meeting is in room b", false, false},
	{"en one-letter names", "x is 2", "y is 2", false, false},
	{"en plan a vs b", "plan a", "plan b", false, false},
	{"en sister vs brother", "my sister lives in Lyon", "my brother lives in Lyon", false, false},
	{"en minutes", "the flight leaves at 9:30", "the flight leaves at 9:45", false, false},
	{"en one digit more", "the door code is 1234", "the door code is 12345", false, false},
	{"en more detail", "dentist appointment on friday", "dentist appointment on friday at 4 pm", false, false},
	{"en less detail", "dentist appointment on friday at 4 pm", "dentist appointment on friday", false, false},
	{"en age", "alice is 30", "alice is 31", false, false},
	{"en one letter of a password", "the password is abc", "the password is abd", false, false},
	{"en am added", "call mom at 5", "call mom at 5 am", false, false},
	{"en cats vs dogs", "bob likes cats", "bob likes dogs", false, false},
	{"en rent", "the rent is $1,200", "the rent is $1,250", false, false},
	{"en version", "the server runs version 1.2.3", "the server runs version 1.2.4", false, false},
	{"en 2 vs 12", "buy 2 apples", "buy 12 apples", false, false},
	{"en hunter2 vs hunter3", "the wifi password is hunter2", "the wifi password is hunter3", false, false},
	{"en house number", "bob lives at 42 baker street", "bob lives at 24 baker street", false, false},
	{"en phone phone", "carol's number is 555-1234", "carol's phone number is 555-1234", false, false},
	// Chinese, the same fact.
	{"zh full stop", "我家有3只猫", "我家有3只猫。", true, false},
	{"zh full-width digit", "我家有３只猫", "我家有3只猫", true, false},
	{"zh one sentence of the item", "妈妈的生日是五月三日。爸爸喜欢喝茶。", "爸爸喜欢喝茶", true, true},
	{"zh spaces", "我 的 电话 是 123", "我的电话是123", true, false},
	// Chinese, another fact.
	{"zh digit in cjk", "我家有3只猫", "我家有4只猫", false, false},
	{"zh numeral", "我家有三只猫", "我家有四只猫", false, false},
	{"zh other name", "鲍勃的电话是555-1234", "卡罗尔的电话是555-1234", false, false},
	{"zh negation", "我喜欢喝茶", "我不喜欢喝茶", false, false},
	{"zh who owes whom", "张三欠李四100元", "李四欠张三100元", false, false},
	{"zh hour", "会议在周五下午3点", "会议在周五下午4点", false, false},
	{"zh codename", "代号1", "代号2", false, false},
	{"zh sister vs brother", "我妹妹住在上海", "我弟弟住在上海", false, false},
	{"zh password", "密码是abc123", "密码是abc124", false, false},
	{"zh city", "明天去北京", "明天去南京", false, false},
	{"zh not allergic", "他对花生过敏", "他对花生不过敏", false, false},
	{"zh rent", "房租是1200元", "房租是1250元", false, false},
	{"zh age", "小明今年8岁", "小明今年9岁", false, false},
	{"zh cat vs dog", "猫叫咪咪", "狗叫咪咪", false, false},
	{"zh weekday", "周一开会", "周二开会", false, false},
	{"zh one latin letter", "我选a方案", "我选b方案", false, false},
	{"zh more detail", "周五看牙医", "周五下午4点看牙医", false, false},
	// Japanese, the same fact.
	{"ja full stop", "私は猫が好きです", "私は猫が好きです。", true, false},
	{"ja full-width digits", "会議は金曜日の１５時です", "会議は金曜日の15時です", true, false},
	{"ja one sentence of the item", "妹は大阪に住んでいる。弟は東京にいる。", "弟は東京にいる", true, true},
	// Japanese, another fact.
	{"ja digit in kana", "猫を3匹飼っている", "猫を4匹飼っている", false, false},
	{"ja hour", "会議は金曜日の15時です", "会議は金曜日の16時です", false, false},
	{"ja negation", "私はお茶が好きです", "私はお茶が好きではありません", false, false},
	{"ja other name", "田中さんの電話番号は090-1234-5678", "佐藤さんの電話番号は090-1234-5678", false, false},
	{"ja sister vs brother", "妹は大阪に住んでいる", "弟は大阪に住んでいる", false, false},
	{"ja date", "誕生日は5月3日", "誕生日は5月4日", false, false},
	{"ja codename", "コードネーム1", "コードネーム2", false, false},
	{"ja city", "東京へ行く", "京都へ行く", false, false},
	{"ja who lent whom", "田中さんが佐藤さんに千円借りた", "佐藤さんが田中さんに千円借りた", false, false},
	{"ja dog vs cat", "犬の名前はポチ", "猫の名前はポチ", false, false},
	{"ja day after", "明日は雨", "明後日は雨", false, false},
	{"ja password", "パスワードはabcです", "パスワードはabdです", false, false},
	{"ja has vs has not", "卵アレルギーがある", "卵アレルギーがない", false, false},
	{"ja weekday", "月曜日に歯医者", "火曜日に歯医者", false, false},
	// Signs and symbols are part of the fact (every row in both orders).
	{"sign utc", "my timezone is UTC+8", "my timezone is UTC-8", false, false},
	{"sign minus degrees", "the freezer is at -18 degrees", "the freezer is at 18 degrees", false, false},
	{"sign greater less", "alert when the value is > 90", "alert when the value is < 90", false, false},
	{"sign c++", "bob writes C++", "bob writes C", false, false},
	{"sign c#", "alice codes in C#", "alice codes in C", false, false},
	{"sign dollar yen", "the ticket costs $50", "the ticket costs ¥50", false, false},
	{"sign thumbs", "bob's answer was 👍", "bob's answer was 👎", false, false},
	{"sign fraction decimal", "add 3/4 cup of flour", "add 3.4 cup of flour", false, false},
	{"sign zh minus degrees", "冰箱冷冻室是-18度", "冰箱冷冻室是18度", false, false},
	{"sign percent", "the loan rate is 5%", "the loan rate is 5", false, false},
	{"sign degrees", "it was 30°C", "it was 30C", false, false},
	{"sign plus one", "bring a +1", "bring a 1", false, false},
	{"sign equals", "x = 5", "x 5", false, false},
	{"sign hash", "the channel is #general", "the channel is general", false, false},
	{"sign euro pound", "it costs €20", "it costs £20", false, false},
	{"sign at handle", "her handle is @mira", "her handle is mira", false, false},
	{"sign ampersand", "tom & jerry", "tom jerry", false, false},
	{"sign star rating", "the hotel has ★★★★", "the hotel has ★★★", false, false},
	{"date slash", "the party is on 3/4", "the party is on 3.4", false, false},
	{"date day month", "born 4 may", "born 4 may 1990", false, false},
	{"date iso", "due 2026-05-04", "due 2026-05-05", false, false},
	{"version dots", "cyan needs go 1.26", "cyan needs go 1.2.6", false, false},
	{"version v", "the api is v2", "the api is v3", false, false},
	{"negation never", "bob drinks coffee", "bob never drinks coffee", false, false},
	{"range dash", "the trip takes 3-5 days", "the trip takes 35 days", false, false},
	{"range en dash", "pages 3–5", "pages 35", false, false},
	{"range tilde", "3~5 people", "35 people", false, false},
	{"zh range", "需要3~5天", "需要3-5天", false, false},
	{"zh yuan sign", "花了¥50", "花了$50", false, false},
	{"ja wave dash range", "会議は3〜5時", "会議は35時", false, false},
	{"ja plus", "東京はUTC+9", "東京はUTC-9", false, false},
	// Signs written the same, punctuation and width aside, are the same.
	{"sign same utc", "My timezone is UTC+8.", "my timezone is utc+8", true, false},
	{"sign same full width", "the ticket costs ＄50", "The ticket costs $50!", true, false},
	{"sign same quotes", "the password is \"hunter2\"", "the password is hunter2", true, false},
	{"sign same yen width", "花了￥50", "花了¥50。", true, false},
	{"sign same decimal", "the dose is 2.5 mg", "The dose is 2.5 mg.", true, false},
}

// candidateID finds the first item id the remember step was shown.
var candidateID = regexp.MustCompile(`"id":\s*"(w\d+)"`)

// scriptedRemember are the two models of the table: one that says "the
// same" every time (naming the first item it was shown, or w1), and one
// that says "add" every time with a wording of its own that is not the
// text (the tool must keep the text, not the wording).
var scriptedRemember = map[string]func(llmtest.Request) llmtest.Reply{
	"same": func(req llmtest.Request) llmtest.Reply {
		id := "w1"
		for _, m := range req.Messages {
			if g := candidateID.FindStringSubmatch(m.Content); g != nil {
				id = g[1]
				break
			}
		}
		return llmtest.Reply{Text: fmt.Sprintf(`{"action": "strengthen", "kind": "note", "content": "the same", "id": %q}`, id)}
	},
	"add": func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "a new fact"}`}
	},
}

// TestRememberTable remembers each pair's two texts, in both orders,
// against a model that always says "same" and one that always says
// "add": no pair that differs is merged (both texts are items, word for
// word), and a pair that is truly the same is strengthened without the
// model being asked.
func TestRememberTable(t *testing.T) {
	if n := len(rememberPairs); n < 60 {
		t.Fatalf("the table has %d pairs; it needs at least 60", n)
	}
	type tally struct{ same, differs, strengthened, kept, mergedWrongly, keptSame int }
	counts := map[string]*tally{}
	for model, reply := range scriptedRemember {
		counts[model] = &tally{}
		rig := scripttest.New(t, scripttest.Options{})
		rig.Fake.SetDefault(reply)
		// One workspace for the whole table; each run is a conversation
		// of its own, which sees only its own items.
		m, err := Open(Options{Store: memStore(t), Config: testConfig(), Natural: rig.Lib, AgentName: func() string { return "青蓝" }})
		if err != nil {
			t.Fatal(err)
		}
		run := 0
		for _, p := range rememberPairs {
			for i, order := range [][2]string{{p.held, p.text}, {p.text, p.held}} {
				same := p.same && !(p.oneWay && i == 1)
				name := fmt.Sprintf("%s/%s/%q then %q", model, p.name, order[0], order[1])
				run++
				channel := fmt.Sprintf("run-%d", run)
				ctx := context.Background()
				if _, err := rememberIn(m, ctx, channel, order[0]); err != nil {
					t.Fatalf("%s: first: %v", name, err)
				}
				asked := len(rig.Named(ScriptRemember))
				out, err := rememberIn(m, ctx, channel, order[1])
				if err != nil {
					t.Fatalf("%s: second: %v", name, err)
				}
				var items []ItemView
				for _, it := range m.Items(true) {
					if it.Origin.Channel == channel {
						items = append(items, it)
					}
				}
				c := counts[model]
				if same {
					c.same++
				} else {
					c.differs++
				}
				switch {
				case len(items) == 1:
					c.strengthened++
				default:
					c.kept++
				}
				if same {
					if len(items) != 1 || !strings.Contains(out, "strengthened") || len(rig.Named(ScriptRemember)) != asked {
						c.keptSame++
						t.Errorf("%s: the same fact was not strengthened without asking: %q, %d items", name, out, len(items))
					}
					continue
				}
				if len(items) != 2 {
					c.mergedWrongly++
					t.Errorf("%s: a different fact was merged: %q", name, out)
					continue
				}
				for i, want := range order {
					if got := items[i].Content; got != strings.TrimSpace(want) {
						t.Errorf("%s: item %d holds %q, want the text %q", name, i, got, want)
					}
				}
			}
		}
	}
	for model, c := range counts {
		t.Logf("model %q: %d same and %d differing runs (pairs × 2 orders); %d strengthened, %d kept apart; merged wrongly %d, same not strengthened %d",
			model, c.same, c.differs, c.strengthened, c.kept, c.mergedWrongly, c.keptSame)
	}
}

// TestRememberCodenames is the issue's own case: "codename 1" … "codename
// 6" are six items, whatever the model says.
func TestRememberCodenames(t *testing.T) {
	for model, reply := range scriptedRemember {
		t.Run(model, func(t *testing.T) {
			rig := scripttest.New(t, scripttest.Options{})
			rig.Fake.SetDefault(reply)
			m, err := Open(Options{Store: memStore(t), Config: testConfig(), Natural: rig.Lib})
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 6; i++ {
				if _, err := rememberText(m, context.Background(), fmt.Sprintf("codename %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			items := m.Items(true)
			if len(items) != 6 {
				t.Fatalf("%d items, want 6", len(items))
			}
			for i, it := range items {
				if want := fmt.Sprintf("codename %d", i+1); it.Content != want {
					t.Errorf("item %d = %q, want %q", i, it.Content, want)
				}
			}
		})
	}
}

func rememberText(m *Memory, ctx context.Context, text string) (string, error) {
	return rememberIn(m, ctx, "home", text)
}

func rememberIn(m *Memory, ctx context.Context, channel, text string) (string, error) {
	args, _ := json.Marshal(map[string]string{"text": text})
	return call(m, ctx, "remember", channel, "", string(args))
}

// Active GC's compression keeps every number of an item: a shorter form
// that drops one is refused, and the item leaves the workspace whole.
func TestCompressionKeepsNumbers(t *testing.T) {
	rig := scripttest.New(t, scripttest.Options{})
	m, err := Open(Options{Store: memStore(t), Config: testConfig(), Natural: rig.Lib})
	if err != nil {
		t.Fatal(err)
	}
	const fact = "the dentist appointment is on friday the 27th at 4 pm in room 12, bring the insurance card"
	it, err := m.Add(KindNote, fact, private)
	if err != nil {
		t.Fatal(err)
	}
	m.cfg.Budget = 5
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"summary": "dentist friday, room 12"}`})
	events, err := m.ActiveGC(context.Background(), Viewer{Channel: "home"})
	if err != nil || len(events) != 1 || events[0].Action != "evicted" || !strings.Contains(events[0].Reason, "left out 27th, 4") {
		t.Fatalf("active GC = %+v, %v", events, err)
	}
	v, _ := m.Get(it.ID)
	if v.Content != fact || v.InWorkspace {
		t.Fatalf("after GC: %+v", v.Item)
	}
	// Remembered again, it is strengthened and back, whole.
	if out, err := rememberText(m, context.Background(), fact); err != nil || !strings.Contains(out, "strengthened") {
		t.Fatalf("remember again = %q, %v", out, err)
	}
	if v, _ := m.Get(it.ID); !v.InWorkspace || v.Content != fact {
		t.Fatalf("not back whole: %+v", v.Item)
	}
	// A shorter form that keeps every number is taken; the original stays.
	m.cfg.Budget = 5
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"summary": "dentist fri 27th 4 pm, room 12"}`})
	if events, err := m.ActiveGC(context.Background(), Viewer{Channel: "home"}); err != nil || len(events) != 1 || events[0].Action != "compressed" {
		t.Fatalf("active GC = %+v, %v", events, err)
	}
	if v, _ := m.Get(it.ID); v.Content != "dentist fri 27th 4 pm, room 12" || v.Original != fact {
		t.Fatalf("compressed: %+v", v.Item)
	}
	// The full text still counts as what the item says.
	if out, err := rememberText(m, context.Background(), fact); err != nil || !strings.Contains(out, "already remembered as "+it.ID) {
		t.Fatalf("remember the original = %q, %v", out, err)
	}
}

// FuzzSaysTheSame: any text says itself (when it has a token), a text
// with one more token is never the same, and nothing panics.
func FuzzSaysTheSame(f *testing.F) {
	for _, p := range rememberPairs {
		f.Add(p.held, p.text)
	}
	f.Fuzz(func(t *testing.T, held, text string) {
		_ = saysTheSame(held, text)
		_ = keepsTheWords(held, text, knownWords(held))
		if len(factTokens(text)) > 0 && !keepsTheWords(text, text, nil) {
			t.Fatalf("%q does not keep its own words", text)
		}
		if len(factTokens(text)) > 0 && !saysTheSame(text, text) {
			t.Fatalf("%q does not say itself", text)
		}
		if more := text + " 7"; saysTheSame(text, more) && !strings.ContainsAny(text, ".!?;。！？；\n") {
			t.Fatalf("%q says %q", text, more)
		}
	})
}

// The remember step's wording is kept only when it says the text's words
// in order and adds or removes nothing but pronouns, articles and
// particles, or puts a name the conversation spoke in a pronoun's place:
// swaps, negations, additions and dropped words keep the user's text.
func TestRememberKeepsTheWordsTheStepDrops(t *testing.T) {
	for _, tc := range []struct {
		conversation, text, wording, want string
	}{
		// Tidied: kept.
		{"bob: I brewed some green tea", "he likes green tea", "bob likes green tea", "bob likes green tea"},
		{"alice: 我回来了", "我喜欢喝茶", "alice喜欢喝茶", "alice喜欢喝茶"},
		{"alice: ただいま", "私はお茶が好き", "aliceはお茶が好き", "aliceはお茶が好き"},
		{"", "the meeting is in room a.", "meeting is in room a", "meeting is in room a"},
		{"bob: hi", "my code is 1234", "bob's code is 1234", "bob's code is 1234"},
		// Changed: the text stays.
		{"", "he likes green tea", "bob likes green tea", "he likes green tea"},
		{"", "go with plan a", "go with the plan", "go with plan a"},
		{"", "dentist on friday at 4 pm", "dentist on friday", "dentist on friday at 4 pm"},
		{"", "bob's code is 1234", "bob code 1234", "bob's code is 1234"},
		{"", "我家有4只猫", "我家有猫", "我家有4只猫"},
		{"", "alice owes bob 5 dollars", "bob owes alice 5 dollars", "alice owes bob 5 dollars"},
		{"", "grace is allergic to peanuts", "grace is not allergic to peanuts", "grace is allergic to peanuts"},
		{"", "grace is not allergic to peanuts", "grace is allergic to peanuts", "grace is not allergic to peanuts"},
		{"", "4 may", "4 may 1990", "4 may"},
		{"", "the party is on friday", "the big party is on friday", "the party is on friday"},
		{"bob: it was 5", "he owes 5 dollars", "bob owes 6 dollars", "he owes 5 dollars"},
		{"nobody: hi", "he likes tea", "nobody likes tea", "he likes tea"},
		{"", "他对花生过敏", "他对花生不过敏", "他对花生过敏"},
		{"", "张三欠李四100元", "李四欠张三100元", "张三欠李四100元"},
		{"", "the ticket costs $50", "the ticket costs ¥50", "the ticket costs $50"},
	} {
		nat := &fakeNatural{answers: map[string]string{"remember": fmt.Sprintf(`{"action": "add", "kind": "note", "content": %q}`, tc.wording)}}
		st := memStore(t)
		if tc.conversation != "" {
			who, said, _ := strings.Cut(tc.conversation, ": ")
			if err := st.Append(time.Now(), &store.Message{Channel: "home", Role: store.RoleUser, User: who, Text: said}); err != nil {
				t.Fatal(err)
			}
		}
		m := open(t, st, testConfig(), nat)
		out, err := rememberText(m, context.Background(), tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := m.Get("w1"); v.Content != tc.want {
			t.Errorf("%q worded %q: kept %q, want %q (%s)", tc.text, tc.wording, v.Content, tc.want, out)
		}
	}
}

// A file answer names a path the text gives; the text is its summary. One
// that names no such path keeps the text as a note.
func TestRememberFileNamesAPathOfTheText(t *testing.T) {
	const text = "the report is in /home/me/report.pdf, due friday"
	for _, tc := range []struct {
		answer, kind, content, summary string
	}{
		{`{"action": "add", "kind": "file", "content": "/home/me/report.pdf"}`, "file", "/home/me/report.pdf", text},
		{`{"action": "add", "kind": "file", "content": "the report is in /home/me/report.pdf, due friday"}`, "note", text, ""},
		{`{"action": "add", "kind": "file", "content": "/home/me/other.pdf"}`, "note", text, ""},
		{`{"action": "add", "kind": "file", "content": "report"}`, "note", text, ""},
	} {
		nat := &fakeNatural{answers: map[string]string{"remember": tc.answer}}
		m := open(t, memStore(t), testConfig(), nat)
		out, err := rememberText(m, context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := m.Get("w1")
		if string(v.Kind) != tc.kind || v.Content != tc.content || v.Summary != tc.summary {
			t.Errorf("answer %s: kept %s %q - %q, want %s %q - %q (%s)", tc.answer, v.Kind, v.Content, v.Summary, tc.kind, tc.content, tc.summary, out)
		}
	}
}

// A changed fact keeps its history: "the dentist moved to 4 pm" supersedes
// "dentist at 3 pm" when the step says so and the words confirm it; the
// workspace shows the current value with what it was, the old item stays
// (out of the workspace, with the time it stopped holding), and nothing is
// deleted. A "supersede" the words do not confirm keeps both as they are.
func TestRememberSupersedes(t *testing.T) {
	for _, tc := range []struct {
		held, text string
		confirmed  bool
	}{
		{"dentist at 3 pm", "the dentist moved to 4 pm", true},
		{"dentist appointment on friday at 3 pm", "dentist appointment on friday at 4 pm", true},
		{"会议在周五下午3点", "会议改到周五下午4点", true},
		{"歯医者は金曜日の15時", "歯医者は金曜日の16時", true},
		{"bob's number is 555-1234", "carol's number is 555-9999", false},
		{"bob lives in paris", "bob lives in lyon", false},
		{"dentist at 3 pm", "the dentist is not at 4 pm", false},
		{"dentist at 3 pm", "the dentist", false},
		{"grace is allergic to peanuts", "grace is allergic to 2 peanuts", false},
	} {
		nat := &fakeNatural{answers: map[string]string{"remember": `{"action": "supersede", "kind": "note", "content": "", "id": "w1"}`}}
		m := open(t, memStore(t), testConfig(), nat)
		if _, err := m.Add(KindNote, tc.held, Origin{Channel: "home", Kind: "private"}); err != nil {
			t.Fatal(err)
		}
		out, err := rememberText(m, context.Background(), tc.text)
		if err != nil {
			t.Fatal(err)
		}
		old, _ := m.Get("w1")
		cur, _ := m.Get("w2")
		if cur.Item == nil || cur.Content != tc.text || !cur.InWorkspace {
			t.Fatalf("%q → %q: the new fact is not held whole: %+v (%s)", tc.held, tc.text, cur.Item, out)
		}
		if len(m.Items(true)) != 2 {
			t.Fatalf("%q → %q: %d items, want both kept", tc.held, tc.text, len(m.Items(true)))
		}
		section, _ := m.WorkspaceSection(Viewer{Channel: "home", Private: true}, 1000)
		if !tc.confirmed {
			if old.Until != nil || cur.Supersedes != "" || !old.InWorkspace || strings.Contains(section, "(was") {
				t.Errorf("%q → %q: superseded without the words' confirmation: %+v (%s)", tc.held, tc.text, old.Item, out)
			}
			continue
		}
		if old.Until == nil || old.SupersededBy != "w2" || old.InWorkspace || old.Content != tc.held || cur.Supersedes != "w1" {
			t.Errorf("%q → %q: old %+v, new %+v (%s)", tc.held, tc.text, old.Item, cur.Item, out)
		}
		if want := "(was " + tc.held + ", until 2026-11-22 00:00)"; !strings.Contains(section, want) || strings.Contains(section, "[w1]") {
			t.Errorf("%q → %q: the workspace shows %q, want the current value with %q", tc.held, tc.text, section, want)
		}
		if h, err := m.History("w2"); err != nil || len(h) != 2 || h[1].Content != tc.held {
			t.Errorf("%q → %q: history = %+v, %v", tc.held, tc.text, h, err)
		}
		// The old value remembered again is a fact of its own, not the
		// superseded item brought back.
		if out, _ := rememberText(m, context.Background(), tc.held); strings.Contains(out, "already remembered as w1") {
			t.Errorf("%q again: %s", tc.held, out)
		}
	}
}
