package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/router"
)

func textOf(o Outgoing) string {
	var b strings.Builder
	for _, p := range o.Parts {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func TestSplitPrefersParagraphsThenSentencesThenWords(t *testing.T) {
	utf16 := Limit{Max: 40, Units: func(r rune) int {
		if r >= 0x10000 {
			return 2
		}
		return 1
	}}
	tests := []struct {
		name string
		in   string
		l    Limit
		want []string
	}{
		{"fits", "short", Limit{Max: 40}, []string{"short"}},
		{"paragraphs", "first paragraph is here.\n\nsecond one is here too, longer.", Limit{Max: 40},
			[]string{"first paragraph is here.", "second one is here too, longer."}},
		{"sentences", "One sentence goes here. Another sentence follows it. And a third.", Limit{Max: 40},
			[]string{"One sentence goes here.", "Another sentence follows it.", "And a third."}},
		{"cjk sentences", "这是第一句话，很长很长很长。这是第二句话，也很长很长。第三句。", Limit{Max: 16},
			[]string{"这是第一句话，很长很长很长。", "这是第二句话，也很长很长。", "第三句。"}},
		{"words", "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj", Limit{Max: 20},
			[]string{"aaaa bbbb cccc dddd", "eeee ffff gggg hhhh", "iiii jjjj"}},
		{"no boundary", strings.Repeat("x", 25), Limit{Max: 10}, []string{"xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"}},
		{"utf16 surrogates", strings.Repeat("😀", 30), utf16, []string{strings.Repeat("😀", 20), strings.Repeat("😀", 10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range split(Outgoing{Parts: []OutPart{{Kind: PartText, Text: tt.in}}}, tt.l) {
				if n := tt.l.size(p); n > tt.l.Max {
					t.Errorf("a piece of %d units, over %d: %q", n, tt.l.Max, textOf(p))
				}
				got = append(got, textOf(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("split = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitKeepsEveryWordInOrderAndTheReplyFirst(t *testing.T) {
	var words []string
	for i := range 2000 {
		words = append(words, fmt.Sprintf("w%d", i))
		if i%37 == 36 {
			words[len(words)-1] += "."
		}
		if i%211 == 210 {
			words[len(words)-1] += "\n\n"
		}
	}
	in := Outgoing{Parts: []OutPart{{Kind: PartReply, MessageID: "9"}, {Kind: PartText, Text: strings.Join(words, " ")},
		{Kind: PartMention, UserID: "5", Text: "bob"}, {Kind: PartText, Text: " bye"}}}
	pieces := split(in, Limit{Max: 500})
	if len(pieces) < 3 {
		t.Fatalf("%d pieces", len(pieces))
	}
	var all []string
	for i, p := range pieces {
		if (p.Parts[0].Kind == PartReply) != (i == 0) {
			t.Errorf("piece %d: reply part where it should not be (%v)", i, p.Parts[0])
		}
		if n := (Limit{Max: 500}).size(p); n > 500 {
			t.Errorf("piece %d holds %d", i, n)
		}
		all = append(all, strings.Fields(textOf(p))...)
	}
	want := append(strings.Fields(strings.Join(words, " ")), "bye")
	if !slices.Equal(all, want) {
		t.Errorf("words lost or reordered: %d of %d", len(all), len(want))
	}
	last := pieces[len(pieces)-1]
	if !slices.ContainsFunc(last.Parts, func(p OutPart) bool { return p.Kind == PartMention && p.UserID == "5" }) {
		t.Errorf("the mention is not in the last piece: %v", last.Parts)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("one. two.\n\nthree four", 7)
	f.Add("这是第一句话。第二句", 3)
	f.Add(strings.Repeat("😀a ", 20), 5)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 5000 || !utf8.ValidString(s) || strings.TrimSpace(s) == "" {
			return
		}
		l := Limit{Max: max}
		in := Outgoing{Parts: []OutPart{{Kind: PartText, Text: s}}}
		var joined strings.Builder
		for _, p := range split(in, l) {
			if l.size(p) > max && !(len(p.Parts) == 1 && utf8.RuneCountInString(p.Parts[0].Text) == 1) {
				t.Fatalf("piece of %d over %d", l.size(p), max)
			}
			joined.WriteString(textOf(p))
		}
		if strip(joined.String()) != strip(s) {
			t.Fatalf("text changed: %q → %q", s, joined.String())
		}
	})
}

// strip is s without whitespace (the cuts drop it).
func strip(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// limitedAdapter is the fake platform with a message limit, refusing
// longer messages as too long (as the Bot API does with "Bad Request:
// message is too long"); refuseOver makes it refuse from a lower length
// than it announces (a platform counting differently).
type limitedAdapter struct {
	*fakeAdapter
	max        int
	refuseOver int
	mu         sync.Mutex
	refused    int
	failAt     int // the send number that fails once with a temporary error
	failEvery  int // every failEvery-th send is rate limited
	sends      int
}

func (a *limitedAdapter) Limit() Limit { return Limit{Max: a.max} }

func (a *limitedAdapter) Send(ctx context.Context, c Chat, m Outgoing) (string, error) {
	a.mu.Lock()
	a.sends++
	n := a.sends
	if a.failEvery > 0 && n%a.failEvery == 0 {
		a.mu.Unlock()
		return "", &SendError{Temporary: true, RetryAfter: 3 * time.Second, Msg: "Too Many Requests: retry after 3"}
	}
	if a.failAt > 0 && n == a.failAt {
		a.failAt = 0
		a.mu.Unlock()
		return "", &SendError{Temporary: true, Msg: "timeout"}
	}
	if (Limit{}).size(m) > a.refuseOver {
		a.refused++
		a.mu.Unlock()
		return "", &SendError{TooLong: true, Msg: "Bad Request: message is too long"}
	}
	a.mu.Unlock()
	return a.fakeAdapter.Send(ctx, c, m)
}

func longAnswer(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Sentence number %d says something. ", i)
		if i%9 == 8 {
			b.WriteString("\n\n")
		}
	}
	return strings.TrimSpace(b.String())
}

func sentText(sent []string) string {
	var b strings.Builder
	for _, s := range sent {
		_, text, _ := strings.Cut(s, " ")
		b.WriteString(text)
	}
	return b.String()
}

func TestALongReplyArrivesWholeInOrderInPieces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ad *limitedAdapter
		r := newRig(t, func(o *Options) {
			ad = &limitedAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), max: 4096, refuseOver: 4096}
			o.Adapter = ad
		})
		defer r.stop()
		answer := longAnswer(10000)
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: answer})
		time.Sleep(time.Minute)
		synctest.Wait()
		sent := r.ad.sentSoFar()
		if len(sent) != 3 {
			t.Fatalf("%d messages sent, want 3", len(sent))
		}
		if strip(sentText(sent)) != strip(answer) {
			t.Error("the pieces do not make the answer")
		}
		if ad.refused != 0 || r.out.pending() != 0 || len(r.out.dropped) != 0 {
			t.Errorf("refused %d, pending %d, dropped %v", ad.refused, r.out.pending(), r.out.dropped)
		}
	})
}

func TestTooLongIsSplitAgainNeverDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ad *limitedAdapter
		r := newRig(t, func(o *Options) {
			ad = &limitedAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), max: 4096, refuseOver: 1500}
			o.Adapter = ad
		})
		defer r.stop()
		answer := longAnswer(5000)
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: answer})
		time.Sleep(time.Minute)
		synctest.Wait()
		sent := r.ad.sentSoFar()
		if strip(sentText(sent)) != strip(answer) {
			t.Errorf("the pieces do not make the answer: %d sent", len(sent))
		}
		if ad.refused == 0 || len(r.out.dropped) != 0 {
			t.Errorf("refused %d, dropped %v", ad.refused, r.out.dropped)
		}
		_, _, notes := r.agent.snapshot()
		if len(notes) != 0 {
			t.Errorf("notes: %q", notes)
		}
	})
}

func TestAPieceSentBeforeAFailureIsNotSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ad *limitedAdapter
		r := newRig(t, func(o *Options) {
			ad = &limitedAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), max: 1000, refuseOver: 1000, failAt: 3}
			o.Adapter = ad
		})
		defer r.stop()
		answer := longAnswer(4000)
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: answer})
		time.Sleep(time.Minute)
		synctest.Wait()
		sent := r.ad.sentSoFar()
		if strip(sentText(sent)) != strip(answer) {
			t.Errorf("the pieces do not make the answer once each: %d sent", len(sent))
		}
	})
}

func TestAnUndeliverableReplyIsNotedAndListed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) {
			o.Adapter = &limitedAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), max: 4096, refuseOver: 10}
		})
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: longAnswer(300)})
		time.Sleep(time.Minute)
		synctest.Wait()
		_, _, notes := r.agent.snapshot()
		if len(notes) != 1 || !strings.Contains(notes[0], "could not be delivered") {
			t.Errorf("notes = %q", notes)
		}
		st := r.b.Status()
		if len(st.Undelivered) != 1 || st.Undelivered[0].Channel != "t:private:7" || !strings.Contains(st.Undelivered[0].Reason, "too long") {
			t.Errorf("status undelivered = %+v", st.Undelivered)
		}
	})
}

func TestTopicChannels(t *testing.T) {
	tests := []struct {
		channel string
		chat    Chat
		ok      bool
	}{
		{"tg:group:-100123", Chat{Kind: Group, ID: "-100123"}, true},
		{"tg:group:-100123:42", Chat{Kind: Group, ID: "-100123", Thread: "42"}, true},
		{"tg:private:7:42", Chat{}, false},
		{"tg:group:-100123:", Chat{}, false},
		{"tg:group:1:2:3", Chat{}, false},
	}
	for _, tt := range tests {
		c, ok := ParseChannel("tg", tt.channel)
		if ok != tt.ok || c != tt.chat {
			t.Errorf("ParseChannel(%q) = %+v %v", tt.channel, c, ok)
		}
		if ok && c.Channel("tg") != tt.channel {
			t.Errorf("%q round-trips to %q", tt.channel, c.Channel("tg"))
		}
	}
}

func TestARateLimitedLongReplyIsNotGivenUpWhileItProgresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) {
			o.Adapter = &limitedAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), max: 500, refuseOver: 500, failEvery: 2}
		})
		defer r.stop()
		answer := longAnswer(6000) // 13 pieces or so, every other send refused
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: answer})
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if sent := r.ad.sentSoFar(); strip(sentText(sent)) != strip(answer) || len(sent) < maxTries+2 {
			t.Errorf("%d pieces sent; the reply does not arrive whole", len(sent))
		}
		if len(r.out.dropped) != 0 {
			t.Errorf("dropped: %v", r.out.dropped)
		}
	})
}

func BenchmarkSplit10000(b *testing.B) {
	in := Outgoing{Parts: []OutPart{{Kind: PartText, Text: longAnswer(10000)}}}
	tg := Limit{Max: 4096, Units: func(r rune) int {
		if r >= 0x10000 {
			return 2
		}
		return 1
	}}
	b.ReportAllocs()
	for b.Loop() {
		if len(split(in, tg)) != 3 {
			b.Fatal("not 3 pieces")
		}
	}
}

// slowAdapter holds each send until release, and reports whether the
// send's context was cut.
type slowAdapter struct {
	*fakeAdapter
	release chan struct{}
	cut     chan bool
}

func (a *slowAdapter) Send(ctx context.Context, c Chat, m Outgoing) (string, error) {
	select {
	case <-a.release:
	case <-ctx.Done():
		a.cut <- true
		return "", ctx.Err()
	}
	a.cut <- false
	return a.fakeAdapter.Send(ctx, c, m)
}

func TestASendInFlightWhenTheBridgeStopsIsFinishedAndKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := newMemSent(16)
		ad := &slowAdapter{release: make(chan struct{}), cut: make(chan bool, 1)}
		r := newRig(t, func(o *Options) {
			ad.fakeAdapter = o.Adapter.(*fakeAdapter)
			o.Adapter, o.Sent = ad, sent
		})
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: "in flight"})
		synctest.Wait() // the send has begun
		r.cancel()      // the daemon stops
		time.Sleep(time.Second)
		close(ad.release) // the platform answers
		if err := <-r.done; err != nil {
			t.Fatal(err)
		}
		if <-ad.cut {
			t.Fatal("the stop cut the send in flight")
		}
		if _, ok := sent.Sent("k1"); !ok {
			t.Error("the finished send was not kept in the sent log; the restart would send it again")
		}
	})
}
