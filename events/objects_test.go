package events

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestExtractionAddsObjectsBlocksAndLines(t *testing.T) {
	t0 := day(2026, 4, 1, 20, 0)
	f := newFixture(t, t0, testConfig())
	f.w.extract = func(in ExtractInput) Extraction {
		return Extraction{
			Facts: []Fact{{Object: "alice", Kind: "person", Text: "is a nurse"}, {Object: "alice", Kind: "person", Text: "lives in Osaka"}, {Object: "Mochi", Kind: "thing", Text: "alice's cat"}},
			Lines: []NewLine{{A: "alice", B: "青蓝", Text: "alice trusts me with her schedule", Strength: 0.5}},
		}
	}
	f.say(t, "c", "alice", "I'm a nurse in Osaka; my cat Mochi says hi", t0)
	f.process(t, t0.Add(time.Hour))
	ev := f.events(t, "c", LevelEvent)[0]
	objs, err := f.log.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 || objs[0].ID != SelfID || objs[0].Name != "青蓝" || objs[1].Name != "alice" || objs[2].Name != "Mochi" || objs[2].Kind != KindThing {
		t.Fatalf("objects %+v", objs)
	}
	alice := objs[1]
	if len(alice.Blocks) != 2 || alice.Blocks[0].Text != "is a nurse" || alice.Blocks[0].Provenance.Event != ev.ID || alice.Blocks[0].Provenance.By != "extract" {
		t.Fatalf("alice %+v", alice)
	}
	rels, _ := f.log.Relations(t0.Add(time.Hour))
	if len(rels) != 1 || len(rels[0].Lines) != 1 {
		t.Fatalf("relations %+v", rels)
	}
	line := rels[0].Lines[0]
	if line.Source.Event != ev.ID || !line.Valid || line.State.W != 0.3 { // 0.5·(1−0) capped at 0.3
		t.Fatalf("line %+v", line)
	}

	// The next topic sees what is known and contradicts the line.
	f.w.extract = func(in ExtractInput) Extraction {
		if len(in.Known) != 1 || in.Known[0].ID != line.ID || len(in.Objects) != 2 {
			t.Errorf("extraction input: objects %+v known %+v", in.Objects, in.Known)
		}
		return Extraction{
			Facts:      []Fact{{Object: "alice", Text: "is a nurse"}}, // known: not added twice
			Contradict: []string{line.ID},
		}
	}
	f.say(t, "c", "alice", "I keep my own schedule now", t0.Add(24*time.Hour))
	f.process(t, t0.Add(25*time.Hour))
	rels, _ = f.log.Relations(t0.Add(25 * time.Hour))
	got := rels[0].Lines[0]
	if got.Valid || got.InvalidSince == nil || !got.InvalidSince.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("contradicted line %+v: must be kept, marked invalid with the time", got)
	}
	objs, _ = f.log.Objects()
	if len(objs[1].Blocks) != 2 {
		t.Fatalf("a known fact was added again: %+v", objs[1].Blocks)
	}
}

func TestPeopleHereInTheSection(t *testing.T) {
	t0 := day(2026, 4, 2, 20, 0)
	f := newFixture(t, t0, testConfig())
	f.w.extract = func(in ExtractInput) Extraction {
		return Extraction{
			Facts: []Fact{{Object: "bob", Text: "plays the cello"}, {Object: "青蓝", Kind: "agent", Text: "likes rainy days"}},
			Lines: []NewLine{{A: "bob", B: "青蓝", Text: "we practise duets", Strength: 0.2}},
		}
	}
	f.say(t, "g", "bob", "cello time", t0)
	f.process(t, t0.Add(time.Hour))
	f.say(t, "g", "bob", "again", t0.Add(2*time.Hour))
	sec, err := f.log.Section(context.Background(), SectionQuery{Channel: "g", Speaker: "bob", Now: t0.Add(2 * time.Hour)}, 800, words)
	if err != nil {
		t.Fatal(err)
	}
	want := "Who is here:\n青蓝 (me): likes rainy days\nbob: plays the cello\n  bob & me: we practise duets (0.20)"
	if !strings.HasSuffix(sec.Body, want) {
		t.Fatalf("section:\n%s\nwant it to end with:\n%s", sec.Body, want)
	}
}

func TestTheoryTool(t *testing.T) {
	t0 := day(2026, 4, 3, 10, 0)
	f := newFixture(t, t0, testConfig())
	msg := f.say(t, "c", "amy", "sleep beats coffee", t0)
	tool := f.log.Tools()[1]
	run := func(args string) (string, error) {
		f.clk.Set(t0)
		res, err := tool.Run(context.Background(), callAs(ownerReader("c"), args))
		return res.OutputText, err
	}
	out, err := run(`{"op":"create","title":"rest","article":"line one\nline two","related_info":[{"kind":"message","ref":"` + msg.ID + `"}]}`)
	if err != nil || !strings.Contains(out, "version 1") {
		t.Fatalf("create: %q %v", out, err)
	}
	ts, _ := f.log.Theories()
	id := ts[0].ID
	for _, bad := range []string{
		`{"op":"create","title":"x","article":"y","related_info":[{"kind":"message","ref":"nope"}]}`,
		`{"op":"create","title":"x","article":"y","related_info":[{"kind":"theory_line","ref":"` + id + `:3"}]}`,
		`{"op":"create","title":"x","article":"y","related_info":[{"kind":"url","ref":"a"}]}`,
		`{"op":"create","title":"","article":"y"}`,
		`{"op":"update","article":"y"}`,
		`{"op":"delete"}`,
	} {
		if _, err := run(bad); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	out, err = run(`{"op":"update","id":"` + id + `","article":"a better version","related_info":[{"kind":"theory_line","ref":"` + id + `:2"},{"kind":"file","ref":"notes/sleep.md"}]}`)
	if err != nil || !strings.Contains(out, "version 2") {
		t.Fatalf("update: %q %v", out, err)
	}
	th, _ := f.log.Theory(id)
	if th.Article != "a better version" || th.Title != "rest" || len(th.RelatedInfo) != 2 || th.RelatedInfo[0].Ref != id+":2" {
		t.Fatalf("after update %+v", th)
	}
	if out, _ := run(`{"op":"list"}`); !strings.Contains(out, id) {
		t.Fatalf("list %q", out)
	}
	if out, _ := run(`{"op":"get","id":"` + id + `"}`); !strings.Contains(out, "a better version") || strings.Contains(out, "line one") {
		t.Fatalf("get %q: only the current version exists", out)
	}
}
